import type { MfaMethod } from 'service-protocol';

/** Options of {@link ServiceClient.init}. */
export interface InitOptions {
  /** Device-proof scheme; only 'v1' exists. Default 'v1'. */
  cryptoVersion?: string;
  /** Timeout of each request in milliseconds. Default 15000. */
  timeoutMs?: number;
}

/** Options of {@link ServiceClient.authenticate}; names follow the spec. */
export interface AuthenticateOptions {
  /** Register a device key after the email OTP so that the next login skips it. */
  rememberDevice?: boolean;
  /** PKCE S256 challenge (RFC 7636), see createPkcePair. */
  code_challenge?: string;
  /** Only 'S256' is accepted; defaults to 'S256' when code_challenge is set. */
  code_challenge_method?: string;
}

/** Statuses that report a failure; every operation can return them. */
export type FailureStatus =
  | 'INVALID_EMAIL'
  | 'NOT_INITIALIZED'
  | 'INVALID_API_KEY'
  | 'INVALID_REQUEST'
  | 'INVALID_OTP'
  | 'OTP_EXPIRED'
  | 'SESSION_EXPIRED'
  | 'RATE_LIMITED'
  | 'ACCOUNT_LOCKED'
  | 'DEVICE_KEY_UNAVAILABLE'
  | 'NETWORK_ERROR'
  | 'TIMEOUT'
  | 'SERVICE_ERROR';

/** What every operation returns when it fails. It never throws. */
export interface FailureResult {
  status: FailureStatus;
  message: string;
  /** Present (false) on the operations whose result has a `success` field. */
  success?: false;
  /** Seconds until a rate-limited or locked request may be retried. */
  retryAfter?: number;
  /** Wrong guesses still allowed on the current OTP challenge (INVALID_OTP). */
  attemptsRemaining?: number;
}

/** Result of {@link ServiceClient.init}. */
export type InitializationResult = { status: 'INITIALIZED'; message: string; success: true } | (FailureResult & { success: false });

/** Result of {@link ServiceClient.authenticate}; the fields present depend on `status`. */
export type AuthenticationResult =
  | { status: 'SUCCESS'; message: string; success: true; code: string }
  | { status: 'OTP_NEEDED'; message: string; deviceToken: string; code?: string }
  | { status: 'MFA_REQUIRED'; message: string; sessionId: string; method: MfaMethod }
  | FailureResult;

/** Result of {@link ServiceClient.verifyEmailOtp}. */
export type VerifyEmailOtpResult = { status: 'SUCCESS'; message: string } | FailureResult;

/** Result of {@link ServiceClient.verifyDevice}. */
export type VerifyDeviceResult =
  | {
      status: 'SUCCESS' | 'DEVICE_REGISTERED';
      message: string;
      code: string;
      /** True when a device key was stored, so the next authenticate skips the email OTP. */
      deviceRemembered: boolean;
    }
  | { status: 'MFA_ENROLLMENT_NEEDED' | 'FINALIZE_REGISTRATION_NEEDED'; message: string; code?: string }
  | FailureResult;

/** Result of {@link ServiceClient.initiateMfa}. */
export type InitiateMfaResult = { status: 'MFA_INITIATED'; message: string } | FailureResult;

/** Result of {@link ServiceClient.verifyMfa}. */
export type VerifyMfaResult = { status: 'SUCCESS'; message: string; success: true; code: string } | FailureResult;
