import { Status } from './statuses.js';

/**
 * Error codes the service sends in `{ code, message }` bodies. Codes never change once
 * published. Each maps to one HTTP status and to the browser status the library returns.
 */
export const ErrorCodes = {
  ERR_REQUEST_INVALID: { http: 400, status: Status.INVALID_REQUEST },
  ERR_EMAIL_INVALID: { http: 400, status: Status.INVALID_EMAIL },
  ERR_CLIENT_KEY_INVALID: { http: 401, status: Status.INVALID_API_KEY },
  ERR_CLIENT_ORIGIN_NOT_ALLOWED: { http: 403, status: Status.INVALID_API_KEY },
  ERR_OTP_INVALID: { http: 400, status: Status.INVALID_OTP },
  ERR_OTP_EXPIRED: { http: 400, status: Status.OTP_EXPIRED },
  /** A right TOTP code of a time step already used: wait for the next code. No guess is spent. */
  ERR_OTP_USED: { http: 400, status: Status.INVALID_OTP },
  ERR_SESSION_INVALID: { http: 400, status: Status.SESSION_EXPIRED },
  ERR_SESSION_STEP: { http: 409, status: Status.INVALID_REQUEST },
  ERR_DEVICE_KEY_INVALID: { http: 400, status: Status.INVALID_REQUEST },
  ERR_RATE_LIMITED: { http: 429, status: Status.RATE_LIMITED },
  ERR_ACCOUNT_LOCKED: { http: 423, status: Status.ACCOUNT_LOCKED },
  ERR_DELIVERY_FAILED: { http: 503, status: Status.SERVICE_ERROR },
  ERR_NOT_FOUND: { http: 404, status: Status.INVALID_REQUEST },
  /** The device proof was refused: no proof, a forged one, or a revoked or expired device. */
  ERR_DEVICE_UNTRUSTED: { http: 401, status: Status.DEVICE_KEY_UNAVAILABLE },
  /** No such device among the user's devices for this client (unknown and foreign ids alike). */
  ERR_DEVICE_NOT_FOUND: { http: 404, status: Status.INVALID_REQUEST },
  /** Delegation (backend to backend): the envelope could not be opened or its claims are wrong. */
  ERR_DELEGATION_INVALID: { http: 401, status: Status.INVALID_REQUEST },
  /** Delegation: this request id (jti) was seen before. */
  ERR_DELEGATION_REPLAYED: { http: 409, status: Status.INVALID_REQUEST },
  /** Delegation: no keys were made for this client (service-idp clients delegation-keys). */
  ERR_DELEGATION_NOT_CONFIGURED: { http: 403, status: Status.INVALID_REQUEST },
  ERR_UNAVAILABLE: { http: 503, status: Status.SERVICE_ERROR },
  ERR_INTERNAL: { http: 500, status: Status.SERVICE_ERROR },
} as const;

export type ErrorCode = keyof typeof ErrorCodes;

/** Body of every non-OAuth error response. */
export interface ErrorBody {
  code: ErrorCode;
  message: string;
  /** Seconds until a rate-limited or locked request may be retried. */
  retryAfter?: number;
  /** Wrong guesses still allowed on this OTP challenge, on ERR_OTP_INVALID. */
  attemptsRemaining?: number;
}

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ErrorCodes, value);
}

/** RFC 6749 5.2 error codes used by the token endpoint. */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'server_error'
  | 'temporarily_unavailable';

export interface OAuthErrorBody {
  error: OAuthErrorCode;
  error_description: string;
}
