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
} from 'service-protocol';
import { createDeviceProof, exportDevicePublicJwk, generateDeviceKeyPair } from './device-proof.js';
import { createDeviceStore, type DeviceStore, deviceRecordKey } from './device-store.js';
import { failure, type HttpConfig, type HttpOutcome, request } from './http.js';
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
  rememberDevice: boolean;
  /** A stored device record whose proof the service did not accept. */
  staleDeviceRecord: boolean;
  /**
   * Set when verifyDevice handed the login to MFA (FINALIZE_REGISTRATION_NEEDED or MFA_REQUIRED):
   * the device key the service registered stays in memory until verifyMfa succeeds.
   */
  registration?: { deviceKey: NewDeviceKey | undefined };
}

/** A device key pair made for a registration, or why none could be made. */
type NewDeviceKey =
  | { keyPair: CryptoKeyPair; publicJwk: DevicePublicJwk; problem?: undefined }
  | { keyPair?: undefined; publicJwk?: undefined; problem: string };

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
    return guard(
      async (): Promise<InitializationResult> => {
        this.#session = undefined;
        this.#pending.clear();
        const fail = (result: FailureResult): InitializationResult => ({ ...result, success: false });
        if (typeof apiKey !== 'string' || apiKey.length === 0) {
          return fail(failure('INVALID_API_KEY', 'An API key (the publishable key) is required'));
        }
        const base = normalizeBaseUrl(baseUrl ?? DEFAULT_BASE_URL);
        if (base === undefined) return fail(failure('INVALID_REQUEST', 'baseUrl must be an http(s) URL'));
        const opts: InitOptions = options ?? {};
        if (typeof opts !== 'object') return fail(failure('INVALID_REQUEST', 'options must be an object'));
        const cryptoVersion = opts.cryptoVersion ?? DEFAULT_CRYPTO_VERSION;
        if (!(CRYPTO_VERSIONS as readonly string[]).includes(cryptoVersion)) {
          return fail(
            failure('INVALID_REQUEST', `Unknown cryptoVersion ${String(cryptoVersion)}; supported: ${CRYPTO_VERSIONS.join(', ')}`),
          );
        }
        const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
        if (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0) {
          return fail(failure('INVALID_REQUEST', 'timeoutMs must be a positive number of milliseconds'));
        }
        const fetchFn = this.#deps.fetch ?? (typeof fetch === 'function' ? fetch.bind(globalThis) : undefined);
        if (fetchFn === undefined) return fail(failure('NETWORK_ERROR', 'fetch is not available in this environment'));

        const http: HttpConfig = { baseUrl: base, apiKey, timeoutMs, fetch: fetchFn };
        const outcome = await request(http, 'GET', BrowserPaths.client);
        if (!outcome.ok) {
          // Whatever the body says, 401 and 403 on this call mean the key was refused.
          const refused = outcome.httpStatus === 401 || outcome.httpStatus === 403;
          return fail(
            refused && outcome.failure.status === 'SERVICE_ERROR' ? failure('INVALID_API_KEY', 'The API key was refused') : outcome.failure,
          );
        }
        const { clientId, name } = outcome.body;
        if (typeof clientId !== 'string' || clientId.length === 0) {
          return fail(failure('SERVICE_ERROR', 'The service did not name the client'));
        }
        this.#session = { http, clientId, cryptoVersion: cryptoVersion as CryptoVersion };
        const label = typeof name === 'string' && name.length > 0 ? name : clientId;
        return { status: 'INITIALIZED', message: `Initialized for ${label}`, success: true };
      },
      (result) => ({ ...result, success: false }),
    );
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
    return guard(async (): Promise<AuthenticationResult> => {
      const session = this.#session;
      if (!session) return notInitialized();
      if (typeof userid !== 'string' || !isValidEmail(userid)) {
        return failure('INVALID_EMAIL', 'Enter a valid email address');
      }
      const opts: AuthenticateOptions = options ?? {};
      if (typeof opts !== 'object') return failure('INVALID_REQUEST', 'options must be an object');
      if (opts.rememberDevice !== undefined && typeof opts.rememberDevice !== 'boolean') {
        return failure('INVALID_REQUEST', 'rememberDevice must be a boolean');
      }
      let codeChallengeMethod: 'S256' | undefined;
      if (opts.code_challenge !== undefined) {
        if (typeof opts.code_challenge !== 'string' || !PKCE_CHALLENGE_PATTERN.test(opts.code_challenge)) {
          return failure('INVALID_REQUEST', 'code_challenge must be an S256 challenge (43 base64url characters)');
        }
        if ((opts.code_challenge_method ?? 'S256') !== 'S256') {
          return failure('INVALID_REQUEST', "Only code_challenge_method 'S256' is supported (RFC 9700 2.1.1)");
        }
        codeChallengeMethod = 'S256';
      } else if (opts.code_challenge_method !== undefined) {
        return failure('INVALID_REQUEST', 'code_challenge_method needs a code_challenge');
      }

      const email = normalizeEmail(userid);
      this.#pending.delete(email);
      const proof = await this.#deviceProof(session, email);
      if (proof.kind === 'fatal') return proof.failure;

      const outcome = await request(
        session.http,
        'POST',
        BrowserPaths.authenticate,
        definedOnly({
          userid: email,
          cryptoVersion: session.cryptoVersion,
          rememberDevice: opts.rememberDevice,
          codeChallenge: opts.code_challenge,
          codeChallengeMethod,
          deviceProof: proof.kind === 'proof' ? proof.jws : undefined,
        }),
      );
      if (!outcome.ok) return outcome.failure;
      const body = outcome.body;
      const message = messageOf(body);
      switch (body.status) {
        case 'SUCCESS':
          if (typeof body.code !== 'string') break;
          return { status: 'SUCCESS', message, success: true, code: body.code };
        case 'OTP_NEEDED': {
          if (typeof body.deviceToken !== 'string') break;
          // The service refused this device (revoked or expired): forget its key now.
          if (body.deviceRefused === true) await this.#forgetDevice(session, email);
          this.#pending.set(email, {
            deviceToken: body.deviceToken,
            rememberDevice: opts.rememberDevice === true,
            staleDeviceRecord: proof.kind === 'proof',
          });
          return typeof body.code === 'string'
            ? { status: 'OTP_NEEDED', message, deviceToken: body.deviceToken, code: body.code }
            : { status: 'OTP_NEEDED', message, deviceToken: body.deviceToken };
        }
        case 'MFA_REQUIRED': {
          const { sessionId, method } = body;
          if (!isNonEmptyString(sessionId) || !isMfaMethod(method)) break;
          this.#pending.set(email, { sessionId, rememberDevice: false, staleDeviceRecord: false });
          return { status: 'MFA_REQUIRED', message, sessionId, method };
        }
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
    return guard(async (): Promise<VerifyEmailOtpResult> => {
      const session = this.#session;
      if (!session) return notInitialized();
      if (!isObject(input) || typeof input.userid !== 'string' || typeof input.otp !== 'string') {
        return failure('INVALID_REQUEST', 'verifyEmailOtp takes { userid, otp } as strings');
      }
      const email = normalizeEmail(input.userid);
      const pending = this.#pending.get(email);
      if (pending?.deviceToken === undefined) return noPendingLogin();
      // A malformed code is refused here, so it costs none of the service's guesses.
      if (!OTP_PATTERN.test(input.otp)) return failure('INVALID_OTP', 'The code is 6 digits');

      const outcome = await request(session.http, 'POST', BrowserPaths.verifyEmailOtp, {
        userid: email,
        deviceToken: pending.deviceToken,
        otp: input.otp,
      });
      if (!outcome.ok) return this.#forgetIfExpired(email, outcome.failure);
      if (outcome.body.status !== 'SUCCESS') return unexpected();
      return { status: 'SUCCESS', message: messageOf(outcome.body), mfaEnrolled: outcome.body.mfaEnrolled === true };
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
    return guard(async (): Promise<VerifyDeviceResult> => {
      const session = this.#session;
      if (!session) return notInitialized();
      if (!isObject(input) || typeof input.userid !== 'string') {
        return failure('INVALID_REQUEST', 'verifyDevice takes { userid, mfaMethod?, phoneNumber? }');
      }
      if (input.mfaMethod !== undefined && !isMfaMethod(input.mfaMethod)) {
        return failure('INVALID_REQUEST', `mfaMethod must be one of ${MFA_METHODS.join(', ')}`);
      }
      let phoneNumber: string | undefined;
      if (input.phoneNumber !== undefined) {
        if (input.mfaMethod !== MfaMethod.SMS) return failure('INVALID_REQUEST', "phoneNumber goes with mfaMethod 'sms' only");
        phoneNumber = normalizePhone(input.phoneNumber);
        if (phoneNumber === undefined) {
          return failure('INVALID_REQUEST', 'phoneNumber must be an E.164 number: + and 7 to 15 digits, such as +14155550123');
        }
      } else if (input.mfaMethod === MfaMethod.SMS) {
        return failure('INVALID_REQUEST', "mfaMethod 'sms' needs a phoneNumber");
      }
      const email = normalizeEmail(input.userid);
      const pending = this.#pending.get(email);
      if (pending?.deviceToken === undefined) return noPendingLogin();

      // A fresh pair on every call: a pair sent with an earlier answer (MFA_ENROLLMENT_NEEDED) is dropped.
      const deviceKey = pending.rememberDevice ? await this.#newDeviceKey() : undefined;
      const outcome = await request(
        session.http,
        'POST',
        BrowserPaths.verifyDevice,
        definedOnly({
          userid: email,
          deviceToken: pending.deviceToken,
          devicePublicKey: deviceKey?.publicJwk,
          mfaMethod: input.mfaMethod,
          phoneNumber,
        }),
      );
      if (!outcome.ok) return this.#forgetIfExpired(email, outcome.failure);
      const body = outcome.body;
      const message = messageOf(body);
      switch (body.status) {
        case 'SUCCESS':
        case 'DEVICE_REGISTERED': {
          if (typeof body.code !== 'string') break;
          this.#pending.delete(email);
          const kept = await this.#keepDeviceKey(session, email, pending.staleDeviceRecord, deviceKey, body.deviceId);
          return {
            status: body.status,
            message: withNote(message, kept.problem),
            code: body.code,
            deviceRemembered: kept.deviceRemembered,
          };
        }
        case 'MFA_ENROLLMENT_NEEDED': {
          const methods = Array.isArray(body.methods) ? body.methods.filter(isMfaMethod) : [];
          if (methods.length === 0) break;
          return { status: 'MFA_ENROLLMENT_NEEDED', message, methods };
        }
        case 'FINALIZE_REGISTRATION_NEEDED':
        case 'MFA_REQUIRED': {
          const { sessionId, method } = body;
          if (!isNonEmptyString(sessionId) || !isMfaMethod(method)) break;
          // The service holds the public key now; the pair waits in memory until verifyMfa succeeds.
          this.#pending.set(email, { ...pending, sessionId, registration: { deviceKey } });
          if (body.status === 'MFA_REQUIRED') return { status: 'MFA_REQUIRED', message, sessionId, method };
          const result: FinalizeRegistrationResult = { status: 'FINALIZE_REGISTRATION_NEEDED', message, method, sessionId };
          if (typeof body.otpauthUri === 'string') result.otpauthUri = body.otpauthUri;
          if (typeof body.secret === 'string') result.secret = body.secret;
          return result;
        }
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
    return guard(async (): Promise<InitiateMfaResult> => {
      const session = this.#session;
      if (!session) return notInitialized();
      if (!isObject(input) || typeof input.userid !== 'string' || !isNonEmptyString(input.sessionId)) {
        return failure('INVALID_REQUEST', 'initiateMfa takes { userid, sessionId } as strings');
      }
      const email = normalizeEmail(input.userid);
      const sessionId = input.sessionId;
      const outcome = await request(session.http, 'POST', BrowserPaths.mfaInitiate, { userid: email, sessionId });
      if (!outcome.ok) return this.#forgetIfExpired(email, outcome.failure);
      const { status, method } = outcome.body;
      if (status !== 'MFA_INITIATED' || !isMfaMethod(method)) return unexpected();
      // Keep the login state (and a waiting device key) when it belongs to this session.
      if (this.#pending.get(email)?.sessionId !== sessionId) {
        this.#pending.set(email, { sessionId, rememberDevice: false, staleDeviceRecord: false });
      }
      return { status: 'MFA_INITIATED', message: messageOf(outcome.body), method };
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
    const fail = (result: FailureResult): VerifyMfaResult => ({ ...result, success: false });
    return guard(async (): Promise<VerifyMfaResult> => {
      const session = this.#session;
      if (!session) return fail(notInitialized());
      if (
        !isObject(input) ||
        typeof input.userid !== 'string' ||
        typeof input.otp !== 'string' ||
        (input.remember_me !== undefined && typeof input.remember_me !== 'boolean') ||
        (input.sessionId !== undefined && !isNonEmptyString(input.sessionId))
      ) {
        return fail(failure('INVALID_REQUEST', 'verifyMfa takes { userid, otp, remember_me?, sessionId? }'));
      }
      const email = normalizeEmail(input.userid);
      const pending = this.#pending.get(email);
      const sessionId = input.sessionId ?? pending?.sessionId;
      if (sessionId === undefined) return fail(noPendingLogin());
      if (!OTP_PATTERN.test(input.otp)) return fail(failure('INVALID_OTP', 'The code is 6 digits'));
      const outcome = await request(
        session.http,
        'POST',
        BrowserPaths.mfaVerify,
        definedOnly({ userid: email, sessionId, otp: input.otp, rememberMe: input.remember_me }),
      );
      if (!outcome.ok) return fail(this.#forgetIfExpired(email, outcome.failure));
      const body = outcome.body;
      if (body.status !== 'SUCCESS' || typeof body.code !== 'string') return fail(unexpected());
      this.#pending.delete(email);
      const message = messageOf(body);
      const registration = pending?.sessionId === sessionId ? pending.registration : undefined;
      if (!pending || !registration) return { status: 'SUCCESS', message, success: true, code: body.code };
      const kept = await this.#keepDeviceKey(session, email, pending.staleDeviceRecord, registration.deviceKey, body.deviceId);
      return {
        status: 'SUCCESS',
        message: withNote(message, kept.problem),
        success: true,
        code: body.code,
        deviceRemembered: kept.deviceRemembered,
      };
    }, fail);
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
    return guard(async (): Promise<ListDevicesResult | DeviceChangeResult> => {
      const session = this.#session;
      if (!session) return notInitialized();
      if (typeof userid !== 'string' || !isValidEmail(userid)) return failure('INVALID_EMAIL', 'Enter a valid email address');
      const email = normalizeEmail(userid);
      const proof = await this.#deviceProof(session, email, op);
      if (proof.kind === 'fatal') return proof.failure;
      if (proof.kind === 'none') return failure('DEVICE_KEY_UNAVAILABLE', 'This browser is not a remembered device for this user');
      const outcome = await request(session.http, 'POST', path, {
        userid: email,
        cryptoVersion: session.cryptoVersion,
        deviceProof: proof.jws,
        ...extra,
      });
      const untrusted = !outcome.ok && outcome.failure.status === 'DEVICE_KEY_UNAVAILABLE';
      if (untrusted || (outcome.ok && extra.deviceId === proof.deviceId && op === DeviceOps.revoke)) {
        await this.#forgetDevice(session, email);
      }
      if (!outcome.ok) return outcome.failure;
      const { devices, revoked } = outcome.body;
      return {
        status: 'SUCCESS',
        message: messageOf(outcome.body),
        ...(Array.isArray(devices) ? { devices: devices as DeviceInfo[] } : {}),
        ...(typeof revoked === 'number' ? { revoked } : {}),
      };
    });
  }

  async #forgetDevice(session: Session, email: string): Promise<void> {
    await this.#store(session)
      ?.delete(deviceRecordKey(session.http.baseUrl, session.clientId, email))
      .catch(() => {});
  }

  /** A new device key pair and its public JWK, or why none could be made (the login goes on without). */
  async #newDeviceKey(): Promise<NewDeviceKey> {
    const crypto = this.#crypto();
    try {
      if (!crypto?.subtle) throw new Error('WebCrypto is not available (a secure context is required)');
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
    staleDeviceRecord: boolean,
    deviceKey: NewDeviceKey | undefined,
    deviceId: unknown,
  ): Promise<{ deviceRemembered: boolean; problem?: string }> {
    const key = deviceRecordKey(session.http.baseUrl, session.clientId, email);
    let problem = deviceKey?.problem;
    let deviceRemembered = false;
    if (deviceKey?.keyPair && isNonEmptyString(deviceId)) {
      try {
        const store = this.#store(session);
        if (!store) throw new Error('IndexedDB is not available');
        await store.put(key, { deviceId, keyPair: deviceKey.keyPair, cryptoVersion: session.cryptoVersion, createdAt: Date.now() });
        deviceRemembered = true;
      } catch (error) {
        problem = reasonOf(error);
      }
    } else if (deviceKey?.keyPair) {
      problem = 'the service registered no device key';
    }
    if (!deviceRemembered && staleDeviceRecord) {
      // The service no longer accepts the stored key; drop it so later logins skip the proof step.
      await this.#store(session)
        ?.delete(key)
        .catch(() => {});
    }
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
   * Signs a fresh service challenge with the remembered key, if there is one. Any local
   * problem (no IndexedDB, no record, WebCrypto failure) means "no proof": the OTP path follows.
   */
  async #deviceProof(
    session: Session,
    email: string,
    op?: DeviceOp,
  ): Promise<{ kind: 'none' } | { kind: 'proof'; jws: string; deviceId: string } | { kind: 'fatal'; failure: FailureResult }> {
    const crypto = this.#crypto();
    let record: Awaited<ReturnType<DeviceStore['get']>>;
    try {
      record = await this.#store(session)?.get(deviceRecordKey(session.http.baseUrl, session.clientId, email));
    } catch {
      return { kind: 'none' };
    }
    if (!record || !crypto?.subtle) return { kind: 'none' };

    const challenge: HttpOutcome = await request(session.http, 'POST', BrowserPaths.deviceChallenge, {});
    if (!challenge.ok) {
      return FATAL_CHALLENGE_STATUSES.includes(challenge.failure.status) ? { kind: 'fatal', failure: challenge.failure } : { kind: 'none' };
    }
    const nonce = challenge.body.challenge;
    if (typeof nonce !== 'string' || nonce.length === 0) return { kind: 'none' };
    try {
      const jws = await createDeviceProof(crypto, record.keyPair.privateKey, {
        deviceId: record.deviceId,
        cryptoVersion: session.cryptoVersion,
        sub: email,
        nonce,
        op,
      });
      return { kind: 'proof', jws, deviceId: record.deviceId };
    } catch {
      return { kind: 'none' };
    }
  }

  #forgetIfExpired(email: string, result: FailureResult): FailureResult {
    if (result.status === 'SESSION_EXPIRED') this.#pending.delete(email);
    return result;
  }
}

/** Runs an operation so that it can only resolve: an unexpected exception becomes SERVICE_ERROR. */
async function guard<T>(operation: () => Promise<T>, onFailure: (result: FailureResult) => T = (r) => r as T): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    return onFailure(failure('SERVICE_ERROR', `Unexpected error: ${reasonOf(error)}`));
  }
}

function normalizeBaseUrl(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    return `${url.origin}${url.pathname}`.replace(/\/+$/, '');
  } catch {
    return undefined;
  }
}

function definedOnly<T extends Record<string, unknown>>(body: T): Partial<T> {
  return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

function isMfaMethod(value: unknown): value is MfaMethod {
  return typeof value === 'string' && MFA_METHODS.includes(value);
}

function withNote(message: string, problem: string | undefined): string {
  return problem === undefined ? message : `${message} This device could not be remembered: ${problem}.`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function messageOf(body: Record<string, unknown>): string {
  return typeof body.message === 'string' ? body.message : '';
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function notInitialized(): FailureResult {
  return failure('NOT_INITIALIZED', 'Call init() with your API key first');
}

function noPendingLogin(): FailureResult {
  return failure('SESSION_EXPIRED', 'No login in progress for this user; call authenticate() again');
}

function unexpected(): FailureResult {
  return failure('SERVICE_ERROR', 'The service sent a response this library does not understand');
}
