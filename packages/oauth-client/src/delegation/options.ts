import type { KeyObject } from 'node:crypto';
import type { DelegationResults } from 'service-protocol';

/**
 * The MFA methods a backend can move a user to (spec: MfaMethod). Use the names (`MfaMethod.SMS`)
 * or the values (`'sms'`). A passkey is not among them: its ceremony needs the user's
 * authenticator, so the user enrolls it in the browser (service-web/passkeys); a user whose
 * method is a passkey shows `current_method: 'passkey'`, and a recovery code stands in for it.
 */
export const MfaMethod = { EMAIL: 'email', SMS: 'sms', TOTP: 'totp' } as const;
/** One of `'email'`, `'sms'`, `'totp'`. */
export type MfaMethod = (typeof MfaMethod)[keyof typeof MfaMethod];

export const MFA_METHODS: readonly string[] = Object.values(MfaMethod);

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
