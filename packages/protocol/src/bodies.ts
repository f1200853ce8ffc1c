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
  /**
   * `deviceRefused`: the request carried a device proof the service did not accept (forged,
   * replayed, or a revoked or expired device): the browser drops its stored key.
   */
  | { status: 'OTP_NEEDED'; message: string; deviceToken: string; code?: string; deviceRefused?: true }
  | { status: 'MFA_REQUIRED'; message: string; sessionId: string; method: MfaMethod }
  /**
   * The address's domain belongs to an organization that signs its people in with its own
   * provider: go there (service-web/upstream signInWith(connection)); no code was sent.
   */
  | { status: 'UPSTREAM_REQUIRED'; message: string; connection: string };

/** POST /v1/email-otp/verify */
export interface VerifyEmailOtpRequest {
  userid: string;
  deviceToken: string;
  otp: string;
}

export interface VerifyEmailOtpResponse {
  status: 'SUCCESS';
  message: string;
  /**
   * The user already has a second factor: verifyDevice will ask for it (MFA_REQUIRED), so a
   * page offers no enrollment. Told only after the mailbox was proven, so it enumerates nothing.
   */
  mfaEnrolled: boolean;
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
  /** Enrolls the user in this MFA method (only when the user has none yet). */
  mfaMethod?: MfaMethod;
  /** E.164 phone number, required with mfaMethod 'sms'. */
  phoneNumber?: string;
}

export type VerifyDeviceResponse =
  | {
      status: 'SUCCESS';
      message: string;
      code: string;
      /** Set when a device key was registered; the device signs its proofs with this id as `kid`. */
      deviceId?: string;
      /** Set once, when this step enrolled the user in email MFA: the recovery codes to show (never again). */
      recoveryCodes?: string[];
    }
  /** The client requires MFA and the user has none: call verifyDevice again with mfaMethod. */
  | { status: 'MFA_ENROLLMENT_NEEDED'; message: string; methods: MfaMethod[] }
  /**
   * The chosen method needs confirming: call verifyMfa with its first code. For TOTP the
   * answer carries what an authenticator app needs; for SMS the code was just sent.
   */
  | { status: 'FINALIZE_REGISTRATION_NEEDED'; message: string; sessionId: string; method: MfaMethod; otpauthUri?: string; secret?: string }
  /** The user has MFA: a new device passes it too. Call initiateMfa, then verifyMfa. */
  | { status: 'MFA_REQUIRED'; message: string; sessionId: string; method: MfaMethod };

/** POST /v1/mfa/initiate: sends the code (email, SMS); TOTP sends nothing. */
export interface InitiateMfaRequest {
  userid: string;
  sessionId: string;
}

export interface InitiateMfaResponse {
  status: 'MFA_INITIATED';
  message: string;
  method: MfaMethod;
}

/** POST /v1/mfa/verify */
export interface VerifyMfaRequest {
  userid: string;
  sessionId: string;
  otp: string;
  /** Skip MFA on this (remembered) device for the service's remember period (ignored when `otp` is a recovery code). */
  rememberMe?: boolean;
  /** With the factor's own code (not a recovery code): replace the user's recovery codes; the answer carries the new set. */
  regenerateRecoveryCodes?: boolean;
}

export interface VerifyMfaResponse {
  status: 'SUCCESS';
  message: string;
  success: true;
  code: string;
  /** Set when this step finished a device registration that stored a device key. */
  deviceId?: string;
  /** Set once, when this step confirmed an enrollment or regenerated the set: the recovery codes to show (never again). */
  recoveryCodes?: string[];
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

/** POST /oauth/token with grant_type=refresh_token (RFC 6749 6); client authentication as for a code. */
export interface RefreshTokenRequest {
  grant_type: 'refresh_token';
  refresh_token: string;
  /** At most the scope originally granted. */
  scope?: string;
  client_id?: string;
  client_secret?: string;
}

/** RFC 6749 5.1 plus the OIDC id_token. */
export interface TokenResponse {
  access_token: string;
  /** RFC 9449 5: `DPoP` when the token request carried a DPoP proof (the access token is bound to its key, `cnf.jkt`). */
  token_type: 'Bearer' | 'DPoP';
  expires_in: number;
  id_token: string;
  scope: string;
  /**
   * Present when the grant includes `offline_access` (a code from /authorize whose sign-in used a
   * remembered device), and on every refresh: the token to use next time (each works once).
   */
  refresh_token?: string;
}

/**
 * The token endpoint's answer to a machine client's client_credentials request (RFC 6749 4.4.3):
 * an access token for one API, no ID token and no refresh token.
 */
export interface ClientCredentialsTokenResponse {
  access_token: string;
  token_type: 'Bearer' | 'DPoP';
  expires_in: number;
  /** The permissions the access token carries: those asked for (all granted when none were) and granted to the client. */
  scope: string;
}

/** RFC 8628 3.2: the answer of POST /oauth/device_authorization. */
export interface DeviceAuthorizationResponse {
  /** What the device presents at the token endpoint (grant_type urn:ietf:params:oauth:grant-type:device_code). */
  device_code: string;
  /** What the user types at verification_uri: 8 letters shown as XXXX-XXXX. */
  user_code: string;
  verification_uri: string;
  /** verification_uri with the user code filled in (for a QR code); the page still asks the user to confirm. */
  verification_uri_complete: string;
  /** Seconds until both codes expire. */
  expires_in: number;
  /** Seconds the device waits between token requests. */
  interval: number;
}

/** POST /oauth/revoke, application/x-www-form-urlencoded (RFC 7009 2.1); client authentication as at /oauth/token. */
export interface RevocationRequest {
  token: string;
  /** Ignored: the service tells its refresh and access tokens apart itself (RFC 7009 2.1 allows it). */
  token_type_hint?: 'refresh_token' | 'access_token';
  client_id?: string;
  client_secret?: string;
}

/** POST /oauth/revoke answers 200 with this empty object, whether or not the token was known (RFC 7009 2.2). */
export type RevocationResponse = Record<string, never>;

/**
 * POST /oauth/introspect, application/x-www-form-urlencoded (RFC 7662 2.1); a confidential
 * client authenticates as at /oauth/token (a public client may not introspect).
 */
export interface IntrospectionRequest {
  token: string;
  /** Ignored: the service tells its refresh and access tokens apart itself (RFC 7662 2.1 allows it). */
  token_type_hint?: 'refresh_token' | 'access_token';
  client_id?: string;
  client_secret?: string;
}

/**
 * POST /oauth/introspect's answer (RFC 7662 2.2): `{ active: false }` and nothing else for a
 * token that is not live or that the caller may not learn about; else the token's members.
 */
export type IntrospectionResponse =
  | { active: false }
  | {
      active: true;
      /** The permissions (an API's token) or OpenID Connect values it carries, space-separated. */
      scope: string;
      client_id: string;
      sub: string;
      /** Seconds since the epoch. */
      exp: number;
      iat: number;
      iss: string;
      /** An API's identifier; the userinfo endpoint for an access token without resource; absent for a refresh token. */
      aud?: string;
      /** An access token's jti (absent for a refresh token, which is never a JWT). */
      jti?: string;
      /** `Bearer` or `DPoP` (RFC 9449) for an access token, `refresh_token` for a refresh token. */
      token_type: 'Bearer' | 'DPoP' | 'refresh_token';
      /** RFC 9449 6.2: the key a DPoP-bound access token is bound to. */
      cnf?: { jkt: string };
    };

/** GET /oauth/userinfo (OIDC Core 5.3) for the `openid email` scope. */
export interface UserinfoResponse {
  sub: string;
  email: string;
  email_verified: true;
}

/** GET /healthz, and GET /readyz while the database answers. */
export interface HealthResponse {
  status: 'ok';
}
