import {
  CRYPTO_VERSIONS,
  type CryptoVersion,
  isValidEmail,
  MfaMethod,
  normalizeEmail,
  OTP_PATTERN,
  Paths,
  PKCE_CHALLENGE_PATTERN,
} from 'service-protocol';
import { createDeviceProof, exportDevicePublicJwk, generateDeviceKeyPair } from './device-proof.js';
import { createDeviceStore, type DeviceStore, deviceRecordKey } from './device-store.js';
import { failure, type HttpConfig, type HttpOutcome, request } from './http.js';
import type {
  AuthenticateOptions,
  AuthenticationResult,
  FailureResult,
  InitializationResult,
  InitiateMfaResult,
  InitOptions,
  VerifyDeviceResult,
  VerifyEmailOtpResult,
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
}

const VERIFY_DEVICE_STATUSES = ['SUCCESS', 'DEVICE_REGISTERED', 'MFA_ENROLLMENT_NEEDED', 'FINALIZE_REGISTRATION_NEEDED'] as const;
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
        const outcome = await request(http, 'GET', Paths.client);
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
        Paths.authenticate,
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
          if (typeof body.sessionId !== 'string' || typeof body.method !== 'string' || !MFA_METHODS.includes(body.method)) break;
          this.#pending.set(email, { sessionId: body.sessionId, rememberDevice: false, staleDeviceRecord: false });
          return { status: 'MFA_REQUIRED', message, sessionId: body.sessionId, method: body.method as MfaMethod };
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

      const outcome = await request(session.http, 'POST', Paths.verifyEmailOtp, {
        userid: email,
        deviceToken: pending.deviceToken,
        otp: input.otp,
      });
      if (!outcome.ok) return this.#forgetIfExpired(email, outcome.failure);
      if (outcome.body.status !== 'SUCCESS') return unexpected();
      return { status: 'SUCCESS', message: messageOf(outcome.body) };
    });
  }

  /**
   * Finishes a new-device login after verifyEmailOtp and returns the authorization code. With
   * authenticate's rememberDevice, it registers a non-extractable device key kept in IndexedDB.
   *
   * @example
   * ```ts
   * const r = await ServiceInitializer.verifyDevice({ userid: 'ann@example.com' });
   * if (r.status === 'SUCCESS') await sendToBackend(r.code);
   * ```
   */
  verifyDevice(input: { userid: string; mfaMethod?: MfaMethod }): Promise<VerifyDeviceResult> {
    return guard(async (): Promise<VerifyDeviceResult> => {
      const session = this.#session;
      if (!session) return notInitialized();
      if (!isObject(input) || typeof input.userid !== 'string') {
        return failure('INVALID_REQUEST', 'verifyDevice takes { userid, mfaMethod? }');
      }
      if (input.mfaMethod !== undefined && !MFA_METHODS.includes(input.mfaMethod)) {
        return failure('INVALID_REQUEST', `mfaMethod must be one of ${MFA_METHODS.join(', ')}`);
      }
      const email = normalizeEmail(input.userid);
      const pending = this.#pending.get(email);
      if (pending?.deviceToken === undefined) return noPendingLogin();

      const crypto = this.#crypto();
      let keyPair: CryptoKeyPair | undefined;
      let notRemembered: string | undefined;
      let devicePublicKey: Awaited<ReturnType<typeof exportDevicePublicJwk>> | undefined;
      if (pending.rememberDevice) {
        try {
          if (!crypto?.subtle) throw new Error('WebCrypto is not available (a secure context is required)');
          keyPair = await generateDeviceKeyPair(crypto);
          devicePublicKey = await exportDevicePublicJwk(crypto, keyPair.publicKey);
        } catch (error) {
          keyPair = undefined;
          notRemembered = reasonOf(error);
        }
      }

      const outcome = await request(
        session.http,
        'POST',
        Paths.verifyDevice,
        definedOnly({ userid: email, deviceToken: pending.deviceToken, devicePublicKey, mfaMethod: input.mfaMethod }),
      );
      if (!outcome.ok) return this.#forgetIfExpired(email, outcome.failure);
      const body = outcome.body;
      const status = VERIFY_DEVICE_STATUSES.find((s) => s === body.status);
      let message = messageOf(body);
      if (status === 'MFA_ENROLLMENT_NEEDED' || status === 'FINALIZE_REGISTRATION_NEEDED') {
        return typeof body.code === 'string' ? { status, message, code: body.code } : { status, message };
      }
      if (status === undefined || typeof body.code !== 'string') return unexpected();

      this.#pending.delete(email);
      const key = deviceRecordKey(session.http.baseUrl, session.clientId, email);
      let deviceRemembered = false;
      if (keyPair && typeof body.deviceId === 'string' && body.deviceId.length > 0) {
        try {
          const store = this.#store(session);
          if (!store) throw new Error('IndexedDB is not available');
          await store.put(key, { deviceId: body.deviceId, keyPair, cryptoVersion: session.cryptoVersion, createdAt: Date.now() });
          deviceRemembered = true;
        } catch (error) {
          notRemembered = reasonOf(error);
        }
      } else if (keyPair) {
        notRemembered = 'the service registered no device key';
      }
      if (!deviceRemembered && pending.staleDeviceRecord) {
        // The service no longer accepts the stored key; drop it so later logins skip the proof step.
        await this.#store(session)
          ?.delete(key)
          .catch(() => {});
      }
      if (notRemembered !== undefined) message = `${message} This device could not be remembered: ${notRemembered}.`;
      return { status, message, code: body.code, deviceRemembered };
    });
  }

  /**
   * Starts the MFA step after authenticate returned MFA_REQUIRED: the service sends a code by
   * the user's method (email or SMS; TOTP needs no send).
   *
   * @example
   * ```ts
   * const r = await ServiceInitializer.initiateMfa({ userid: 'ann@example.com', sessionId });
   * if (r.status === 'MFA_INITIATED') showOtpForm();
   * ```
   */
  initiateMfa(input: { userid: string; sessionId: string }): Promise<InitiateMfaResult> {
    return guard(async (): Promise<InitiateMfaResult> => {
      const session = this.#session;
      if (!session) return notInitialized();
      if (!isObject(input) || typeof input.userid !== 'string' || typeof input.sessionId !== 'string') {
        return failure('INVALID_REQUEST', 'initiateMfa takes { userid, sessionId } as strings');
      }
      const email = normalizeEmail(input.userid);
      const outcome = await request(session.http, 'POST', Paths.mfaInitiate, { userid: email, sessionId: input.sessionId });
      if (!outcome.ok) return outcome.failure;
      if (outcome.body.status !== 'MFA_INITIATED') return unexpected();
      this.#pending.set(email, { sessionId: input.sessionId, rememberDevice: false, staleDeviceRecord: false });
      return { status: 'MFA_INITIATED', message: messageOf(outcome.body) };
    });
  }

  /**
   * Checks the MFA code and returns the authorization code.
   *
   * @example
   * ```ts
   * const r = await ServiceInitializer.verifyMfa({ userid: 'ann@example.com', otp: '123456', remember_me: true });
   * if (r.status === 'SUCCESS') await sendToBackend(r.code);
   * ```
   */
  verifyMfa(input: { userid: string; otp: string; remember_me?: boolean }): Promise<VerifyMfaResult> {
    const fail = (result: FailureResult): VerifyMfaResult => ({ ...result, success: false });
    return guard(async (): Promise<VerifyMfaResult> => {
      const session = this.#session;
      if (!session) return fail(notInitialized());
      if (
        !isObject(input) ||
        typeof input.userid !== 'string' ||
        typeof input.otp !== 'string' ||
        (input.remember_me !== undefined && typeof input.remember_me !== 'boolean')
      ) {
        return fail(failure('INVALID_REQUEST', 'verifyMfa takes { userid, otp, remember_me? }'));
      }
      const email = normalizeEmail(input.userid);
      const sessionId = this.#pending.get(email)?.sessionId;
      if (sessionId === undefined) return fail(noPendingLogin());
      if (!OTP_PATTERN.test(input.otp)) return fail(failure('INVALID_OTP', 'The code is 6 digits'));
      const outcome = await request(
        session.http,
        'POST',
        Paths.mfaVerify,
        definedOnly({ userid: email, sessionId, otp: input.otp, rememberMe: input.remember_me }),
      );
      if (!outcome.ok) return fail(this.#forgetIfExpired(email, outcome.failure));
      if (outcome.body.status !== 'SUCCESS' || typeof outcome.body.code !== 'string') return fail(unexpected());
      this.#pending.delete(email);
      return { status: 'SUCCESS', message: messageOf(outcome.body), success: true, code: outcome.body.code };
    }, fail);
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
  ): Promise<{ kind: 'none' } | { kind: 'proof'; jws: string } | { kind: 'fatal'; failure: FailureResult }> {
    const crypto = this.#crypto();
    let record: Awaited<ReturnType<DeviceStore['get']>>;
    try {
      record = await this.#store(session)?.get(deviceRecordKey(session.http.baseUrl, session.clientId, email));
    } catch {
      return { kind: 'none' };
    }
    if (!record || !crypto?.subtle) return { kind: 'none' };

    const challenge: HttpOutcome = await request(session.http, 'POST', Paths.deviceChallenge, {});
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
      });
      return { kind: 'proof', jws };
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
