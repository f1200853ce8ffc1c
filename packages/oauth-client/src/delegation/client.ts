import type { KeyObject } from 'node:crypto';
import {
  DELEGATION_CONTENT_TYPE,
  type DelegationClaims,
  type DelegationDevice,
  type DelegationOp,
  type DelegationRequestBodies,
  type DelegationResults,
  type MfaChangeStep,
  OTP_PATTERN,
  Paths,
  RECOVERY_CODE_PATTERN,
} from 'service-protocol';
import { DELEGATION_REQUEST_TTL_SECONDS, DELEGATION_TIMEOUT_MS } from '../defaults.js';
import { openEnvelope, requestClaims, sealEnvelope } from './envelope.js';
import { DelegationConfigError, DelegationEnvelopeError, DelegationRequestError, DelegationResponseError } from './errors.js';
import { type DelegationKeyKind, loadDelegationKey } from './keys.js';

/**
 * The MFA methods a backend can move a user to (spec: MfaMethod). Use the names (`MfaMethod.SMS`)
 * or the values (`'sms'`). A passkey is not among them: its ceremony needs the user's
 * authenticator, so the user enrolls it in the browser (service-web/passkeys); a user whose
 * method is a passkey shows `current_method: 'passkey'`, and a recovery code stands in for it.
 */
export const MfaMethod = { EMAIL: 'email', SMS: 'sms', TOTP: 'totp' } as const;
/** One of `'email'`, `'sms'`, `'totp'`. */
export type MfaMethod = (typeof MfaMethod)[keyof typeof MfaMethod];

const MFA_METHODS: readonly string[] = Object.values(MfaMethod);

/** Options of {@link ServiceDelegationClient.fromKeys} (spec: DelegationClientOptions). */
export interface DelegationClientOptions {
  /** The SP's Ed25519 private key (PKCS#8 PEM): signs requests. */
  spSigningKey: string | KeyObject;
  /** The SP's X25519 private key (PKCS#8 PEM): decrypts responses. */
  spEncryptionKey: string | KeyObject;
  /** The identity provider's Ed25519 public key (SPKI PEM): verifies responses. */
  idpVerifyKey: string | KeyObject;
  /** The identity provider's X25519 public key (SPKI PEM): requests are encrypted to it. */
  idpEncryptionKey: string | KeyObject;
  /**
   * The service's issuer URL, e.g. `https://idp.example.com` (`https:`; `http:` only for
   * localhost). It is also the `aud` of every request, so it must be the issuer URL exactly
   * (a trailing slash is removed).
   */
  baseUrl: string;
  /** The SP's id: its OAuth client ID. `iss` of requests, `aud` of responses. */
  spId: string;
  /** The client's secret key, sent as `Authorization: Bearer`; optional. */
  apiKey?: string;
  /** A `fetch` to use instead of the global one (tests, proxies). */
  fetch?: typeof fetch;
  /** Whole-request timeout in milliseconds; default 10000. */
  timeoutMs?: number;
}

/** Input of {@link ServiceDelegationClient.initiateMfaChange}. */
export interface InitiateMfaChangeOptions {
  /** The user's email or ID. */
  userid: string;
  /** The new method. */
  mfaMethod: MfaMethod;
  /** The phone number to send the code to; required when `mfaMethod` is `'sms'`, ignored otherwise. */
  phoneNumber?: string;
}

/**
 * Result of {@link ServiceDelegationClient.initiateMfaChange}: `status` is
 * `'current_factor_needed'` (the user has a second factor: ask for a code of `current_method`
 * and pass it to verifyMfaChange first), `'otp_sent'` (email, sms), `'totp_pending'` (totp: show
 * `otpauth_uri` as a QR code, or `secret`) or `'failed'`.
 */
export type MfaChangeResult = DelegationResults['initiate_mfa_change'];

/** Input of {@link ServiceDelegationClient.verifyMfaChange}. */
export interface VerifyMfaChangeOptions {
  userid: string;
  /** `session_id` from initiateMfaChange. */
  sessionId: string;
  /**
   * The 6-digit code the user received (or reads from the authenticator app). At the current
   * factor's step, when that factor is lost, one of the user's recovery codes (XXXXX-XXXXX).
   */
  otp: string;
}

/**
 * Result of {@link ServiceDelegationClient.verifyMfaChange}: `'success'` (the change applied),
 * `'failed'`, or after the current factor's code the next step, `'otp_sent'` / `'totp_pending'`
 * (with `otpauth_uri` and `secret`): call verifyMfaChange again with the new method's code.
 */
export type VerifyMfaChangeResult = DelegationResults['verify_mfa_change'];

/** Result of {@link ServiceDelegationClient.getUserCredentials}: the user's current `mfa_method`. */
export type UserCredentials = DelegationResults['get_user_credentials'];

/**
 * Result of {@link ServiceDelegationClient.listDevices}: `status` `'success'` with the user's
 * trusted devices for this application, or `'failed'` (with `devices: []`) for a user who never
 * signed in to it.
 */
export type DeviceList = DelegationResults['list_devices'];

/** Result of {@link ServiceDelegationClient.revokeDevice}. */
export type RevokeDeviceResult = DelegationResults['revoke_device'];

/** Result of {@link ServiceDelegationClient.revokeAllDevices}: `revoked` counts the devices signed out. */
export type RevokeAllDevicesResult = DelegationResults['revoke_all_devices'];

/** Environment variables read by {@link ServiceDelegationClient.fromEnv}. */
export const DELEGATION_ENV = {
  baseUrl: 'SERVICE_BASE_URL',
  apiKey: 'SERVICE_API_KEY',
  spSigningKey: 'SP_ED25519_PRIVATE_KEY_PEM',
  spEncryptionKey: 'SP_X25519_PRIVATE_KEY_PEM',
  idpVerifyKey: 'IDP_ED25519_PUBLIC_KEY_PEM',
  idpEncryptionKey: 'IDP_X25519_PUBLIC_KEY_PEM',
  spId: 'OAUTH_CLIENT_ID',
} as const;

/** The path of the delegation endpoint, under the base URL. */
export const DELEGATION_PATH = Paths.delegation;

type KeyOption = 'spSigningKey' | 'spEncryptionKey' | 'idpVerifyKey' | 'idpEncryptionKey';

const KEY_OPTIONS: [KeyOption, DelegationKeyKind][] = [
  ['spSigningKey', 'ed25519-private'],
  ['spEncryptionKey', 'x25519-private'],
  ['idpVerifyKey', 'ed25519-public'],
  ['idpEncryptionKey', 'x25519-public'],
];
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

interface Config {
  keys: Record<KeyOption, KeyObject>;
  audience: string;
  endpoint: string;
  spId: string;
  apiKey: string | undefined;
  fetch: typeof fetch;
  timeoutMs: number;
}

/**
 * The MFA delegation client: lets the SP's backend start and confirm a change of a user's MFA
 * method, and read the user's current method.
 *
 * Each call is one `POST {baseUrl}/v1/delegation` whose body is a request envelope (nested
 * JWT: signed with the SP's Ed25519 key, encrypted to the identity provider's X25519 key) and
 * whose 200 answer is a response envelope the other way, bound to the request's `jti`. An
 * answer that does not open (wrong signer, another SP, stale, another request) is refused with
 * {@link DelegationResponseError}; a `status` field is never taken from an unsealed answer.
 *
 * @example
 * ```ts
 * import { MfaMethod, ServiceDelegationClient } from 'service-oauth-client';
 *
 * const client = ServiceDelegationClient.fromEnv(); // throws DelegationConfigError when misconfigured
 * const { session_id } = await client.initiateMfaChange({ userid: 'ann@example.com', mfaMethod: MfaMethod.SMS, phoneNumber: '+15555550100' });
 * const { status } = await client.verifyMfaChange({ userid: 'ann@example.com', sessionId: session_id, otp: '123456' });
 * if (status === 'success') console.log('MFA method changed');
 * ```
 */
export class ServiceDelegationClient {
  readonly #config: Config;

  private constructor(config: Config) {
    this.#config = config;
  }

  /**
   * Makes a client from the four keys (PEM, PEM with literal `\n`, base64 of a PEM, or
   * `KeyObject`), the base URL and the SP id. Every key is loaded and checked now.
   *
   * @throws {@link DelegationConfigError} naming the option: missing, malformed PEM, wrong key
   *   type (Ed25519/X25519 swapped, RSA, EC), public key where a private one belongs, bad URL
   */
  static fromKeys(options: DelegationClientOptions): ServiceDelegationClient {
    if (options === null || typeof options !== 'object') throw new DelegationConfigError('options are required');
    return new ServiceDelegationClient(resolve(options, (option) => option));
  }

  /**
   * Makes a client from the environment: `SERVICE_BASE_URL`, `SERVICE_API_KEY` (optional),
   * `SP_ED25519_PRIVATE_KEY_PEM`, `SP_X25519_PRIVATE_KEY_PEM`, `IDP_ED25519_PUBLIC_KEY_PEM`,
   * `IDP_X25519_PUBLIC_KEY_PEM`, `OAUTH_CLIENT_ID`. Empty variables count as unset.
   *
   * @throws {@link DelegationConfigError} naming the variable(s) missing or at fault
   */
  static fromEnv(env: NodeJS.ProcessEnv = process.env): ServiceDelegationClient {
    const read = (name: string) => {
      const value = env[name];
      return value === undefined || value.trim() === '' ? undefined : value;
    };
    const missing = Object.entries(DELEGATION_ENV)
      .filter(([option, name]) => option !== 'apiKey' && read(name) === undefined)
      .map(([, name]) => name);
    if (missing.length > 0) {
      throw new DelegationConfigError(
        `${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not set (required by the delegation client)`,
        {
          option: missing[0],
        },
      );
    }
    const options: DelegationClientOptions = {
      baseUrl: read(DELEGATION_ENV.baseUrl) as string,
      spId: read(DELEGATION_ENV.spId) as string,
      spSigningKey: read(DELEGATION_ENV.spSigningKey) as string,
      spEncryptionKey: read(DELEGATION_ENV.spEncryptionKey) as string,
      idpVerifyKey: read(DELEGATION_ENV.idpVerifyKey) as string,
      idpEncryptionKey: read(DELEGATION_ENV.idpEncryptionKey) as string,
    };
    const apiKey = read(DELEGATION_ENV.apiKey);
    if (apiKey !== undefined) options.apiKey = apiKey;
    return new ServiceDelegationClient(resolve(options, (option) => DELEGATION_ENV[option]));
  }

  /** The audience of requests (the base URL without a trailing slash). */
  get audience(): string {
    return this.#config.audience;
  }

  /**
   * Starts a change of the user's MFA method. A user with a second factor proves it first
   * (`current_factor_needed`). Otherwise the service sends a code to the new method (email;
   * SMS to `phoneNumber`), or for `totp` returns the `otpauth_uri` and `secret` to show.
   *
   * @throws {@link DelegationRequestError} bad input (`ERR_DELEGATION_INPUT_INVALID`, before any
   *   request), service refusal, network or timeout
   * @throws {@link DelegationResponseError} the answer cannot be trusted
   */
  async initiateMfaChange(options: InitiateMfaChangeOptions): Promise<MfaChangeResult> {
    const { userid, mfaMethod, phoneNumber } = (options ?? {}) as Partial<InitiateMfaChangeOptions>;
    const body: DelegationRequestBodies['initiate_mfa_change'] = { userid: requireInput('userid', userid), mfaMethod: method(mfaMethod) };
    if (body.mfaMethod === MfaMethod.SMS) body.phoneNumber = requireInput('phoneNumber', phoneNumber, ' (required when mfaMethod is sms)');
    const result = await this.#call('initiate_mfa_change', body);
    return changeStep(result, ['current_factor_needed', 'otp_sent', 'totp_pending', 'failed'], 'initiate_mfa_change');
  }

  /**
   * Passes one step of the change with the code the user received: the current factor's code
   * (answer: the next step, `otp_sent` or `totp_pending`), then the new method's code; the
   * change applies only on `'success'`.
   *
   * @throws {@link DelegationRequestError} bad input (`otp` neither 6 digits nor a recovery code…), refusal, network or timeout
   * @throws {@link DelegationResponseError} the answer cannot be trusted
   */
  async verifyMfaChange(options: VerifyMfaChangeOptions): Promise<VerifyMfaChangeResult> {
    const { userid, sessionId, otp } = (options ?? {}) as Partial<VerifyMfaChangeOptions>;
    const body = { userid: requireInput('userid', userid), sessionId: requireInput('sessionId', sessionId), otp: requireInput('otp', otp) };
    if (!OTP_PATTERN.test(body.otp) && !RECOVERY_CODE_PATTERN.test(body.otp)) throw inputError('otp must be 6 digits or a recovery code');
    const result = await this.#call('verify_mfa_change', body);
    if (result.status === 'success' || result.status === 'failed')
      return pick(result, { status: result.status }, ['message'], 'verify_mfa_change');
    return changeStep(result, ['otp_sent', 'totp_pending'], 'verify_mfa_change') as VerifyMfaChangeResult;
  }

  /**
   * Reads the user's current MFA method. An unknown user gets the same shape as a user without MFA.
   *
   * @throws {@link DelegationRequestError} bad input, refusal, network or timeout
   * @throws {@link DelegationResponseError} the answer cannot be trusted
   */
  async getUserCredentials(userid: string): Promise<UserCredentials> {
    const result = await this.#call('get_user_credentials', { userid: requireInput('userid', userid) });
    if (typeof result.mfa_method !== 'string' || typeof result.status !== 'string') throw invalidResult('get_user_credentials');
    return pick(result, { mfa_method: result.mfa_method, status: result.status }, ['message'], 'get_user_credentials');
  }

  /**
   * Lists the user's trusted devices for this application (`id`, `name`, `browser`, `os`,
   * `created_at`, `last_used_at`, times in epoch milliseconds). Tie a session to the ID token's
   * `device_id` claim and end it when that device is no longer listed.
   *
   * @throws {@link DelegationRequestError} bad input, refusal, network or timeout
   * @throws {@link DelegationResponseError} the answer cannot be trusted
   *
   * @example
   * ```ts
   * const { status, devices } = await client.listDevices('ann@example.com');
   * if (status === 'success') for (const d of devices) console.log(d.name, new Date(d.created_at));
   * ```
   */
  async listDevices(userid: string): Promise<DeviceList> {
    const result = await this.#call('list_devices', { userid: requireInput('userid', userid) });
    const devices = result.devices;
    if ((result.status !== 'success' && result.status !== 'failed') || !Array.isArray(devices) || !devices.every(isDevice)) {
      throw invalidResult('list_devices');
    }
    return pick(result, { status: result.status, devices: devices.map(copyDevice) }, ['message'], 'list_devices');
  }

  /**
   * Revokes one of the user's devices: its next sign-in needs the email OTP again.
   * `'failed'` when it is not a trusted device of that user for this application.
   *
   * @throws {@link DelegationRequestError} bad input, refusal, network or timeout
   * @throws {@link DelegationResponseError} the answer cannot be trusted
   *
   * @example
   * ```ts
   * await client.revokeDevice('ann@example.com', 'dev_...');
   * ```
   */
  async revokeDevice(userid: string, deviceId: string): Promise<RevokeDeviceResult> {
    const body = { userid: requireInput('userid', userid), deviceId: requireInput('deviceId', deviceId) };
    const result = await this.#call('revoke_device', body);
    if (result.status !== 'success' && result.status !== 'failed') throw invalidResult('revoke_device');
    return pick(result, { status: result.status }, ['message'], 'revoke_device');
  }

  /**
   * Revokes every device of the user for this application ("sign out everywhere", e.g. after
   * an account compromise). `revoked` says how many.
   *
   * @throws {@link DelegationRequestError} bad input, refusal, network or timeout
   * @throws {@link DelegationResponseError} the answer cannot be trusted
   *
   * @example
   * ```ts
   * const { revoked } = await client.revokeAllDevices('ann@example.com');
   * ```
   */
  async revokeAllDevices(userid: string): Promise<RevokeAllDevicesResult> {
    const result = await this.#call('revoke_all_devices', { userid: requireInput('userid', userid) });
    const revoked = result.revoked;
    if ((result.status !== 'success' && result.status !== 'failed') || !Number.isSafeInteger(revoked)) {
      throw invalidResult('revoke_all_devices');
    }
    return pick(result, { status: result.status, revoked: revoked as number }, ['message'], 'revoke_all_devices');
  }

  async #call<Op extends DelegationOp>(op: Op, body: DelegationRequestBodies[Op]): Promise<Record<string, unknown>> {
    const config = this.#config;
    const claims = requestClaims({ iss: config.spId, aud: config.audience, op, body, ttlSeconds: DELEGATION_REQUEST_TTL_SECONDS });
    const jwe = await sealEnvelope({
      claims: claims as DelegationClaims,
      signingKey: config.keys.spSigningKey,
      encryptionKey: config.keys.idpEncryptionKey,
    });

    const headers: Record<string, string> = { 'content-type': DELEGATION_CONTENT_TYPE, accept: DELEGATION_CONTENT_TYPE };
    if (config.apiKey !== undefined) headers.authorization = `Bearer ${config.apiKey}`;
    const signal = AbortSignal.timeout(config.timeoutMs);
    let response: Response;
    let text: string;
    try {
      // A redirect would carry the API key elsewhere: refuse it.
      response = await config.fetch(config.endpoint, { method: 'POST', headers, body: jwe, redirect: 'error', signal });
      text = await response.text();
    } catch (cause) {
      if (signal.aborted) {
        throw new DelegationRequestError(`delegation service did not answer within ${config.timeoutMs} ms`, {
          code: 'ERR_DELEGATION_TIMEOUT',
          cause,
        });
      }
      throw new DelegationRequestError(`delegation service ${new URL(config.endpoint).origin} could not be reached`, {
        code: 'ERR_DELEGATION_NETWORK',
        cause,
      });
    }

    if (response.status !== 200) throw refusal(response.status, text);
    const mediaType = response.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
    if (mediaType !== DELEGATION_CONTENT_TYPE) {
      throw new DelegationResponseError(`delegation answer is not ${DELEGATION_CONTENT_TYPE} (an unsealed answer is never trusted)`, {
        status: response.status,
      });
    }
    try {
      const opened = await openEnvelope(text.trim(), {
        decryptionKey: config.keys.spEncryptionKey,
        verifyKey: config.keys.idpVerifyKey,
        audience: config.spId,
        issuer: config.audience,
        expectedOp: op,
        inResponseTo: claims.jti,
      });
      return (opened as { result: Record<string, unknown> }).result;
    } catch (cause) {
      if (!(cause instanceof DelegationEnvelopeError)) throw cause;
      throw new DelegationResponseError(`delegation answer refused: ${cause.message}`, { reason: cause.code, status: 200, cause });
    }
  }
}

function resolve(options: DelegationClientOptions, nameOf: (option: keyof typeof DELEGATION_ENV) => string): Config {
  const keys = {} as Config['keys'];
  for (const [option, kind] of KEY_OPTIONS) {
    keys[option] = loadDelegationKey(options[option], kind, nameOf(option));
  }
  const spId = options.spId;
  if (typeof spId !== 'string' || spId.trim() === '') {
    throw new DelegationConfigError(`${nameOf('spId')} is missing (the SP id: its OAuth client ID)`, { option: nameOf('spId') });
  }
  const audience = baseUrl(options.baseUrl, nameOf('baseUrl'));
  const apiKey = options.apiKey === undefined || options.apiKey === '' ? undefined : options.apiKey;
  if (apiKey !== undefined && typeof apiKey !== 'string') {
    throw new DelegationConfigError(`${nameOf('apiKey')} must be a string`, { option: nameOf('apiKey') });
  }
  const timeoutMs = options.timeoutMs ?? DELEGATION_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) {
    throw new DelegationConfigError('timeoutMs must be a positive integer', { option: 'timeoutMs' });
  }
  const fetchFn = options.fetch ?? globalThis.fetch;
  if (typeof fetchFn !== 'function') throw new DelegationConfigError('fetch must be a function', { option: 'fetch' });
  return { keys, audience, endpoint: `${audience}${DELEGATION_PATH}`, spId, apiKey, fetch: fetchFn, timeoutMs };
}

/** DESIGN: all traffic over HTTPS; plain HTTP only to the local machine. Returns the audience. */
function baseUrl(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new DelegationConfigError(`${name} is missing (the service's issuer URL)`, { option: name });
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new DelegationConfigError(`${name} is not a valid URL`, { option: name });
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.has(url.hostname))) {
    throw new DelegationConfigError(`${name} must be an https URL (http is allowed only for localhost)`, { option: name });
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new DelegationConfigError(`${name} must not carry a query, a fragment or credentials`, { option: name });
  }
  return value.trim().replace(/\/+$/, '');
}

function refusal(status: number, text: string): DelegationRequestError {
  let fields: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) fields = parsed as Record<string, unknown>;
  } catch {
    // not JSON: keep the status only
  }
  const serviceCode = typeof fields.code === 'string' ? fields.code.slice(0, 100) : undefined;
  const serviceMessage = typeof fields.message === 'string' ? fields.message.slice(0, 500) : undefined;
  const detail =
    serviceCode === undefined ? `HTTP ${status}` : `HTTP ${status} ${serviceCode}${serviceMessage ? `: ${serviceMessage}` : ''}`;
  return new DelegationRequestError(`delegation service refused the request (${detail})`, {
    code: 'ERR_DELEGATION_REQUEST_FAILED',
    status,
    serviceCode,
    serviceMessage,
  });
}

function inputError(message: string): DelegationRequestError {
  return new DelegationRequestError(message, { code: 'ERR_DELEGATION_INPUT_INVALID' });
}

function requireInput(name: string, value: unknown, hint = ''): string {
  if (typeof value !== 'string' || value.trim() === '') throw inputError(`${name} must be a non-empty string${hint}`);
  return value;
}

function method(value: unknown): MfaMethod {
  if (typeof value !== 'string' || !MFA_METHODS.includes(value)) {
    throw inputError(`mfaMethod must be one of ${MFA_METHODS.map((m) => `'${m}'`).join(', ')}`);
  }
  return value as MfaMethod;
}

function isDevice(value: unknown): value is DelegationDevice {
  const d = value as Record<string, unknown> | null;
  return (
    typeof d === 'object' &&
    d !== null &&
    ['id', 'name', 'browser', 'os'].every((k) => typeof d[k] === 'string') &&
    Number.isSafeInteger(d.created_at) &&
    (d.last_used_at === null || Number.isSafeInteger(d.last_used_at))
  );
}

/** Only the documented fields of a device, nothing else from the answer. */
const copyDevice = ({ id, name, browser, os, created_at, last_used_at }: DelegationDevice): DelegationDevice => ({
  id,
  name,
  browser,
  os,
  created_at,
  last_used_at,
});

function invalidResult(op: DelegationOp): DelegationResponseError {
  return new DelegationResponseError(`delegation answer to ${op} has a result of the wrong shape`, { status: 200 });
}

/** Copies the checked fields and the optional string fields; nothing else from the answer. */
/** A sealed MFA-change step, its status one of `allowed`, its optional fields strings. */
function changeStep(result: Record<string, unknown>, allowed: MfaChangeStep['status'][], op: DelegationOp): MfaChangeStep {
  const status = result.status as MfaChangeStep['status'];
  if (typeof result.session_id !== 'string' || !allowed.includes(status)) throw invalidResult(op);
  const step: MfaChangeStep = pick(
    result,
    { session_id: result.session_id, status },
    ['message', 'current_method', 'otpauth_uri', 'secret'],
    op,
  );
  // A user's method in force may also be a passkey, which a backend cannot enroll (so MfaMethod leaves it out).
  if (step.current_method !== undefined && ![...MFA_METHODS, 'passkey'].includes(step.current_method)) throw invalidResult(op);
  return step;
}

function pick<T extends object>(result: Record<string, unknown>, base: T, optional: string[], op: DelegationOp): T {
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const name of optional) {
    const value = result[name];
    if (value === undefined) continue;
    if (typeof value !== 'string') throw invalidResult(op);
    out[name] = value;
  }
  return out as T;
}
