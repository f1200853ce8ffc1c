import { Status } from './statuses.js';

/**
 * Error codes the service sends in `{ code, message }` bodies, and the browser status each maps
 * to. Codes never change once published. Each also has one HTTP status (ErrorHttpStatus); the
 * two tables are apart so that the browser library ships only this one.
 */
export const ErrorStatus = {
  ERR_REQUEST_INVALID: Status.INVALID_REQUEST,
  ERR_EMAIL_INVALID: Status.INVALID_EMAIL,
  ERR_CLIENT_KEY_INVALID: Status.INVALID_API_KEY,
  ERR_CLIENT_ORIGIN_NOT_ALLOWED: Status.INVALID_API_KEY,
  /** The admin API's key is missing, unknown or revoked (one answer for all three). */
  ERR_ADMIN_KEY_INVALID: Status.INVALID_API_KEY,
  /**
   * The operator console: a viewer asked for a change, or a console call came without its
   * per-session token or from another origin.
   */
  ERR_FORBIDDEN: Status.INVALID_REQUEST,
  ERR_OTP_INVALID: Status.INVALID_OTP,
  ERR_OTP_EXPIRED: Status.OTP_EXPIRED,
  /** A right TOTP code of a time step already used: wait for the next code. No guess is spent. */
  ERR_OTP_USED: Status.INVALID_OTP,
  ERR_SESSION_INVALID: Status.SESSION_EXPIRED,
  ERR_SESSION_STEP: Status.INVALID_REQUEST,
  ERR_DEVICE_KEY_INVALID: Status.INVALID_REQUEST,
  ERR_RATE_LIMITED: Status.RATE_LIMITED,
  /**
   * Risk is raised (many codes asked from this address, its network, or the whole service): this
   * send needs a solved proof of work first. The body's `challenge` is a fresh one; retry the same
   * request with its solution in CHALLENGE_SOLUTION_HEADER. Nothing was sent or counted as sent.
   */
  ERR_CHALLENGE_REQUIRED: Status.CHALLENGE_REQUIRED,
  ERR_ACCOUNT_LOCKED: Status.ACCOUNT_LOCKED,
  ERR_DELIVERY_FAILED: Status.SERVICE_ERROR,
  ERR_NOT_FOUND: Status.INVALID_REQUEST,
  /** The device proof was refused: no proof, a forged one, or a revoked or expired device. */
  ERR_DEVICE_UNTRUSTED: Status.DEVICE_KEY_UNAVAILABLE,
  /** No such device among the user's devices for this client (unknown and foreign ids alike). */
  ERR_DEVICE_NOT_FOUND: Status.INVALID_REQUEST,
  /** Delegation (backend to backend): the envelope could not be opened or its claims are wrong. */
  ERR_DELEGATION_INVALID: Status.INVALID_REQUEST,
  /** Delegation: this request id (jti) was seen before. */
  ERR_DELEGATION_REPLAYED: Status.INVALID_REQUEST,
  /** Delegation: no keys were made for this client (service-idp clients delegation-keys). */
  ERR_DELEGATION_NOT_CONFIGURED: Status.INVALID_REQUEST,
  /**
   * A passkey ceremony was refused: the credential is unknown, revoked, another site's or
   * another user's, its signature or user verification failed, or its counter went back
   * (a cloned authenticator). service-web/passkeys shows it as PASSKEY_REFUSED.
   */
  ERR_PASSKEY_INVALID: Status.INVALID_REQUEST,
  /**
   * An upstream provider's answer was refused: unknown or spent state, another browser's, a
   * provider error, or an ID token that does not check out (issuer, audience, nonce, signature).
   */
  ERR_UPSTREAM_REFUSED: Status.INVALID_REQUEST,
  /**
   * The application requires a second factor, and the user's method cannot be one after this
   * sign-in's first factor: a code mailed after the new-device email code proves the same
   * mailbox (or, at the operator console, a method other than an authenticator app or a passkey).
   */
  ERR_MFA_UNAVAILABLE: Status.MFA_UNAVAILABLE,
  ERR_UNAVAILABLE: Status.SERVICE_ERROR,
  ERR_INTERNAL: Status.SERVICE_ERROR,
} as const;

export type ErrorCode = keyof typeof ErrorStatus;

/** The HTTP status of each error code (the service's side of the table). */
export const ErrorHttpStatus = {
  ERR_REQUEST_INVALID: 400,
  ERR_EMAIL_INVALID: 400,
  ERR_CLIENT_KEY_INVALID: 401,
  ERR_CLIENT_ORIGIN_NOT_ALLOWED: 403,
  ERR_ADMIN_KEY_INVALID: 401,
  ERR_FORBIDDEN: 403,
  ERR_OTP_INVALID: 400,
  ERR_OTP_EXPIRED: 400,
  ERR_OTP_USED: 400,
  ERR_SESSION_INVALID: 400,
  ERR_SESSION_STEP: 409,
  ERR_DEVICE_KEY_INVALID: 400,
  ERR_RATE_LIMITED: 429,
  ERR_CHALLENGE_REQUIRED: 428,
  ERR_ACCOUNT_LOCKED: 423,
  ERR_DELIVERY_FAILED: 503,
  ERR_NOT_FOUND: 404,
  ERR_DEVICE_UNTRUSTED: 401,
  ERR_DEVICE_NOT_FOUND: 404,
  ERR_DELEGATION_INVALID: 401,
  ERR_DELEGATION_REPLAYED: 409,
  ERR_DELEGATION_NOT_CONFIGURED: 403,
  ERR_PASSKEY_INVALID: 401,
  ERR_UPSTREAM_REFUSED: 401,
  ERR_MFA_UNAVAILABLE: 403,
  ERR_UNAVAILABLE: 503,
  ERR_INTERNAL: 500,
} as const satisfies Record<ErrorCode, number>;

/** Body of every non-OAuth error response. */
export interface ErrorBody {
  code: ErrorCode;
  message: string;
  /** Seconds until a rate-limited or locked request may be retried. */
  retryAfter?: number;
  /** Wrong guesses still allowed on this OTP challenge, on ERR_OTP_INVALID. */
  attemptsRemaining?: number;
  /**
   * On ERR_CHALLENGE_REQUIRED: what to solve before retrying, by its `kind`: the service's proof of
   * work (`'pow'`, or no `kind` from a service before it was added), or the operator's CAPTCHA.
   */
  challenge?: SendChallenge | CaptchaChallenge;
}

/** Which send challenge the service asks: its own proof of work, or the CAPTCHA its operator configured. */
export type SendChallengeKind = 'pow' | CaptchaChallenge['kind'];

/**
 * A proof-of-work challenge (ALTCHA v2, `SHA-256`, deterministic mode), signed by the service
 * and bound to one address and endpoint. Solving it: find the 32-bit counter whose
 * SHA-256(salt ‖ nonce ‖ counter as 4 big-endian bytes) starts with `keyPrefix` (hex), iterated
 * `cost` times over its own digest; the counter is at most a few tens of thousands.
 */
export interface SendChallenge {
  /** Always `'pow'` from a service that has CAPTCHAs too; absent before. */
  kind?: 'pow';
  parameters: {
    algorithm: 'SHA-256';
    cost: number;
    /** Seconds since the epoch after which no solution is accepted. */
    expiresAt: number;
    keyLength: number;
    keyPrefix: string;
    nonce: string;
    salt: string;
    /** The address and endpoint it was issued for, as a keyed hash. */
    data: { binding: string };
  };
  signature: string;
}

/**
 * The operator's CAPTCHA (Cloudflare Turnstile or hCaptcha), in place of the proof of work:
 * render the provider's widget with `siteKey` (and, for Turnstile, `action`) on the page that
 * makes the request, and send the token it returns as the solution. The service checks it with
 * the provider once: for this page's hostname (the request's Origin) and, for Turnstile, this action.
 */
export interface CaptchaChallenge {
  kind: 'turnstile' | 'hcaptcha';
  /** The operator's public site key for the widget. */
  siteKey: string;
  /** The endpoint the token is for (Turnstile's `action`: letters, digits, `-` and `_`, at most 32). */
  action: string;
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ErrorStatus, value);
}

/** RFC 6749 5.2 error codes used by the token endpoint. */
export const OAUTH_ERROR_CODES = [
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'server_error',
  'temporarily_unavailable',
  // RFC 9449 12.2: a DPoP proof that is missing (where required), malformed or fails a check; and a proof without the server's current nonce (8).
  'invalid_dpop_proof',
  'use_dpop_nonce',
  // RFC 8707 2: a resource that is not one the request may name (not registered, not asked for at /authorize, or several at once).
  'invalid_target',
  // RFC 7591 3.2.2: a registration's redirect URI or other metadata refused; RFC 7592 3 / RFC 6750 3.1: a registration access token or initial access token refused (401).
  'invalid_redirect_uri',
  'invalid_client_metadata',
  'invalid_token',
  // RFC 8628 3.5: the device code's answers while the user has not approved it (pending, polled too fast), denied, or expired.
  'authorization_pending',
  'slow_down',
  'access_denied',
  'expired_token',
] as const;
export type OAuthErrorCode = (typeof OAUTH_ERROR_CODES)[number];

export interface OAuthErrorBody {
  error: OAuthErrorCode;
  error_description: string;
}

/** RFC 6750 3.1: the userinfo endpoint's answer to a missing, invalid or expired access token (401). */
export interface BearerErrorBody {
  /** RFC 6750 3.1; RFC 9449 7.1 and 9 for a DPoP-bound token: the proof is invalid, or lacks the current nonce. */
  error: 'invalid_token' | 'invalid_dpop_proof' | 'use_dpop_nonce';
  error_description: string;
}
