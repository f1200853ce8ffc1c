/** Request and response bodies, JSON unless noted. Field names are camelCase on the wire. */
import type { MfaMethod } from './statuses.js';

/** GET /v1/client: what init() learns about the key it was given. */
export interface ClientInfoResponse {
  clientId: string;
  name: string;
  issuer: string;
}

/** POST /v1/device-challenges: a single-use nonce the device signs. */
export interface DeviceChallengeResponse {
  challenge: string;
  expiresIn: number;
}

/** POST /v1/authenticate */
export interface AuthenticateRequest {
  userid: string;
  cryptoVersion: string;
  rememberDevice?: boolean;
  codeChallenge?: string;
  codeChallengeMethod?: 'S256';
  /** Compact JWS made by a remembered device; see device-proof.ts. */
  deviceProof?: string;
}

export type AuthenticateResponse =
  | { status: 'SUCCESS'; message: string; success: true; code: string }
  | { status: 'OTP_NEEDED'; message: string; deviceToken: string; code?: string }
  | { status: 'MFA_REQUIRED'; message: string; sessionId: string; method: MfaMethod };

/** POST /v1/email-otp/verify */
export interface VerifyEmailOtpRequest {
  userid: string;
  deviceToken: string;
  otp: string;
}

export interface VerifyEmailOtpResponse {
  status: 'SUCCESS';
  message: string;
}

/** An EC P-256 public key as a JWK (RFC 7517), the only device key type of cryptoVersion v1. */
export interface DevicePublicJwk {
  kty: 'EC';
  crv: 'P-256';
  x: string;
  y: string;
}

/** POST /v1/devices */
export interface VerifyDeviceRequest {
  userid: string;
  deviceToken: string;
  /** Present when the device is to be remembered (authenticate's rememberDevice). */
  devicePublicKey?: DevicePublicJwk;
  mfaMethod?: MfaMethod;
}

export interface VerifyDeviceResponse {
  status: 'SUCCESS';
  message: string;
  code: string;
  /** Set when a device key was registered; the device signs its proofs with this id as `kid`. */
  deviceId?: string;
}

/** POST /oauth/token, application/x-www-form-urlencoded (RFC 6749 4.1.3). */
export interface TokenRequest {
  grant_type: 'authorization_code';
  code: string;
  code_verifier?: string;
  client_id?: string;
  client_secret?: string;
  redirect_uri?: string;
}

/** RFC 6749 5.1 plus the OIDC id_token. */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  id_token: string;
  scope: string;
}
