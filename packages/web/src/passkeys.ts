/**
 * service-web/passkeys: passkeys (WebAuthn) beside the core library, in their own entry point so
 * that the core stays small. Register a passkey on a device the user is signed in on, sign in
 * with one (with or without an address), or offer them in the address field's autofill
 * (conditional UI). Same conventions as the core: no method throws, every result has a `status`.
 *
 * @example
 * ```ts
 * import { ServicePasskeys } from 'service-web/passkeys';
 * const passkeys = new ServicePasskeys();
 * await passkeys.init('pk_...', 'https://id.example.com');
 * const r = await passkeys.signIn();
 * if (r.status === 'SUCCESS') await sendToBackend(r.code);
 * ```
 *
 * @packageDocumentation
 */
import {
  BrowserPaths,
  CRYPTO_VERSIONS,
  type CryptoVersion,
  type DevicePublicJwk,
  isValidEmail,
  normalizeEmail,
  PASSKEY_REGISTER_OP,
  type PasskeyCreationOptionsJson,
  PasskeyPaths,
  type PasskeyRequestOptionsJson,
  PasskeyStatus,
  PKCE_CHALLENGE_PATTERN,
} from 'service-protocol';
import { createDeviceProof, exportDevicePublicJwk, generateDeviceKeyPair } from './device-proof.js';
import { createDeviceStore, deviceRecordKey } from './device-store.js';
import { failure, type HttpConfig, type HttpOutcome, reasonOf, request } from './http.js';
import type { FailureResult, FailureStatus, InitializationResult, InitOptions, MfaRequiredResult } from './types.js';
import { assertionJson, attestationJson, creationOptions, requestOptions } from './webauthn-json.js';

export { passkeyAttestationJson, passkeyCreationOptions } from './webauthn-json.js';
export { PasskeyStatus };

/** A failure of a passkey operation: the core's failure statuses and the passkey ones. */
export interface PasskeyFailureResult extends Omit<FailureResult, 'status'> {
  status: FailureStatus | PasskeyStatus;
}

/** Result of {@link ServicePasskeys.add}. */
export type AddPasskeyResult =
  | { status: 'SUCCESS'; message: string; success: true; deviceId: string; synced: boolean }
  | (PasskeyFailureResult & { success: false });

/**
 * Result of {@link ServicePasskeys.signIn}: a code for the backend, as authenticate's SUCCESS, or
 * the MFA step an application asks for, with the signed-in user's address (`userid`, which
 * initiateMfa and verifyMfa take: a sign-in without an address has no other way to know it).
 */
export type PasskeySignInResult =
  | { status: 'SUCCESS'; message: string; success: true; code: string }
  | (MfaRequiredResult & { userid: string })
  | (PasskeyFailureResult & { success: false });

/**
 * Result of {@link ServicePasskeys.verifyMfa} and {@link ServicePasskeys.enrollMfa}: the core
 * verifyMfa's shape (a code for the backend; `recoveryCodes` once, at the enrollment).
 */
export type PasskeyMfaResult =
  | {
      status: 'SUCCESS';
      message: string;
      success: true;
      code: string;
      deviceId?: string;
      /** A new device whose first step asked to remember it is now remembered (as the core verifyMfa's). */
      deviceRemembered?: boolean;
      recoveryCodes?: string[];
    }
  | (PasskeyFailureResult & { success: false });

/** Input of {@link ServicePasskeys.verifyMfa} and {@link ServicePasskeys.enrollMfa}. */
export interface PasskeyMfaInput {
  userid: string;
  /** The MFA session: MFA_REQUIRED's (verifyMfa) or FINALIZE_REGISTRATION_NEEDED's (enrollMfa). */
  sessionId: string;
  /** As the core verifyMfa's: this device skips MFA for a while. */
  remember_me?: boolean;
  /** enrollMfa only: the name shown in the device list. */
  name?: string;
}

/** Options of {@link ServicePasskeys.signIn}. */
export interface PasskeySignInOptions {
  /** When the page knows the address: the passkey must be this user's. */
  userid?: string;
  /** PKCE S256 challenge (RFC 7636), as authenticate() takes it. */
  code_challenge?: string;
  code_challenge_method?: string;
  /** Aborts a pending request (for example the autofill one when the user types an address instead). */
  signal?: AbortSignal;
}

/** What the browser offers; see {@link ServicePasskeys.support}. */
export interface PasskeySupport {
  /** WebAuthn is there (and this is a secure context). */
  passkeys: boolean;
  /** Passkeys can be offered in autofill (`mediation: 'conditional'`). */
  conditionalUi: boolean;
  /** A platform authenticator that verifies the user (Touch ID, Windows Hello, Android screen lock) is there. */
  platformAuthenticator: boolean;
}

/** Globals the passkey client uses; inject them for tests or non-browser runtimes. */
export interface ServicePasskeysDeps {
  fetch?: typeof fetch;
  indexedDB?: IDBFactory;
  crypto?: Crypto;
  credentials?: CredentialsContainer;
}

interface Session {
  http: HttpConfig;
  clientId: string;
  cryptoVersion: CryptoVersion;
}

type PublicKeyCredentialStatics = typeof PublicKeyCredential & { isConditionalMediationAvailable?: () => Promise<boolean> };

/**
 * Passkeys against service-idp. Initialize it with the same key and base URL as the core
 * client: it finds the device key the core stored for a signed-in user (to register a passkey)
 * and signs in on its own.
 */
export class ServicePasskeys {
  readonly #deps: ServicePasskeysDeps;
  #session: Session | undefined;

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
  init(apiKey: string, baseUrl = 'http://127.0.0.1:8080', options: InitOptions = {}): Promise<InitializationResult> {
    return guard<InitializationResult>(async (): Promise<InitializationResult | PasskeyFailureResult> => {
      this.#session = undefined;
      if (typeof apiKey !== 'string' || apiKey.length === 0) return failure('INVALID_API_KEY', 'An API key is required');
      const base = normalizeBaseUrl(baseUrl);
      if (!base) return failure('INVALID_REQUEST', 'baseUrl must be an http(s) URL');
      const cryptoVersion = (options?.cryptoVersion ?? 'v1') as CryptoVersion;
      if (!CRYPTO_VERSIONS.includes(cryptoVersion)) return failure('INVALID_REQUEST', `Unknown cryptoVersion ${String(cryptoVersion)}`);
      const timeoutMs = options?.timeoutMs ?? 15_000;
      if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) return failure('INVALID_REQUEST', 'timeoutMs must be a positive number');
      const authorizationRequest = options?.authorizationRequest;
      if (authorizationRequest !== undefined && (typeof authorizationRequest !== 'string' || authorizationRequest.length === 0))
        return failure('INVALID_REQUEST', 'Bad authorizationRequest');
      const fetchFn = this.#deps.fetch ?? (typeof fetch === 'function' ? fetch.bind(globalThis) : undefined);
      if (!fetchFn) return failure('NETWORK_ERROR', 'fetch is not available');
      const http: HttpConfig = { baseUrl: base, apiKey, timeoutMs, fetch: fetchFn, authorizationRequest };
      const { body, failure: failed, httpStatus } = await request(http, BrowserPaths.client);
      if (failed) return httpStatus === 401 || httpStatus === 403 ? failure('INVALID_API_KEY', 'The API key was refused') : failed;
      if (typeof body.clientId !== 'string') return failure('SERVICE_ERROR', 'No client id in the answer');
      this.#session = { http, clientId: body.clientId, cryptoVersion };
      return { status: 'INITIALIZED', message: 'Initialized for passkeys', success: true };
    });
  }

  /**
   * What this browser offers: show "Sign in with a passkey" only when `passkeys` is true, and
   * start {@link ServicePasskeys.autofill} only when `conditionalUi` is.
   */
  async support(): Promise<PasskeySupport> {
    const statics = (globalThis as { PublicKeyCredential?: PublicKeyCredentialStatics }).PublicKeyCredential;
    // WebAuthn's relying party id is a domain: a page served from an IP address cannot use passkeys.
    const host = (globalThis as { location?: Location }).location?.hostname ?? '';
    const passkeys = !!statics && !!this.#credentials() && !/^[\d.]+$|:|^\[/.test(host);
    const ask = async (check: (() => Promise<boolean>) | undefined) => {
      try {
        return passkeys && !!check && (await check.call(statics));
      } catch {
        return false;
      }
    };
    return {
      passkeys,
      conditionalUi: await ask(statics?.isConditionalMediationAvailable),
      platformAuthenticator: await ask(statics?.isUserVerifyingPlatformAuthenticatorAvailable),
    };
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
    return this.#run<AddPasskeyResult>(async (session): Promise<AddPasskeyResult | PasskeyFailureResult> => {
      if (typeof input?.userid !== 'string' || !isValidEmail(input.userid)) return failure('INVALID_EMAIL', 'Enter a valid email address');
      const credentials = this.#credentials();
      if (!credentials) return notSupported();
      const email = normalizeEmail(input.userid);
      const proof = await this.#deviceProof(session, email);
      if (proof.status) return proof;
      const asked = await request(session.http, PasskeyPaths.registrationOptions, {
        userid: email,
        cryptoVersion: session.cryptoVersion,
        deviceProof: proof.jws,
      });
      if (asked.failure) return passkeyFailure(asked);
      let credential: Credential | null;
      try {
        credential = await credentials.create({ publicKey: creationOptions(asked.body.options as PasskeyCreationOptionsJson) });
      } catch (error) {
        return ceremonyFailure(error, true);
      }
      if (!credential) return fail(PasskeyStatus.PASSKEY_CANCELLED, 'No passkey was created');
      const added = await request(session.http, PasskeyPaths.register, {
        credential: attestationJson(credential as PublicKeyCredential),
        name: input.name,
      });
      if (added.failure) return passkeyFailure(added);
      const { deviceId, synced, message } = added.body;
      return { status: 'SUCCESS', message: String(message), success: true, deviceId: String(deviceId), synced: synced === true };
    });
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
    return this.#signIn(options, undefined);
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
    return this.#signIn(options, 'conditional');
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
    return this.#mfaCeremony(input, false);
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
    return this.#mfaCeremony(input, true);
  }

  /** The MFA step's ceremony: an assertion, or at an enrollment a new passkey, bound to the session; then the code. */
  #mfaCeremony(input: PasskeyMfaInput, enrolling: boolean): Promise<PasskeyMfaResult> {
    return this.#run<PasskeyMfaResult>(async (session): Promise<PasskeyMfaResult | PasskeyFailureResult> => {
      const checked = checkMfaInput(input);
      if (checked) return checked;
      const credentials = this.#credentials();
      if (!credentials) return notSupported();
      const body = { userid: normalizeEmail(input.userid), sessionId: input.sessionId };
      const asked = await request(session.http, enrolling ? PasskeyPaths.mfaEnrollmentOptions : PasskeyPaths.mfaOptions, body);
      if (asked.failure) return passkeyFailure(asked);
      let credential: Credential | null;
      try {
        credential = enrolling
          ? await credentials.create({ publicKey: creationOptions(asked.body.options as PasskeyCreationOptionsJson) })
          : await credentials.get({ publicKey: requestOptions(asked.body.options as PasskeyRequestOptionsJson) });
      } catch (error) {
        return ceremonyFailure(error, enrolling);
      }
      if (!credential) return fail(PasskeyStatus.PASSKEY_CANCELLED, enrolling ? 'No passkey was created' : 'No passkey was chosen');
      const key = await this.#newDeviceKey();
      const made = credential as PublicKeyCredential;
      const answer = await request(session.http, enrolling ? PasskeyPaths.mfaEnroll : PasskeyPaths.mfaVerify, {
        ...body,
        ...(enrolling ? { credential: attestationJson(made), name: input.name } : { credential: assertionJson(made) }),
        rememberMe: input.remember_me === true,
        devicePublicKey: key?.publicJwk,
      });
      return answer.failure ? passkeyFailure(answer) : this.#mfaSuccess(session, body.userid, answer.body, key);
    });
  }

  #signIn(options: PasskeySignInOptions, mediation: 'conditional' | undefined): Promise<PasskeySignInResult> {
    return this.#run<PasskeySignInResult>(async (session): Promise<PasskeySignInResult | PasskeyFailureResult> => {
      const { userid, code_challenge: codeChallenge, code_challenge_method: method, signal } = options ?? {};
      if (userid !== undefined && (typeof userid !== 'string' || !isValidEmail(userid)))
        return failure('INVALID_EMAIL', 'Enter a valid email address');
      if (
        codeChallenge === undefined
          ? method !== undefined
          : typeof codeChallenge !== 'string' || !PKCE_CHALLENGE_PATTERN.test(codeChallenge) || (method ?? 'S256') !== 'S256'
      )
        return failure('INVALID_REQUEST', 'code_challenge must be an S256 challenge');
      const credentials = this.#credentials();
      if (!credentials || (mediation && !(await this.support()).conditionalUi)) return notSupported();
      const asked = await request(session.http, PasskeyPaths.authenticationOptions, {});
      if (asked.failure) return passkeyFailure(asked);
      let credential: Credential | null;
      try {
        credential = await credentials.get({
          publicKey: requestOptions(asked.body.options as PasskeyRequestOptionsJson),
          ...(mediation ? { mediation } : {}),
          ...(signal ? { signal } : {}),
        });
      } catch (error) {
        return ceremonyFailure(error, false);
      }
      if (!credential) return fail(PasskeyStatus.PASSKEY_CANCELLED, 'No passkey was chosen');
      const answer = await request(session.http, PasskeyPaths.authenticate, {
        credential: assertionJson(credential as PublicKeyCredential),
        userid: userid === undefined ? undefined : normalizeEmail(userid),
        codeChallenge,
        codeChallengeMethod: codeChallenge && 'S256',
      });
      if (answer.failure) return passkeyFailure(answer);
      const { status, message, code, sessionId, method: mfaMethod, userid: user } = answer.body;
      if (status === 'SUCCESS' && typeof code === 'string') return { status: 'SUCCESS', message: String(message), success: true, code };
      if (status === 'MFA_REQUIRED' && typeof sessionId === 'string' && typeof user === 'string')
        return { status: 'MFA_REQUIRED', message: String(message), sessionId, method: mfaMethod, userid: user } as PasskeySignInResult;
      return failure('SERVICE_ERROR', 'Unexpected response from the service');
    });
  }

  /**
   * A device key for a new device finishing its sign-in here: the core library holds the one it
   * sent to verifyDevice, so this step sends its own, and keeps it when the service registers the
   * device (a deviceId comes back only when that step asked to remember the device).
   */
  async #newDeviceKey(): Promise<{ keyPair: CryptoKeyPair; publicJwk: DevicePublicJwk } | undefined> {
    const crypto = this.#deps.crypto ?? globalThis.crypto;
    try {
      const keyPair = await generateDeviceKeyPair(crypto);
      return { keyPair, publicJwk: await exportDevicePublicJwk(crypto, keyPair.publicKey) };
    } catch {
      return undefined;
    }
  }

  /** A SUCCESS of an MFA step: the device key kept under the new deviceId, as the core verifyMfa does. */
  async #mfaSuccess(
    session: Session,
    email: string,
    body: Record<string, unknown>,
    key: { keyPair: CryptoKeyPair } | undefined,
  ): Promise<PasskeyMfaResult | PasskeyFailureResult> {
    const result = mfaSuccess(body);
    if (result.status !== 'SUCCESS' || !('deviceId' in result) || !result.deviceId || !key) return result;
    const factory = this.#deps.indexedDB ?? (globalThis as { indexedDB?: IDBFactory }).indexedDB;
    try {
      if (!factory) throw new Error('no IndexedDB');
      await createDeviceStore(factory, session.http.timeoutMs).put(deviceRecordKey(session.http.baseUrl, session.clientId, email), {
        deviceId: result.deviceId,
        keyPair: key.keyPair,
        cryptoVersion: session.cryptoVersion,
        createdAt: Date.now(),
      });
      return { ...result, deviceRemembered: true };
    } catch (error) {
      return { ...result, message: `${result.message} (this device could not be remembered: ${reasonOf(error)})`, deviceRemembered: false };
    }
  }

  #credentials(): CredentialsContainer | undefined {
    const credentials = this.#deps.credentials ?? (globalThis as { navigator?: Navigator }).navigator?.credentials;
    const hasWebAuthn = this.#deps.credentials || (globalThis as { PublicKeyCredential?: unknown }).PublicKeyCredential;
    return credentials && hasWebAuthn ? credentials : undefined;
  }

  /** A device proof for PASSKEY_REGISTER_OP with the key the core client remembered for this user. */
  async #deviceProof(session: Session, email: string): Promise<{ jws: string; status?: undefined } | FailureResult> {
    const untrusted = failure('DEVICE_KEY_UNAVAILABLE', 'Sign in on this browser first: a passkey is added from a signed-in device');
    const crypto = this.#deps.crypto ?? globalThis.crypto;
    const factory = this.#deps.indexedDB ?? (globalThis as { indexedDB?: IDBFactory }).indexedDB;
    try {
      const store = factory && createDeviceStore(factory, session.http.timeoutMs);
      const record = await store?.get(deviceRecordKey(session.http.baseUrl, session.clientId, email));
      if (!record || !crypto?.subtle) return untrusted;
      const challenge = await request(session.http, BrowserPaths.deviceChallenge, {});
      if (challenge.failure) return challenge.failure;
      const nonce = challenge.body.challenge;
      if (typeof nonce !== 'string') return failure('SERVICE_ERROR', 'Unexpected response from the service');
      const jws = await createDeviceProof(crypto, record.keyPair.privateKey, {
        deviceId: record.deviceId,
        cryptoVersion: session.cryptoVersion,
        sub: email,
        nonce,
        op: PASSKEY_REGISTER_OP,
      });
      return { jws };
    } catch {
      return untrusted;
    }
  }

  #run<T>(operation: (session: Session) => Promise<T | PasskeyFailureResult>): Promise<T> {
    return guard(() =>
      this.#session ? operation(this.#session) : Promise.resolve(failure('NOT_INITIALIZED', 'Call init() first')),
    ) as Promise<T>;
  }
}

/** Resolves only; a failure gets `success: false`, like the core's operations with a `success` field. */
async function guard<T>(operation: () => Promise<T | PasskeyFailureResult>): Promise<T> {
  let result: T | PasskeyFailureResult;
  try {
    result = await operation();
  } catch (error) {
    result = failure('SERVICE_ERROR', `Unexpected error: ${reasonOf(error)}`);
  }
  const done = ['SUCCESS', 'INITIALIZED', 'MFA_REQUIRED'].includes((result as { status: string }).status);
  return (done ? result : { ...result, success: false }) as T;
}

function passkeyFailure(outcome: HttpOutcome): PasskeyFailureResult {
  const failed = outcome.failure as FailureResult;
  // ERR_PASSKEY_INVALID is the only browser-route error that is a 401 with INVALID_REQUEST (protocol errors.ts).
  if (outcome.httpStatus === 401 && failed.status === 'INVALID_REQUEST') return { ...failed, status: PasskeyStatus.PASSKEY_REFUSED };
  return failed;
}

function checkMfaInput(input: PasskeyMfaInput): PasskeyFailureResult | undefined {
  if (typeof input?.userid !== 'string' || !isValidEmail(input.userid)) return failure('INVALID_EMAIL', 'Enter a valid email address');
  if (typeof input.sessionId !== 'string' || input.sessionId.length === 0) return failure('INVALID_REQUEST', 'sessionId is required');
  return undefined;
}

function mfaSuccess(body: Record<string, unknown>): PasskeyMfaResult | PasskeyFailureResult {
  const { code, message, deviceId, recoveryCodes } = body;
  if (body.status !== 'SUCCESS' || typeof code !== 'string') return failure('SERVICE_ERROR', 'Unexpected response from the service');
  return {
    status: 'SUCCESS',
    message: String(message),
    success: true,
    code,
    ...(typeof deviceId === 'string' ? { deviceId } : {}),
    ...(Array.isArray(recoveryCodes) ? { recoveryCodes: recoveryCodes.map(String) } : {}),
  };
}

function fail(status: FailureStatus | PasskeyStatus, message: string): PasskeyFailureResult {
  return { status, message };
}

function notSupported(): PasskeyFailureResult {
  return { status: PasskeyStatus.PASSKEY_NOT_SUPPORTED, message: 'This browser does not support passkeys here' };
}

/** WebAuthn L3 5.1.3 / 5.1.4 name the DOMExceptions a ceremony ends with. */
function ceremonyFailure(error: unknown, creating: boolean): PasskeyFailureResult {
  const name = (error as { name?: unknown })?.name;
  const message = reasonOf(error);
  switch (name) {
    case 'NotAllowedError':
    case 'AbortError':
      return { status: PasskeyStatus.PASSKEY_CANCELLED, message: `Cancelled or timed out: ${message}` };
    case 'InvalidStateError':
      return creating
        ? { status: PasskeyStatus.PASSKEY_EXISTS, message: 'This authenticator already holds a passkey for this account' }
        : { status: PasskeyStatus.NO_AUTHENTICATOR, message };
    case 'NotSupportedError':
    case 'ConstraintError':
      return { status: PasskeyStatus.NO_AUTHENTICATOR, message: `No authenticator can do this: ${message}` };
    case 'SecurityError':
      return { status: PasskeyStatus.PASSKEY_NOT_SUPPORTED, message: `Not allowed on this page: ${message}` };
    default:
      return { status: 'SERVICE_ERROR', message: `The browser failed: ${message}` };
  }
}

/** As the core client normalizes it, so that the device record keys agree. */
function normalizeBaseUrl(value: unknown): string | undefined {
  try {
    const url = new URL(typeof value === 'string' ? value : '?');
    if (/^https?:$/.test(url.protocol)) return (url.origin + url.pathname).replace(/\/+$/, '');
  } catch {}
}
