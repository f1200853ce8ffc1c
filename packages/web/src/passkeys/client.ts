import { BrowserPaths } from 'service-protocol';
import { request } from '../http.js';
import { failure, guard, notInitialized, unexpected } from '../results.js';
import { DEFAULT_BASE_URL, httpConfig } from '../session.js';
import type { FailureResult, InitializationResult, InitOptions } from '../types.js';
import { addPasskey } from './add.js';
import { support } from './ceremony.js';
import { mfaCeremony } from './mfa.js';
import { signIn } from './sign-in.js';
import type {
  AddPasskeyResult,
  PasskeyFailureResult,
  PasskeyMfaInput,
  PasskeyMfaResult,
  PasskeySession,
  PasskeySignInOptions,
  PasskeySignInResult,
  PasskeySupport,
  ServicePasskeysDeps,
} from './types.js';

/** The results a passkey operation resolves with that are not failures (the others get `success: false`). */
const DONE: readonly string[] = ['SUCCESS', 'INITIALIZED', 'MFA_REQUIRED'];

/**
 * Passkeys against service-idp. Initialize it with the same key and base URL as the core
 * client: it finds the device key the core stored for a signed-in user (to register a passkey)
 * and signs in on its own.
 */
export class ServicePasskeys {
  readonly #deps: ServicePasskeysDeps;
  #session: PasskeySession | undefined;

  constructor(deps: ServicePasskeysDeps = {}) {
    this.#deps = { ...deps };
  }

  /**
   * Checks the publishable key, as the core init() does.
   *
   * @example
   * ```ts
   * await passkeys.init('pk_...', 'https://id.example.com');
   * ```
   */
  init(apiKey: string, baseUrl = DEFAULT_BASE_URL, options: InitOptions = {}): Promise<InitializationResult> {
    return this.#guard<InitializationResult>(async () => {
      this.#session = undefined;
      // Options that are not an object are left unread here, as they always were (the core refuses them).
      const config = httpConfig(this.#deps, apiKey, baseUrl, typeof options === 'object' ? options : undefined);
      if (config.status) return config;
      const { body, failure: failed, httpStatus } = await request(config.http, BrowserPaths.client);
      if (failed) return httpStatus === 401 || httpStatus === 403 ? failure('INVALID_API_KEY', 'The API key was refused') : failed;
      if (typeof body.clientId !== 'string') return unexpected();
      this.#session = { ...config, clientId: body.clientId, iss: body.issuer as string, deps: this.#deps };
      return { status: 'INITIALIZED', message: 'Initialized for passkeys', success: true };
    });
  }

  /**
   * What this browser offers: show "Sign in with a passkey" only when `passkeys` is true, and
   * start {@link ServicePasskeys.autofill} only when `conditionalUi` is.
   */
  support(): Promise<PasskeySupport> {
    return support(this.#deps);
  }

  /**
   * Registers a passkey for a user signed in on this browser (its remembered device proves it).
   * The passkey then appears in listDevices() with `kind: 'passkey'`.
   * Statuses: SUCCESS, PASSKEY_CANCELLED, PASSKEY_EXISTS, NO_AUTHENTICATOR, PASSKEY_NOT_SUPPORTED,
   * DEVICE_KEY_UNAVAILABLE (this browser is not signed in as `userid`), and the core's failures.
   *
   * @example
   * ```ts
   * const r = await passkeys.add({ userid: 'ann@example.com', name: 'Phone' });
   * ```
   */
  add(input: { userid: string; name?: string }): Promise<AddPasskeyResult> {
    return this.#run((session) => addPasskey(session, input));
  }

  /**
   * Signs in with a passkey: the browser shows the user's passkeys for this site, no address
   * needed. Ends like authenticate()'s SUCCESS, with an authorization code for the backend (or
   * MFA_REQUIRED when the application does not count a passkey as MFA: go on with the core's
   * initiateMfa and verifyMfa).
   *
   * @example
   * ```ts
   * const r = await passkeys.signIn();
   * if (r.status === 'SUCCESS') await sendToBackend(r.code);
   * else if (r.status === 'PASSKEY_CANCELLED') showEmailForm();
   * ```
   */
  signIn(options: PasskeySignInOptions = {}): Promise<PasskeySignInResult> {
    return this.#run((session) => signIn(session, options, undefined));
  }

  /**
   * Offers passkeys in the autofill of the page's address field (conditional UI). The field needs
   * `autocomplete="username webauthn"`. The promise settles when the user picks a passkey (as
   * signIn()), or with PASSKEY_CANCELLED when `signal` aborts it; PASSKEY_NOT_SUPPORTED where the
   * browser has no conditional UI.
   *
   * @example
   * ```ts
   * const controller = new AbortController();
   * passkeys.autofill({ signal: controller.signal }).then((r) => r.status === 'SUCCESS' && sendToBackend(r.code));
   * ```
   */
  autofill(options: PasskeySignInOptions = {}): Promise<PasskeySignInResult> {
    return this.#run((session) => signIn(session, options, 'conditional'));
  }

  /**
   * The MFA step with a passkey: after MFA_REQUIRED with `method: 'passkey'` (from the core's
   * authenticate or verifyDevice, or from signIn), the browser asks for one of the user's
   * passkeys, bound to that MFA session. Ends as the core verifyMfa does. Statuses: SUCCESS,
   * PASSKEY_REFUSED (an attempt counted), PASSKEY_CANCELLED, NO_AUTHENTICATOR,
   * PASSKEY_NOT_SUPPORTED, SESSION_EXPIRED, ACCOUNT_LOCKED, INVALID_REQUEST (no passkey of the
   * user works on this page: a recovery code, through the core verifyMfa, still does).
   *
   * @example
   * ```ts
   * if (r.status === 'MFA_REQUIRED' && r.method === 'passkey') {
   *   const v = await passkeys.verifyMfa({ userid, sessionId: r.sessionId, remember_me: true });
   *   if (v.status === 'SUCCESS') await sendToBackend(v.code);
   * }
   * ```
   */
  verifyMfa(input: PasskeyMfaInput): Promise<PasskeyMfaResult> {
    return this.#run((session) => mfaCeremony(session, input, false));
  }

  /**
   * Enrolls a passkey as the user's MFA method, at a new device's registration: after the core
   * verifyDevice({ userid, mfaMethod: 'passkey' }) answered FINALIZE_REGISTRATION_NEEDED, the
   * browser creates the passkey bound to that session. Ends as the core verifyMfa does at an
   * enrollment: a code, and the first recovery codes to show once. Statuses: SUCCESS,
   * PASSKEY_CANCELLED, PASSKEY_EXISTS, NO_AUTHENTICATOR, PASSKEY_NOT_SUPPORTED, PASSKEY_REFUSED,
   * SESSION_EXPIRED, and the core's failures.
   *
   * @example
   * ```ts
   * const r = await ServiceInitializer.verifyDevice({ userid, mfaMethod: 'passkey' });
   * if (r.status === 'FINALIZE_REGISTRATION_NEEDED' && r.method === 'passkey') {
   *   const e = await passkeys.enrollMfa({ userid, sessionId: r.sessionId });
   *   if (e.status === 'SUCCESS') { showOnce(e.recoveryCodes); await sendToBackend(e.code); }
   * }
   * ```
   */
  enrollMfa(input: PasskeyMfaInput): Promise<PasskeyMfaResult> {
    return this.#run((session) => mfaCeremony(session, input, true));
  }

  #run<T>(operation: (session: PasskeySession) => Promise<T | PasskeyFailureResult>): Promise<T> {
    return this.#guard<T>(() => (this.#session ? operation(this.#session) : Promise.resolve(notInitialized())));
  }

  /** Resolves only; a failure gets `success: false`, like the core's operations with a `success` field. */
  #guard<T>(operation: () => Promise<T | PasskeyFailureResult>): Promise<T> {
    return guard<T>(operation as () => Promise<T | FailureResult>, (result) => !DONE.includes((result as { status: string }).status));
  }
}
