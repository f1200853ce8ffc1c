import { type CaptchaChallenge, type ErrorCode, ErrorHttpStatus, type OAuthErrorCode, type SendChallenge } from 'service-protocol';

/**
 * An error the service may show to a caller: a stable code, its HTTP status, a message
 * written for the caller. Anything else that escapes a handler becomes a bare 500.
 */
export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly expose: boolean;
  readonly details: { retryAfter?: number; attemptsRemaining?: number; challenge?: SendChallenge | CaptchaChallenge };

  constructor(code: ErrorCode, message: string, details: ServiceError['details'] = {}, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'ServiceError';
    this.code = code;
    this.status = ErrorHttpStatus[code];
    this.expose = this.status < 500 || code === 'ERR_DELIVERY_FAILED' || code === 'ERR_UNAVAILABLE';
    this.details = details;
  }
}

/** RFC 6749 5.2 error from the token endpoint. */
export class OAuthError extends Error {
  readonly error: OAuthErrorCode;
  readonly status: number;

  constructor(error: OAuthErrorCode, description: string, status = 400) {
    super(description);
    this.name = 'OAuthError';
    this.error = error;
    this.status = error === 'invalid_client' ? 401 : status;
  }
}

/** A setting the operator got wrong (a flag, a variable, a file they gave): one line naming it, exit 2. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
