import { BrowserPaths } from 'service-protocol';
import { isNonEmptyString } from './checks.js';
import { request } from './http.js';
import * as login from './login.js';
import * as mfa from './mfa.js';
import { failure, guard, lacksSuccess, notInitialized, unexpected } from './results.js';
import { DEFAULT_BASE_URL, httpConfig, type LoginSession, type PendingLogin, type ServiceClientDeps } from './session.js';
import type {
  AuthenticateOptions,
  AuthenticationResult,
  FailureResult,
  InitializationResult,
  InitiateMfaInput,
  InitiateMfaResult,
  InitOptions,
  VerifyDeviceInput,
  VerifyDeviceResult,
  VerifyEmailOtpResult,
  VerifyMfaInput,
  VerifyMfaResult,
} from './types.js';

export { DEFAULT_BASE_URL, DEFAULT_CRYPTO_VERSION, DEFAULT_TIMEOUT_MS, type ServiceClientDeps } from './session.js';

/**
 * The browser client: device-aware passwordless login against service-idp.
 * No method ever throws or rejects; failures come back as a `status` (see the README table).
 *
 * @example
 * ```ts
 * const client = new ServiceClient();
 * await client.init('pk_live_...', 'https://id.example.com');
 * const result = await client.authenticate('ann@example.com', { rememberDevice: true });
 * if (result.status === 'SUCCESS') await sendToBackend(result.code);
 * ```
 */
export class ServiceClient {
  readonly #deps: ServiceClientDeps;
  #session: LoginSession | undefined;
  readonly #pending = new Map<string, PendingLogin>();

  /** Reads no global until a method runs, so constructing one is safe anywhere. */
  constructor(deps: ServiceClientDeps = {}) {
    this.#deps = { ...deps };
  }

  /**
   * Checks the publishable key against the service and prepares the client. Call it first.
   *
   * @example
   * ```ts
   * const r = await ServiceInitializer.init('pk_...', 'https://id.example.com', { timeoutMs: 10000 });
   * if (!r.success) console.error(r.status, r.message);
   * ```
   */
  init(apiKey: string, baseUrl: string = DEFAULT_BASE_URL, options: InitOptions = {}): Promise<InitializationResult> {
    return guard(async (): Promise<InitializationResult | FailureResult> => {
      this.#session = undefined;
      this.#pending.clear();
      const config = httpConfig(this.#deps, apiKey, baseUrl ?? DEFAULT_BASE_URL, options);
      if (config.status) return config;
      const { body, failure: failed, httpStatus } = await request(config.http, BrowserPaths.client);
      if (failed) {
        // Whatever the body says, 401 and 403 on this call mean the key was refused.
        const refused = (httpStatus === 401 || httpStatus === 403) && failed.status === 'SERVICE_ERROR';
        return refused ? failure('INVALID_API_KEY', 'The API key was refused') : failed;
      }
      const { clientId, name } = body;
      if (!isNonEmptyString(clientId)) return unexpected();
      this.#session = { ...config, clientId, iss: body.issuer as string, deps: this.#deps, pending: this.#pending };
      return { status: 'INITIALIZED', message: `Initialized for ${isNonEmptyString(name) ? name : clientId}`, success: true };
    }, lacksSuccess);
  }

  /**
   * Starts a login. A remembered device proves itself with its key and may get a code at once;
   * otherwise the service emails an OTP (OTP_NEEDED) or asks for MFA (MFA_REQUIRED).
   *
   * @example
   * ```ts
   * const r = await ServiceInitializer.authenticate('ann@example.com', { rememberDevice: true });
   * switch (r.status) {
   *   case 'SUCCESS': await sendToBackend(r.code); break;
   *   case 'OTP_NEEDED': showOtpForm(); break;
   *   case 'MFA_REQUIRED': await ServiceInitializer.initiateMfa({ userid, sessionId: r.sessionId }); break;
   *   default: showError(r.message);
   * }
   * ```
   */
  authenticate(userid: string, options: AuthenticateOptions = {}): Promise<AuthenticationResult> {
    return this.#run(login.authenticate, userid, options);
  }

  /**
   * Checks the 6-digit code the service emailed after OTP_NEEDED. Then call verifyDevice.
   *
   * @example
   * ```ts
   * const r = await ServiceInitializer.verifyEmailOtp({ userid: 'ann@example.com', otp: '123456' });
   * if (r.status === 'SUCCESS') await ServiceInitializer.verifyDevice({ userid: 'ann@example.com' });
   * ```
   */
  verifyEmailOtp(input: { userid: string; otp: string }): Promise<VerifyEmailOtpResult> {
    return this.#run(login.verifyEmailOtp, input);
  }

  /**
   * Finishes a new-device login after verifyEmailOtp. With authenticate's rememberDevice, it
   * registers a non-extractable device key, kept in IndexedDB once the login succeeds.
   *
   * - SUCCESS: `code` is the authorization code.
   * - MFA_ENROLLMENT_NEEDED: the client requires MFA and the user has none; call verifyDevice
   *   again with one of `methods` as `mfaMethod` (and `phoneNumber` for 'sms').
   * - FINALIZE_REGISTRATION_NEEDED: confirm the new method with verifyMfa (TOTP: show `otpauthUri`).
   * - MFA_REQUIRED: the user has MFA; call initiateMfa, then verifyMfa.
   *
   * @example
   * ```ts
   * let r = await ServiceInitializer.verifyDevice({ userid: 'ann@example.com' });
   * if (r.status === 'MFA_ENROLLMENT_NEEDED') {
   *   r = await ServiceInitializer.verifyDevice({ userid: 'ann@example.com', mfaMethod: 'sms', phoneNumber: '+1 415 555 0123' });
   * }
   * if (r.status === 'SUCCESS') await sendToBackend(r.code);
   * ```
   */
  verifyDevice(input: VerifyDeviceInput): Promise<VerifyDeviceResult> {
    return this.#run(login.verifyDevice, input);
  }

  /**
   * Starts the MFA step after MFA_REQUIRED (from authenticate or verifyDevice): the service
   * sends a code by the user's method (email or SMS; TOTP needs no send).
   *
   * @example
   * ```ts
   * const r = await ServiceInitializer.initiateMfa({ userid: 'ann@example.com', sessionId });
   * if (r.status === 'MFA_INITIATED') showOtpForm(r.method);
   * ```
   */
  initiateMfa(input: InitiateMfaInput): Promise<InitiateMfaResult> {
    return this.#run(mfa.initiateMfa, input);
  }

  /**
   * Checks the MFA code and returns the authorization code. The session is the one this client
   * remembered for `userid` (from authenticate, verifyDevice or initiateMfa) unless `sessionId`
   * is given. When the step finishes a new-device login with rememberDevice, the device key is
   * stored and `deviceRemembered` says so.
   *
   * @example
   * ```ts
   * const r = await ServiceInitializer.verifyMfa({ userid: 'ann@example.com', otp: '123456', remember_me: true });
   * if (r.status === 'SUCCESS') await sendToBackend(r.code);
   * else if (r.status === 'INVALID_OTP') showError(`${r.attemptsRemaining ?? 'Some'} attempts left`);
   * ```
   */
  verifyMfa(input: VerifyMfaInput): Promise<VerifyMfaResult> {
    // Its result has `success`: a failure gets `success: false`.
    return guard(() => this.#run(mfa.verifyMfa, input), lacksSuccess) as Promise<VerifyMfaResult>;
  }

  /** Runs an operation of an initialized client with `args` under guard (NOT_INITIALIZED otherwise). */
  #run<A extends unknown[], T>(operation: (session: LoginSession, ...args: A) => Promise<T>, ...args: A): Promise<T> {
    return guard(async () => (this.#session ? operation(this.#session, ...args) : notInitialized()));
  }
}
