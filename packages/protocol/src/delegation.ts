/**
 * The delegation envelope's wire contract (docs/delegation.md), shared by the service and
 * service-oauth-client: a nested JWT (RFC 7519 11.2), an EdDSA JWS with `typ` DELEGATION_JWT_TYPE
 * inside an ECDH-ES/A256GCM JWE with `typ` DELEGATION_JWE_TYPE, POSTed to `Paths.delegation` as
 * DELEGATION_CONTENT_TYPE. The envelope's sealing and opening (jose) live in
 * service-oauth-client/delegation; the names, bodies, claims and limits live here, once.
 */

/** Media type of a request and of a 200 response body (RFC 7516 9: compact JWE). */
export const DELEGATION_CONTENT_TYPE = 'application/jose';
/** `typ` of the outer JWE. */
export const DELEGATION_JWE_TYPE = 'delegation+jwe';
/** `typ` of the inner JWS. */
export const DELEGATION_JWT_TYPE = 'delegation+jwt';
/** Longest lifetime of an envelope, `exp − iat`, in seconds: 5 minutes (DESIGN security baseline). */
export const DELEGATION_MAX_TTL_SECONDS = 300;
/** How far in the future `iat` may be, in seconds (the two clocks differ). */
export const DELEGATION_CLOCK_SKEW_SECONDS = 30;
/** Longest `jti` (and `irt`) accepted; ours are 22 characters. */
export const DELEGATION_JTI_MAX_LENGTH = 128;

/** Every operation of the delegation API. */
export const DELEGATION_OPS = [
  'initiate_mfa_change',
  'verify_mfa_change',
  'get_user_credentials',
  'list_devices',
  'revoke_device',
  'revoke_all_devices',
] as const;
/** The operations of the delegation API. */
export type DelegationOp = (typeof DELEGATION_OPS)[number];

/** A device as the application's backend sees it (times are Unix epoch milliseconds). */
export interface DelegationDevice {
  id: string;
  /** The user's name for it, or "browser on os". */
  name: string;
  browser: string;
  os: string;
  created_at: number;
  last_used_at: number | null;
}

/** `body` of a request, by operation. */
export interface DelegationRequestBodies {
  initiate_mfa_change: { userid: string; mfaMethod: 'email' | 'sms' | 'totp'; phoneNumber?: string };
  verify_mfa_change: { userid: string; sessionId: string; otp: string };
  get_user_credentials: { userid: string };
  list_devices: { userid: string };
  revoke_device: { userid: string; deviceId: string };
  revoke_all_devices: { userid: string };
}

/**
 * A step of an MFA change. A user who has a second factor proves it first
 * (`current_factor_needed`: ask for a code of `current_method`, then call verify_mfa_change);
 * then the new method is confirmed (`otp_sent`: a code went to it; `totp_pending`: show
 * `otpauth_uri` or `secret`, then ask for the app's code).
 */
export interface MfaChangeStep {
  session_id: string;
  status: 'current_factor_needed' | 'otp_sent' | 'totp_pending' | 'failed';
  message?: string;
  /**
   * `current_factor_needed` only: the method in force, whose code is asked for first. For
   * `passkey` no code is sent (a passkey cannot be proven through a backend): a recovery code
   * stands in for it.
   */
  current_method?: 'email' | 'sms' | 'totp' | 'passkey';
  /** `totp_pending` only: the `otpauth://` URI to show as a QR code. */
  otpauth_uri?: string;
  /** `totp_pending` only: the base32 secret, for manual entry. */
  secret?: string;
}

/** `result` of a response, by operation. */
export interface DelegationResults {
  initiate_mfa_change: MfaChangeStep;
  /**
   * `success`: the change applied. `otp_sent` / `totp_pending`: the current factor was proven,
   * now confirm the new method with its code under the same session id.
   */
  verify_mfa_change: { status: 'success' | 'failed'; message?: string } | (MfaChangeStep & { status: 'otp_sent' | 'totp_pending' });
  get_user_credentials: { mfa_method: string; status: string; message?: string };
  /** The user's trusted devices for the calling application; `failed` for a user who never signed in to it. */
  list_devices: { status: 'success' | 'failed'; devices: DelegationDevice[]; message?: string };
  /** `failed` when the device is not a trusted device of that user for this application. */
  revoke_device: { status: 'success' | 'failed'; message?: string };
  /** `revoked`: how many devices were signed out. */
  revoke_all_devices: { status: 'success' | 'failed'; revoked: number; message?: string };
}

interface ClaimsBase {
  /** Sender: the SP's id (requests) or the service's issuer URL (responses). */
  iss: string;
  /** Receiver: the service's issuer URL (requests) or the SP's id (responses). */
  aud: string;
  /** Issued at, Unix seconds. */
  iat: number;
  /** Expiry, Unix seconds; `0 < exp − iat ≤ 300`. */
  exp: number;
  /** Unique id, 1 to 128 characters; the receiver refuses it twice. */
  jti: string;
}

/** Claims of a request (SP → service). */
export type DelegationRequestClaims<Op extends DelegationOp = DelegationOp> = {
  [K in Op]: ClaimsBase & { op: K; body: DelegationRequestBodies[K] };
}[Op];

/** Claims of a response (service → SP): `irt` is the request's `jti`. */
export type DelegationResponseClaims<Op extends DelegationOp = DelegationOp> = {
  [K in Op]: ClaimsBase & { op: K; irt: string; result: DelegationResults[K] };
}[Op];

/** Claims of either direction. */
export type DelegationClaims = DelegationRequestClaims | DelegationResponseClaims;
