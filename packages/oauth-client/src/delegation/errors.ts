import { ServiceOAuthError } from '../errors.js';
import type {
  DelegationConfigErrorCode,
  DelegationEnvelopeErrorCode,
  DelegationRequestErrorCode,
  DelegationResponseErrorCode,
} from './error-codes.js';

export type {
  DelegationConfigErrorCode,
  DelegationEnvelopeErrorCode,
  DelegationErrorCode,
  DelegationRequestErrorCode,
  DelegationResponseErrorCode,
} from './error-codes.js';

/**
 * A delegation key or option is missing or unusable: thrown at construction
 * (`ServiceDelegationClient.fromKeys` / `fromEnv`, `loadDelegationKey`) or by `sealEnvelope`
 * for a key of the wrong type. The message names the option or environment variable and the
 * problem (missing, malformed PEM, wrong key type, public where a private key belongs…); it
 * never contains key material.
 *
 * @example
 * ```ts
 * try {
 *   client = ServiceDelegationClient.fromEnv();
 * } catch (err) {
 *   if (err instanceof DelegationConfigError) console.error(err.message); // "SP_X25519_PRIVATE_KEY_PEM is an Ed25519 key; …"
 *   throw err;
 * }
 * ```
 */
export class DelegationConfigError extends ServiceOAuthError {
  static readonly code = 'ERR_DELEGATION_CONFIG';
  declare readonly code: DelegationConfigErrorCode;
  /** The option or environment variable at fault. */
  readonly option: string | undefined;

  constructor(message: string, options: { option?: string; cause?: unknown } = {}) {
    super(DelegationConfigError.code, message, { cause: options.cause });
    this.name = 'DelegationConfigError';
    this.option = options.option;
  }
}

/**
 * A delegation envelope (nested JWT: JWS inside JWE) was refused by `openEnvelope`, or could
 * not be built by `sealEnvelope`. Messages never contain key material or plaintext.
 *
 * | code | when |
 * |---|---|
 * | `ERR_DELEGATION_DECRYPT` | not a compact JWE, header not `ECDH-ES`/`A256GCM`/`cty: JWT`/`typ: delegation+jwe`, wrong key, or tampered |
 * | `ERR_DELEGATION_SIGNATURE` | inner JWS not `EdDSA`, wrong `typ`, or its signature does not verify with the sender's key |
 * | `ERR_DELEGATION_EXPIRED` | `exp` is not after now |
 * | `ERR_DELEGATION_NOT_YET_VALID` | `iat` is more than the clock skew (30 s) in the future |
 * | `ERR_DELEGATION_TTL_TOO_LONG` | `exp − iat` is over the maximum (300 s) or not positive |
 * | `ERR_DELEGATION_AUDIENCE` | `aud` is not exactly the expected audience |
 * | `ERR_DELEGATION_ISSUER` | `iss` is not the expected issuer, or no key is known for it |
 * | `ERR_DELEGATION_REPLY_MISMATCH` | `op` is not the expected operation, or `irt` is not the request's `jti` |
 * | `ERR_DELEGATION_MALFORMED` | a claim is missing or has a wrong type (`claim` names it) |
 */
export class DelegationEnvelopeError extends ServiceOAuthError {
  static readonly code = 'ERR_DELEGATION_MALFORMED';
  declare readonly code: DelegationEnvelopeErrorCode;
  /** The claim that failed, when one did. */
  readonly claim: string | undefined;

  constructor(code: DelegationEnvelopeErrorCode, message: string, options: { claim?: string; cause?: unknown } = {}) {
    super(code, message, { cause: options.cause });
    this.name = 'DelegationEnvelopeError';
    this.claim = options.claim;
  }
}

/**
 * A delegation call did not get an answer it could use.
 *
 * | code | when |
 * |---|---|
 * | `ERR_DELEGATION_INPUT_INVALID` | a bad argument (unknown `mfaMethod`, `phoneNumber` missing for sms, `otp` not 6 digits…); no request was sent |
 * | `ERR_DELEGATION_REQUEST_FAILED` | the service answered non-200: `status`, and its `{ code, message }` as `serviceCode`, `serviceMessage` |
 * | `ERR_DELEGATION_NETWORK` | the service could not be reached (or it redirected) |
 * | `ERR_DELEGATION_TIMEOUT` | no complete answer within `timeoutMs` |
 *
 * A non-200 answer is not authenticated (only 200 answers are sealed), so it can tell you that
 * a call failed, never that it succeeded.
 */
export class DelegationRequestError extends ServiceOAuthError {
  static readonly code = 'ERR_DELEGATION_REQUEST_FAILED';
  declare readonly code: DelegationRequestErrorCode;
  /** HTTP status of the service's answer, when there was one. */
  readonly status: number | undefined;
  /** The service's error `code` (e.g. `ERR_DELEGATION_REPLAY`), when it sent one. */
  readonly serviceCode: string | undefined;
  /** The service's error `message`, when it sent one. */
  readonly serviceMessage: string | undefined;

  constructor(
    message: string,
    options: {
      code?: DelegationRequestErrorCode;
      status?: number | undefined;
      serviceCode?: string | undefined;
      serviceMessage?: string | undefined;
      cause?: unknown;
    } = {},
  ) {
    super(options.code ?? DelegationRequestError.code, message, { cause: options.cause });
    this.name = 'DelegationRequestError';
    this.status = options.status;
    this.serviceCode = options.serviceCode;
    this.serviceMessage = options.serviceMessage;
  }
}

/**
 * A 200 answer of the service could not be trusted: not `application/jose`, not sealed for this
 * SP, not signed by the identity provider's key, stale, bound to another request, or with a
 * result of the wrong shape. `reason` holds the envelope's code when opening it failed, and
 * `cause` the {@link DelegationEnvelopeError}. A `status` field of such an answer is never used.
 */
export class DelegationResponseError extends ServiceOAuthError {
  static readonly code = 'ERR_DELEGATION_RESPONSE_INVALID';
  declare readonly code: DelegationResponseErrorCode;
  /** Why the envelope was refused (its {@link DelegationEnvelopeErrorCode}), when it was. */
  readonly reason: DelegationEnvelopeErrorCode | undefined;
  readonly status: number | undefined;

  constructor(message: string, options: { reason?: DelegationEnvelopeErrorCode; status?: number; cause?: unknown } = {}) {
    super(DelegationResponseError.code, message, { cause: options.cause });
    this.name = 'DelegationResponseError';
    this.reason = options.reason;
    this.status = options.status;
  }
}
