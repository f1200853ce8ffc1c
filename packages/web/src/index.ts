/**
 * service-web: device-aware passwordless login in the browser. No runtime dependencies.
 *
 * @example
 * ```ts
 * import { ServiceInitializer } from 'service-web';
 * await ServiceInitializer.init('pk_...', 'https://id.example.com');
 * const r = await ServiceInitializer.authenticate('ann@example.com', { rememberDevice: true });
 * ```
 *
 * @packageDocumentation
 */
import { MfaMethod as ProtocolMfaMethod, Status as ProtocolStatus } from 'service-protocol';
import { ServiceClient } from './client.js';

export { DEFAULT_BASE_URL, ServiceClient, type ServiceClientDeps } from './client.js';
export { createPkcePair, type PkcePair, pkceChallengeFromVerifier } from './pkce.js';
export type {
  AuthenticateOptions,
  AuthenticationResult,
  CaptchaChallenge,
  DeviceChangeResult,
  DeviceInfo,
  FailureResult,
  FailureStatus,
  FinalizeRegistrationResult,
  InitializationResult,
  InitiateMfaInput,
  InitiateMfaResult,
  InitOptions,
  ListDevicesResult,
  MfaEnrollmentNeededResult,
  MfaInitiatedResult,
  MfaRequiredResult,
  SendChallenge,
  VerifyDeviceInput,
  VerifyDeviceResult,
  VerifyDeviceSuccessResult,
  VerifyEmailOtpResult,
  VerifyMfaInput,
  VerifyMfaResult,
  VerifyMfaSuccessResult,
} from './types.js';

/**
 * Every status the library returns, as constants (`Status.OTP_NEEDED === 'OTP_NEEDED'`).
 *
 * @example
 * ```ts
 * if (result.status === Status.OTP_NEEDED) showOtpForm();
 * ```
 */
export const Status = ProtocolStatus;
export type Status = ProtocolStatus;

/**
 * The spec's MFA methods: `MfaMethod.EMAIL` ('email'), `MfaMethod.SMS` ('sms'), `MfaMethod.TOTP` ('totp'),
 * and ours, `MfaMethod.PASSKEY` ('passkey'): its enrollment and MFA step are ceremonies of
 * service-web/passkeys (`enrollMfa`, `verifyMfa`).
 *
 * @example
 * ```ts
 * await ServiceInitializer.verifyDevice({ userid, mfaMethod: MfaMethod.TOTP });
 * ```
 */
export const MfaMethod = ProtocolMfaMethod;
export type MfaMethod = ProtocolMfaMethod;

/**
 * The default client the spec calls ServiceInitializer. It reads no browser global until a
 * method runs, so importing this module is safe during server-side rendering.
 *
 * @example
 * ```ts
 * await ServiceInitializer.init('pk_...');
 * const r = await ServiceInitializer.authenticate('ann@example.com');
 * ```
 */
export const ServiceInitializer: ServiceClient = new ServiceClient();
