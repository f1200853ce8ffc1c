import { type DelegationOp, type DelegationRequestBodies, OTP_PATTERN, RECOVERY_CODE_PATTERN } from 'service-protocol';
import { type Config, DELEGATION_ENV, optionsFromEnv, resolveConfig } from './config.js';
import { DelegationConfigError } from './errors.js';
import {
  type DelegationClientOptions,
  type DeviceList,
  type InitiateMfaChangeOptions,
  type MfaChangeResult,
  MfaMethod,
  type RevokeAllDevicesResult,
  type RevokeDeviceResult,
  type UserCredentials,
  type VerifyMfaChangeOptions,
  type VerifyMfaChangeResult,
} from './options.js';
import { changeStep, copyDevice, inputError, invalidResult, isDevice, method, pick, requireInput } from './results.js';
import { callDelegation } from './transport.js';

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
    return new ServiceDelegationClient(resolveConfig(options, (option) => option));
  }

  /**
   * Makes a client from the environment: `SERVICE_BASE_URL`, `SERVICE_API_KEY` (optional),
   * `SP_ED25519_PRIVATE_KEY_PEM`, `SP_X25519_PRIVATE_KEY_PEM`, `IDP_ED25519_PUBLIC_KEY_PEM`,
   * `IDP_X25519_PUBLIC_KEY_PEM`, `OAUTH_CLIENT_ID`. Empty variables count as unset.
   *
   * @throws {@link DelegationConfigError} naming the variable(s) missing or at fault
   */
  static fromEnv(env: NodeJS.ProcessEnv = process.env): ServiceDelegationClient {
    return new ServiceDelegationClient(resolveConfig(optionsFromEnv(env), (option) => DELEGATION_ENV[option]));
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

  #call<Op extends DelegationOp>(op: Op, body: DelegationRequestBodies[Op]): Promise<Record<string, unknown>> {
    return callDelegation(this.#config, op, body);
  }
}
