import {
  BrowserPaths,
  CRYPTO_VERSIONS,
  type CryptoVersion,
  type DeviceOp,
  DeviceOps,
  type DevicePublicJwk,
  isValidEmail,
  MfaMethod,
  normalizeEmail,
  normalizePhone,
  OTP_PATTERN,
  PKCE_CHALLENGE_PATTERN,
  RECOVERY_CODE_PATTERN,
} from 'service-protocol';
import { createDeviceProof, exportDevicePublicJwk, generateDeviceKeyPair } from './device-proof.js';
import { createDeviceStore, type DeviceStore, deviceRecordKey } from './device-store.js';
import { failure, type HttpConfig, isObject, reasonOf, request } from './http.js';
import type {
  AuthenticateOptions,
  AuthenticationResult,
  DeviceChangeResult,
  DeviceInfo,
  FailureResult,
  FinalizeRegistrationResult,
  InitializationResult,
  InitiateMfaInput,
  InitiateMfaResult,
  InitOptions,
  ListDevicesResult,
  VerifyDeviceInput,
  VerifyDeviceResult,
  VerifyEmailOtpResult,
  VerifyMfaInput,
  VerifyMfaResult,
} from './types.js';

/**
 * Base URL used when init() gets none: a service-idp started locally with its defaults
 * (`service-idp start` listens on 127.0.0.1:8080). Pass your deployment's URL in production.
 */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';
/** Request timeout when init() gets none, as the spec states. */
export const DEFAULT_TIMEOUT_MS = 15_000;
/** Device-proof scheme when init() gets none, as the spec states. */
export const DEFAULT_CRYPTO_VERSION: CryptoVersion = 'v1';

/** Globals the client uses; inject them for tests or non-browser runtimes. */
export interface ServiceClientDeps {
  indexedDB?: IDBFactory;
  fetch?: typeof fetch;
  crypto?: Crypto;
}

interface Session {
  http: HttpConfig;
  clientId: string;
  cryptoVersion: CryptoVersion;
}

/** Login state kept in memory between the steps of one flow, per normalized email. */
interface PendingLogin {
  deviceToken?: string;
  sessionId?: string;
  /** authenticate's rememberDevice. */
  remember?: boolean;
  /** A stored device record whose proof the service did not accept. */
  stale?: boolean;
  /**
   * Set when verifyDevice handed the login to MFA (FINALIZE_REGISTRATION_NEEDED or MFA_REQUIRED):
   * the device key the service registered (if any) stays in memory until verifyMfa succeeds.
   */
  registration?: { key?: NewDeviceKey };
}

/** A device key pair made for a registration, or why none could be made. */
type NewDeviceKey =
  | { keyPair: CryptoKeyPair; publicJwk: DevicePublicJwk; problem?: undefined }
  | { keyPair?: undefined; publicJwk?: undefined; problem: string };

/** A device proof signed for one request (`status` only tells it from a FailureResult). */
interface Proof {
  jws: string;
  deviceId: string;
  status?: undefined;
}

const MFA_METHODS: readonly string[] = Object.values(MfaMethod);
/** Failures of the challenge step that make the authenticate call pointless too. */
const FATAL_CHALLENGE_STATUSES: readonly string[] = ['NETWORK_ERROR', 'TIMEOUT', 'RATE_LIMITED', 'ACCOUNT_LOCKED', 'INVALID_API_KEY'];

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
  #session: Session | undefined;
  #pending = new Map<string, PendingLogin>();

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
      if (typeof apiKey !== 'string' || apiKey.length === 0) return failure('INVALID_API_KEY', 'An API key is required');
      const base = normalizeBaseUrl(baseUrl ?? DEFAULT_BASE_URL);
      if (base === undefined) return invalid('baseUrl must be an http(s) URL');
      const opts: InitOptions = options ?? {};
      if (typeof opts !== 'object') return invalid('options must be an object');
      const cryptoVersion = opts.cryptoVersion ?? DEFAULT_CRYPTO_VERSION;
      if (!(CRYPTO_VERSIONS as readonly string[]).includes(cryptoVersion)) return invalid(`Unknown cryptoVersion ${String(cryptoVersion)}`);
      const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) return invalid('timeoutMs must be a positive number');
      const { authorizationRequest } = opts;
      if (authorizationRequest !== undefined && !isNonEmptyString(authorizationRequest)) return invalid('Bad authorizationRequest');
      const fetchFn = this.#deps.fetch ?? (typeof fetch === 'function' ? fetch.bind(globalThis) : undefined);
      if (fetchFn === undefined) return failure('NETWORK_ERROR', 'fetch is not available');

      const http: HttpConfig = { baseUrl: base, apiKey, timeoutMs, fetch: fetchFn, authorizationRequest };
      const { body, failure: failed, httpStatus } = await request(http, BrowserPaths.client);
      if (failed) {
        // Whatever the body says, 401 and 403 on this call mean the key was refused.
        const refused = (httpStatus === 401 || httpStatus === 403) && failed.status === 'SERVICE_ERROR';
        return refused ? failure('INVALID_API_KEY', 'The API key was refused') : failed;
      }
      const { clientId, name } = body;
      if (!isNonEmptyString(clientId)) return failure('SERVICE_ERROR', 'No client id in the answer');
      this.#session = { http, clientId, cryptoVersion: cryptoVersion as CryptoVersion };
      return { status: 'INITIALIZED', message: `Initialized for ${isNonEmptyString(name) ? name : clientId}`, success: true };
    }, true);
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
    return this.#run(async (session): Promise<AuthenticationResult> => {
      if (!isEmail(userid)) return invalidEmail();
      const opts: AuthenticateOptions = options ?? {};
      if (!isObject(opts)) return invalid('options must be an object');
      const { rememberDevice, code_challenge: codeChallenge, code_challenge_method: method } = opts;
      if (rememberDevice !== undefined && typeof rememberDevice !== 'boolean') return invalid('rememberDevice must be a boolean');
      if (
        codeChallenge === undefined
          ? method !== undefined
          : typeof codeChallenge !== 'string' || !PKCE_CHALLENGE_PATTERN.test(codeChallenge) || (method ?? 'S256') !== 'S256'
      ) {
        // RFC 9700 2.1.1: S256 only.
        return invalid('code_challenge must be an S256 challenge');
      }

      const email = normalizeEmail(userid);
      this.#pending.delete(email);
      const proof = await this.#deviceProof(session, email);
      if (proof?.status) return proof;

      const { body, failure: failed } = await request(session.http, BrowserPaths.authenticate, {
        userid: email,
        cryptoVersion: session.cryptoVersion,
        rememberDevice,
        codeChallenge,
        codeChallengeMethod: codeChallenge && 'S256',
        deviceProof: proof?.jws,
      });
      if (failed) return failed;
      const { status, code, deviceToken, sessionId, method: mfaMethod } = body;
      const message = messageOf(body);
      const hasCode = typeof code === 'string';
      if (status === 'SUCCESS' && hasCode) return { status, message, success: true, code };
      if (status === 'OTP_NEEDED' && typeof deviceToken === 'string') {
        // The service refused this device (revoked or expired): forget its key now.
        if (body.deviceRefused === true) await this.#forgetDevice(session, email);
        this.#pending.set(email, { deviceToken, remember: rememberDevice, stale: !!proof });
        return { status, message, deviceToken, ...(hasCode && { code }) };
      }
      if (status === 'MFA_REQUIRED' && isNonEmptyString(sessionId) && isMfaMethod(mfaMethod)) {
        this.#pending.set(email, { sessionId });
        return { status, message, sessionId, method: mfaMethod };
      }
      return unexpected();
    });
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
    return this.#run(async (session): Promise<VerifyEmailOtpResult> => {
      if (!isObject(input) || typeof input.userid !== 'string' || typeof input.otp !== 'string') {
        return invalid('userid and otp must be strings');
      }
      const email = normalizeEmail(input.userid);
      const deviceToken = this.#pending.get(email)?.deviceToken;
      if (deviceToken === undefined) return noPendingLogin();
      // A malformed code is refused here, so it costs none of the service's guesses.
      if (!OTP_PATTERN.test(input.otp)) return badOtp();

      const { body, failure: failed } = await request(session.http, BrowserPaths.verifyEmailOtp, {
        userid: email,
        deviceToken,
        otp: input.otp,
      });
      if (failed) return this.#forgetIfExpired(email, failed);
      if (body.status !== 'SUCCESS') return unexpected();
      return { status: 'SUCCESS', message: messageOf(body), mfaEnrolled: body.mfaEnrolled === true };
    });
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
    return this.#run(async (session): Promise<VerifyDeviceResult> => {
      if (!isObject(input) || typeof input.userid !== 'string') return invalid('userid must be a string');
      const { mfaMethod } = input;
      if (mfaMethod !== undefined && !isMfaMethod(mfaMethod)) return invalid(`mfaMethod must be one of ${MFA_METHODS.join(', ')}`);
      const sms = mfaMethod === MfaMethod.SMS;
      const phoneNumber = normalizePhone(input.phoneNumber);
      if (input.phoneNumber !== undefined ? !sms : sms) return invalid("phoneNumber goes with mfaMethod 'sms', and only with it");
      if (sms && phoneNumber === undefined) return invalid('phoneNumber must be E.164, such as +14155550123');
      const email = normalizeEmail(input.userid);
      const pending = this.#pending.get(email);
      if (pending?.deviceToken === undefined) return noPendingLogin();

      // A fresh pair on every call: a pair sent with an earlier answer (MFA_ENROLLMENT_NEEDED) is dropped.
      const key = pending.remember ? await this.#newDeviceKey() : undefined;
      const { body, failure: failed } = await request(session.http, BrowserPaths.verifyDevice, {
        userid: email,
        deviceToken: pending.deviceToken,
        devicePublicKey: key?.publicJwk,
        mfaMethod,
        phoneNumber,
      });
      if (failed) return this.#forgetIfExpired(email, failed);
      const { status, code, sessionId, method, methods } = body;
      const message = messageOf(body);
      if ((status === 'SUCCESS' || status === 'DEVICE_REGISTERED') && typeof code === 'string') {
        this.#pending.delete(email);
        const kept = await this.#keepDeviceKey(session, email, pending.stale, key, body.deviceId);
        return { status, message: withNote(message, kept.problem), code, deviceRemembered: kept.deviceRemembered, ...codesOf(body) };
      }
      const offered = Array.isArray(methods) ? methods.filter(isMfaMethod) : [];
      if (status === 'MFA_ENROLLMENT_NEEDED' && offered.length > 0) return { status, message, methods: offered };
      if ((status === 'FINALIZE_REGISTRATION_NEEDED' || status === 'MFA_REQUIRED') && isNonEmptyString(sessionId) && isMfaMethod(method)) {
        // The service holds the public key now; the pair waits in memory until verifyMfa succeeds.
        this.#pending.set(email, { ...pending, sessionId, registration: { key } });
        if (status === 'MFA_REQUIRED') return { status, message, sessionId, method };
        const result: FinalizeRegistrationResult = { status, message, method, sessionId };
        if (typeof body.otpauthUri === 'string') result.otpauthUri = body.otpauthUri;
        if (typeof body.secret === 'string') result.secret = body.secret;
        return result;
      }
      return unexpected();
    });
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
    return this.#run(async (session): Promise<InitiateMfaResult> => {
      if (!isObject(input) || typeof input.userid !== 'string' || !isNonEmptyString(input.sessionId)) {
        return invalid('userid and sessionId must be strings');
      }
      const email = normalizeEmail(input.userid);
      const sessionId = input.sessionId;
      const { body, failure: failed } = await request(session.http, BrowserPaths.mfaInitiate, { userid: email, sessionId });
      if (failed) return this.#forgetIfExpired(email, failed);
      const { status, method } = body;
      if (status !== 'MFA_INITIATED' || !isMfaMethod(method)) return unexpected();
      // Keep the login state (and a waiting device key) when it belongs to this session.
      if (this.#pending.get(email)?.sessionId !== sessionId) this.#pending.set(email, { sessionId });
      return { status, message: messageOf(body), method };
    });
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
    return this.#run(async (session): Promise<VerifyMfaResult | FailureResult> => {
      if (
        !isObject(input) ||
        typeof input.userid !== 'string' ||
        typeof input.otp !== 'string' ||
        (input.remember_me !== undefined && typeof input.remember_me !== 'boolean') ||
        (input.sessionId !== undefined && !isNonEmptyString(input.sessionId))
      ) {
        return invalid('verifyMfa takes { userid, otp, remember_me?, sessionId? }');
      }
      const email = normalizeEmail(input.userid);
      const pending = this.#pending.get(email);
      const sessionId = input.sessionId ?? pending?.sessionId;
      if (sessionId === undefined) return noPendingLogin();
      if (!OTP_PATTERN.test(input.otp) && !RECOVERY_CODE_PATTERN.test(input.otp)) return badOtp();
      const { body, failure: failed } = await request(session.http, BrowserPaths.mfaVerify, {
        userid: email,
        sessionId,
        otp: input.otp,
        rememberMe: input.remember_me,
        regenerateRecoveryCodes: input.regenerateRecoveryCodes,
      });
      if (failed) return this.#forgetIfExpired(email, failed);
      const { status, code } = body;
      if (status !== 'SUCCESS' || typeof code !== 'string') return unexpected();
      this.#pending.delete(email);
      const message = messageOf(body);
      const registration = pending?.sessionId === sessionId ? pending.registration : undefined;
      if (!registration) return { status, message, success: true, code, ...codesOf(body) };
      const kept = await this.#keepDeviceKey(session, email, pending?.stale, registration.key, body.deviceId);
      return {
        status,
        message: withNote(message, kept.problem),
        success: true,
        code,
        deviceRemembered: kept.deviceRemembered,
        ...codesOf(body),
      };
    }, true);
  }

  /**
   * Lists the user's trusted devices for this application (name, browser, OS, created, last
   * used, `current` for this browser). Needs this browser to be one of them: it proves itself
   * with its device key. A refused device (revoked, expired) forgets its key and gets
   * DEVICE_KEY_UNAVAILABLE; the next authenticate then asks for the email OTP.
   *
   * @example
   * ```ts
   * const r = await ServiceInitializer.listDevices('ann@example.com');
   * if (r.status === 'SUCCESS') for (const d of r.devices) console.log(d.name, d.current ? '(this device)' : '');
   * ```
   */
  listDevices(userid: string): Promise<ListDevicesResult> {
    return this.#device(userid, BrowserPaths.listDevices, DeviceOps.list) as Promise<ListDevicesResult>;
  }

  /**
   * Renames one of the user's devices (1 to 64 characters, no control characters; the service
   * checks, INVALID_REQUEST otherwise).
   *
   * @example
   * ```ts
   * await ServiceInitializer.renameDevice({ userid: 'ann@example.com', deviceId: d.id, name: 'Work laptop' });
   * ```
   */
  renameDevice(input: { userid: string; deviceId: string; name: string }): Promise<DeviceChangeResult> {
    return this.#device(input?.userid, BrowserPaths.renameDevice, DeviceOps.rename, { deviceId: input?.deviceId, name: input?.name });
  }

  /**
   * Revokes one of the user's devices: it must verify by email to sign in again. Revoking this
   * browser's own device also forgets its key here.
   *
   * @example
   * ```ts
   * const r = await ServiceInitializer.revokeDevice({ userid: 'ann@example.com', deviceId: lost.id });
   * ```
   */
  revokeDevice(input: { userid: string; deviceId: string }): Promise<DeviceChangeResult> {
    return this.#device(input?.userid, BrowserPaths.revokeDevice, DeviceOps.revoke, { deviceId: input?.deviceId });
  }

  /**
   * "Sign out everywhere else": revokes every device of the user for this application except
   * this browser. `revoked` says how many.
   *
   * @example
   * ```ts
   * const r = await ServiceInitializer.revokeOtherDevices('ann@example.com');
   * if (r.status === 'SUCCESS') alert(`${r.revoked} device(s) signed out`);
   * ```
   */
  revokeOtherDevices(userid: string): Promise<DeviceChangeResult> {
    return this.#device(userid, BrowserPaths.revokeOtherDevices, DeviceOps.revokeOthers);
  }

  /**
   * One device operation, proven by this browser's device key for `op`. The service validates
   * ids and names (before spending the proof). A refused key is forgotten, and so is this
   * browser's own key when it revoked itself.
   */
  #device(userid: unknown, path: string, op: DeviceOp, extra: { deviceId?: unknown; name?: unknown } = {}) {
    return this.#run(async (session): Promise<ListDevicesResult | DeviceChangeResult> => {
      if (!isEmail(userid)) return invalidEmail();
      const email = normalizeEmail(userid);
      const proof = await this.#deviceProof(session, email, op);
      if (proof?.status) return proof;
      if (!proof) return failure('DEVICE_KEY_UNAVAILABLE', 'This browser is not a remembered device for this user');
      const { body, failure: failed } = await request(session.http, path, {
        userid: email,
        cryptoVersion: session.cryptoVersion,
        deviceProof: proof.jws,
        ...extra,
      });
      if (failed ? failed.status === 'DEVICE_KEY_UNAVAILABLE' : extra.deviceId === proof.deviceId && op === DeviceOps.revoke) {
        await this.#forgetDevice(session, email);
      }
      if (failed) return failed;
      const { devices, revoked } = body;
      return {
        status: 'SUCCESS',
        message: messageOf(body),
        ...(Array.isArray(devices) && { devices: devices as DeviceInfo[] }),
        ...(typeof revoked === 'number' && { revoked }),
      };
    });
  }

  /** Runs an operation of an initialized client under guard (NOT_INITIALIZED otherwise). */
  #run<T>(operation: (session: Session) => Promise<T | FailureResult>, flagFailure?: boolean): Promise<T> {
    return guard(
      () => (this.#session ? operation(this.#session) : Promise.resolve(failure('NOT_INITIALIZED', 'Call init() first'))),
      flagFailure,
    );
  }

  #recordKey(session: Session, email: string): string {
    return deviceRecordKey(session.http.baseUrl, session.clientId, email);
  }

  async #forgetDevice(session: Session, email: string): Promise<void> {
    await this.#store(session)
      ?.delete(this.#recordKey(session, email))
      .catch(() => {});
  }

  /** A new device key pair and its public JWK, or why none could be made (the login goes on without). */
  async #newDeviceKey(): Promise<NewDeviceKey> {
    const crypto = this.#crypto();
    try {
      if (!crypto?.subtle) throw new Error('no WebCrypto (a secure context is required)');
      const keyPair = await generateDeviceKeyPair(crypto);
      return { keyPair, publicJwk: await exportDevicePublicJwk(crypto, keyPair.publicKey) };
    } catch (error) {
      return { problem: reasonOf(error) };
    }
  }

  /**
   * Ends a device registration the service accepted: stores the key pair under the `deviceId`
   * the service gave it. A stored record the service refused earlier is dropped if not replaced.
   */
  async #keepDeviceKey(
    session: Session,
    email: string,
    stale: boolean | undefined,
    deviceKey: NewDeviceKey | undefined,
    deviceId: unknown,
  ): Promise<{ deviceRemembered: boolean; problem?: string }> {
    let problem = deviceKey?.problem;
    let deviceRemembered = false;
    const keyPair = deviceKey?.keyPair;
    if (keyPair) {
      try {
        const store = this.#store(session);
        if (!isNonEmptyString(deviceId)) throw new Error('the service registered no device key');
        if (!store) throw new Error('no IndexedDB');
        await store.put(this.#recordKey(session, email), {
          deviceId,
          keyPair,
          cryptoVersion: session.cryptoVersion,
          createdAt: Date.now(),
        });
        deviceRemembered = true;
      } catch (error) {
        problem = reasonOf(error);
      }
    }
    // The service no longer accepts the stored key; drop it so later logins skip the proof step.
    if (!deviceRemembered && stale) await this.#forgetDevice(session, email);
    return problem === undefined ? { deviceRemembered } : { deviceRemembered, problem };
  }

  #crypto(): Crypto | undefined {
    return this.#deps.crypto ?? globalThis.crypto;
  }

  #store(session: Session): DeviceStore | undefined {
    const factory = this.#deps.indexedDB ?? (globalThis as { indexedDB?: IDBFactory }).indexedDB;
    return factory ? createDeviceStore(factory, session.http.timeoutMs) : undefined;
  }

  /**
   * Signs a fresh service challenge with the remembered key, if there is one: the proof, a
   * failure that ends the operation, or undefined. Any local problem (no IndexedDB, no record,
   * WebCrypto failure) means "no proof": the OTP path follows.
   */
  async #deviceProof(session: Session, email: string, op?: DeviceOp): Promise<Proof | FailureResult | undefined> {
    const crypto = this.#crypto();
    try {
      const record = await this.#store(session)?.get(this.#recordKey(session, email));
      if (!record || !crypto?.subtle) return;
      const { body, failure: failed } = await request(session.http, BrowserPaths.deviceChallenge, {});
      if (failed) return FATAL_CHALLENGE_STATUSES.includes(failed.status) ? failed : undefined;
      const nonce = body.challenge;
      if (!isNonEmptyString(nonce)) return;
      const { deviceId } = record;
      const jws = await createDeviceProof(crypto, record.keyPair.privateKey, {
        deviceId,
        cryptoVersion: session.cryptoVersion,
        sub: email,
        nonce,
        op,
      });
      return { jws, deviceId };
    } catch {
      return;
    }
  }

  #forgetIfExpired(email: string, result: FailureResult): FailureResult {
    if (result.status === 'SESSION_EXPIRED') this.#pending.delete(email);
    return result;
  }
}

/**
 * Runs an operation so that it can only resolve: an unexpected exception becomes SERVICE_ERROR.
 * With `flagFailure` (operations whose result has `success`), a failure gets `success: false`.
 */
async function guard<T>(operation: () => Promise<T | FailureResult>, flagFailure?: boolean): Promise<T> {
  let result: T | FailureResult;
  try {
    result = await operation();
  } catch (error) {
    result = failure('SERVICE_ERROR', `Unexpected error: ${reasonOf(error)}`);
  }
  return (flagFailure && !('success' in (result as object)) ? { ...result, success: false } : result) as T;
}

function normalizeBaseUrl(value: unknown): string | undefined {
  try {
    const url = new URL(typeof value === 'string' ? value : '?');
    if (/^https?:$/.test(url.protocol)) return (url.origin + url.pathname).replace(/\/+$/, '');
  } catch {}
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

function isEmail(value: unknown): value is string {
  return typeof value === 'string' && isValidEmail(value);
}

function isMfaMethod(value: unknown): value is MfaMethod {
  return MFA_METHODS.includes(value as string);
}

function withNote(message: string, problem: string | undefined): string {
  return problem === undefined ? message : `${message} This device could not be remembered: ${problem}.`;
}

/** The recovery codes an answer carries (shown once: an enrollment or a regeneration), as a spreadable field. */
function codesOf(body: Record<string, unknown>): { recoveryCodes?: string[] } {
  return Array.isArray(body.recoveryCodes) ? { recoveryCodes: body.recoveryCodes } : {};
}

function messageOf(body: Record<string, unknown>): string {
  return typeof body.message === 'string' ? body.message : '';
}

function invalid(message: string): FailureResult {
  return failure('INVALID_REQUEST', message);
}

function invalidEmail(): FailureResult {
  return failure('INVALID_EMAIL', 'Enter a valid email address');
}

function badOtp(): FailureResult {
  return failure('INVALID_OTP', 'The code is 6 digits');
}

function noPendingLogin(): FailureResult {
  return failure('SESSION_EXPIRED', 'No login in progress for this user; call authenticate() again');
}

function unexpected(): FailureResult {
  return failure('SERVICE_ERROR', 'Unexpected response from the service');
}
