/**
 * The codes of the delegation errors, apart from their classes: the package's error base
 * (../errors.ts) names them in its union while the classes extend that base.
 */

/** Codes of {@link DelegationConfigError}. */
export type DelegationConfigErrorCode = 'ERR_DELEGATION_CONFIG';

/** Codes of {@link DelegationEnvelopeError}. */
export type DelegationEnvelopeErrorCode =
  | 'ERR_DELEGATION_DECRYPT'
  | 'ERR_DELEGATION_SIGNATURE'
  | 'ERR_DELEGATION_EXPIRED'
  | 'ERR_DELEGATION_NOT_YET_VALID'
  | 'ERR_DELEGATION_TTL_TOO_LONG'
  | 'ERR_DELEGATION_AUDIENCE'
  | 'ERR_DELEGATION_ISSUER'
  | 'ERR_DELEGATION_REPLY_MISMATCH'
  | 'ERR_DELEGATION_MALFORMED';

/** Codes of {@link DelegationRequestError}. */
export type DelegationRequestErrorCode =
  | 'ERR_DELEGATION_INPUT_INVALID'
  | 'ERR_DELEGATION_REQUEST_FAILED'
  | 'ERR_DELEGATION_NETWORK'
  | 'ERR_DELEGATION_TIMEOUT';

/** Codes of {@link DelegationResponseError}. */
export type DelegationResponseErrorCode = 'ERR_DELEGATION_RESPONSE_INVALID';

/** Every code thrown by the delegation part of the library. */
export type DelegationErrorCode =
  | DelegationConfigErrorCode
  | DelegationEnvelopeErrorCode
  | DelegationRequestErrorCode
  | DelegationResponseErrorCode;
