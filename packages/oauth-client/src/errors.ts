import type { DelegationErrorCode } from './delegation/error-codes.js';

/** Codes of {@link OAuthExchangeError}. */
export type OAuthExchangeErrorCode =
  | 'ERR_OAUTH_EXCHANGE_FAILED'
  | 'ERR_OAUTH_EXCHANGE_NETWORK'
  | 'ERR_OAUTH_EXCHANGE_TIMEOUT'
  | 'ERR_OAUTH_EXCHANGE_RESPONSE_INVALID'
  | 'ERR_OAUTH_EXCHANGE_CONFIG';

/** Codes of {@link JWTVerificationError}. */
export type JWTVerificationErrorCode =
  | 'ERR_JWT_INVALID'
  | 'ERR_JWT_ALG_NOT_ALLOWED'
  | 'ERR_JWT_EMBEDDED_KEY'
  | 'ERR_JWT_SIGNATURE_INVALID'
  | 'ERR_JWT_EXPIRED'
  | 'ERR_JWT_CLAIM_INVALID'
  | 'ERR_JWKS_NO_MATCHING_KEY'
  | 'ERR_JWKS_KEY_TOO_SHORT'
  | 'ERR_JWKS_UNAVAILABLE';

/** Codes of {@link DPoPVerificationError}. */
export type DPoPVerificationErrorCode =
  | 'ERR_DPOP_PROOF_INVALID'
  | 'ERR_DPOP_PROOF_REPLAYED'
  | 'ERR_DPOP_NONCE_REQUIRED'
  | 'ERR_DPOP_TOKEN_NOT_BOUND';

/** Codes of {@link AccessTokenError}. */
export type AccessTokenErrorCode = 'ERR_ACCESS_TOKEN_MISSING' | 'ERR_ACCESS_TOKEN_INVALID' | 'ERR_ACCESS_TOKEN_INSUFFICIENT_SCOPE';

/** Codes of {@link InvalidPublicKeyError}. */
export type InvalidPublicKeyErrorCode = 'ERR_PUBLIC_KEY_INVALID';

/**
 * Every code this library throws. Codes never change once published, so `switch (err.code)`
 * is safe to write against.
 */
export type ServiceOAuthErrorCode =
  | OAuthExchangeErrorCode
  | JWTVerificationErrorCode
  | DPoPVerificationErrorCode
  | AccessTokenErrorCode
  | InvalidPublicKeyErrorCode
  | DelegationErrorCode;

/**
 * Base class of every error thrown by this library. `code` is stable, `message` is for humans
 * and may change. Messages never contain the client secret or the authorization code.
 *
 * @example
 * ```ts
 * try {
 *   await exchangeCodeForClaims({ code });
 * } catch (err) {
 *   if (err instanceof ServiceOAuthError) log.warn({ code: err.code }, err.message);
 *   throw err;
 * }
 * ```
 */
export class ServiceOAuthError extends Error {
  readonly code: ServiceOAuthErrorCode;

  constructor(code: ServiceOAuthErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ServiceOAuthError';
    this.code = code;
  }
}

/**
 * The authorization code could not be exchanged for an ID token.
 *
 * | code | when |
 * |---|---|
 * | `ERR_OAUTH_EXCHANGE_FAILED` | the token endpoint answered with an error (`error` holds the RFC 6749 5.2 code, e.g. `invalid_grant`) |
 * | `ERR_OAUTH_EXCHANGE_NETWORK` | the token endpoint could not be reached (or it redirected) |
 * | `ERR_OAUTH_EXCHANGE_TIMEOUT` | no complete answer within `timeoutMs` |
 * | `ERR_OAUTH_EXCHANGE_RESPONSE_INVALID` | a 200 answer that is not JSON or has no `id_token` |
 * | `ERR_OAUTH_EXCHANGE_CONFIG` | a required option (or its environment variable) is missing or invalid; thrown before any request |
 *
 * @example
 * ```ts
 * try {
 *   claims = await exchangeCodeForClaims({ code });
 * } catch (err) {
 *   if (err instanceof OAuthExchangeError && err.error === 'invalid_grant') {
 *     return res.status(401).json({ message: 'Login expired, please sign in again' });
 *   }
 *   throw err;
 * }
 * ```
 */
export class OAuthExchangeError extends ServiceOAuthError {
  static readonly code = 'ERR_OAUTH_EXCHANGE_FAILED';
  declare readonly code: OAuthExchangeErrorCode;
  /** RFC 6749 5.2 `error` of the token endpoint's answer, when it sent one. */
  readonly error: string | undefined;
  /** RFC 6749 5.2 `error_description`, when the token endpoint sent one. */
  readonly description: string | undefined;
  /** HTTP status of the token endpoint's answer, when there was one. */
  readonly status: number | undefined;
  /**
   * The token endpoint's `DPoP-Nonce` (RFC 9449 8), when it sent one: with `error`
   * `use_dpop_nonce`, make a new proof with this nonce and exchange the same code again.
   */
  readonly dpopNonce: string | undefined;

  constructor(
    message: string,
    options: {
      code?: OAuthExchangeErrorCode;
      error?: string | undefined;
      description?: string | undefined;
      status?: number | undefined;
      dpopNonce?: string | undefined;
      cause?: unknown;
    } = {},
  ) {
    super(options.code ?? OAuthExchangeError.code, message, { cause: options.cause });
    this.name = 'OAuthExchangeError';
    this.error = options.error;
    this.description = options.description;
    this.status = options.status;
    this.dpopNonce = options.dpopNonce;
  }
}

/**
 * A request with a DPoP-bound access token was refused by {@link verifyDpopRequest}. Answer it
 * with 401 and `challenge` as the `WWW-Authenticate` header (RFC 9449 7.1); with
 * `ERR_DPOP_NONCE_REQUIRED`, also send the current nonce as `DPoP-Nonce`.
 *
 * | code | when |
 * |---|---|
 * | `ERR_DPOP_PROOF_INVALID` | the proof is missing, malformed, badly signed, for another method or URL, too old, or does not cover the token (`ath`) |
 * | `ERR_DPOP_PROOF_REPLAYED` | the same proof (key and `jti`) was already used |
 * | `ERR_DPOP_NONCE_REQUIRED` | the proof lacks the server's current nonce |
 * | `ERR_DPOP_TOKEN_NOT_BOUND` | the token is not sent as `DPoP`, or is not bound to the proof's key (`cnf.jkt`) |
 *
 * @example
 * ```ts
 * try {
 *   await verifyDpopRequest({ method, url, authorization, dpop, verifyAccessToken });
 * } catch (err) {
 *   if (err instanceof DPoPVerificationError) return res.status(401).set('www-authenticate', err.challenge).end();
 *   throw err;
 * }
 * ```
 */
export class DPoPVerificationError extends ServiceOAuthError {
  static readonly code = 'ERR_DPOP_PROOF_INVALID';
  declare readonly code: DPoPVerificationErrorCode;
  /** The RFC 9449 7.1 `WWW-Authenticate` challenge to answer with. */
  readonly challenge: string;
  /** The HTTP status to answer with: always 401. */
  readonly status = 401;
  /** The RFC 9449 7.1 error code of the challenge (`message` is its `error_description`). */
  readonly error: 'invalid_token' | 'invalid_dpop_proof' | 'use_dpop_nonce';

  constructor(message: string, options: { code?: DPoPVerificationErrorCode; challenge: string; cause?: unknown }) {
    super(options.code ?? DPoPVerificationError.code, message, { cause: options.cause });
    this.name = 'DPoPVerificationError';
    this.challenge = options.challenge;
    this.error =
      this.code === 'ERR_DPOP_TOKEN_NOT_BOUND'
        ? 'invalid_token'
        : this.code === 'ERR_DPOP_NONCE_REQUIRED'
          ? 'use_dpop_nonce'
          : 'invalid_dpop_proof';
  }
}

/**
 * An access token was refused by {@link verifyAccessToken} (or one of its adapters). Answer
 * with `status` and `challenge` as the `WWW-Authenticate` header (RFC 6750 3, RFC 9449 7.1);
 * `message` is the challenge's `error_description`, safe to send (the detail is in `cause`).
 *
 * | code | status | `error` | when |
 * |---|---|---|---|
 * | `ERR_ACCESS_TOKEN_MISSING` | 401 | – | the request has no `Authorization: Bearer` or `DPoP` token (RFC 6750 3.1: no error code) |
 * | `ERR_ACCESS_TOKEN_INVALID` | 401 | `invalid_token` | not an RFC 9068 access token of the issuer for this audience, badly signed, or expired; `cause` is the {@link JWTVerificationError} when there is one |
 * | `ERR_ACCESS_TOKEN_INSUFFICIENT_SCOPE` | 403 | `insufficient_scope` | a required scope is not granted; `scope` lists the required ones |
 *
 * @example
 * ```ts
 * try {
 *   await verifyAccessToken(token, { audience: 'https://api.example.com', requiredScopes: ['read:notes'] });
 * } catch (err) {
 *   if (err instanceof AccessTokenError) return res.status(err.status).set('www-authenticate', err.challenge).end();
 *   throw err;
 * }
 * ```
 */
export class AccessTokenError extends ServiceOAuthError {
  static readonly code = 'ERR_ACCESS_TOKEN_INVALID';
  declare readonly code: AccessTokenErrorCode;
  /** The RFC 6750 3 / RFC 9449 7.1 `WWW-Authenticate` challenge to answer with. */
  readonly challenge: string;
  /** 401, or 403 for `insufficient_scope`. */
  readonly status: 401 | 403;
  /** The RFC 6750 3.1 error code; none when no token was sent. */
  readonly error: 'invalid_token' | 'insufficient_scope' | undefined;
  /** For `insufficient_scope`: the scopes the resource requires, space-separated. */
  readonly scope: string | undefined;

  constructor(message: string, options: { code?: AccessTokenErrorCode; challenge: string; scope?: string; cause?: unknown }) {
    super(options.code ?? AccessTokenError.code, message, { cause: options.cause });
    this.name = 'AccessTokenError';
    this.challenge = options.challenge;
    this.status = this.code === 'ERR_ACCESS_TOKEN_INSUFFICIENT_SCOPE' ? 403 : 401;
    this.error =
      this.code === 'ERR_ACCESS_TOKEN_MISSING'
        ? undefined
        : this.code === 'ERR_ACCESS_TOKEN_INSUFFICIENT_SCOPE'
          ? 'insufficient_scope'
          : 'invalid_token';
    this.scope = options.scope;
  }
}

/**
 * A JWT was refused: bad signature, refused algorithm or header, failed claim check, or no
 * usable key in the key set. `cause` holds the underlying error (e.g. `jose`'s, for a key set) when there is one.
 *
 * | code | when |
 * |---|---|
 * | `ERR_JWT_INVALID` | not a well-formed signed JWT |
 * | `ERR_JWT_ALG_NOT_ALLOWED` | `alg` is `none`, outside the allow-list, symmetric, or does not fit the key |
 * | `ERR_JWT_EMBEDDED_KEY` | the header carries a key or key location (`jwk`, `jku`, `x5u`, `x5c`) |
 * | `ERR_JWT_SIGNATURE_INVALID` | the signature does not verify |
 * | `ERR_JWT_EXPIRED` | `exp` is past (beyond leeway) |
 * | `ERR_JWT_CLAIM_INVALID` | `aud`, `iss`, `nbf`, `iat` or a required claim failed (`claim` names it) |
 * | `ERR_JWKS_NO_MATCHING_KEY` | the key set has no key for the token's `kid`/`alg` |
 * | `ERR_JWKS_KEY_TOO_SHORT` | the key set's key is an RSA key under 2048 bits |
 * | `ERR_JWKS_UNAVAILABLE` | the key set could not be fetched or parsed |
 *
 * @example
 * ```ts
 * try {
 *   verifyJwt(token, publicKeyPem, { issuer: 'https://idp.example.com' });
 * } catch (err) {
 *   if (err instanceof JWTVerificationError && err.code === 'ERR_JWT_EXPIRED') return refresh();
 *   throw err;
 * }
 * ```
 */
export class JWTVerificationError extends ServiceOAuthError {
  static readonly code = 'ERR_JWT_INVALID';
  declare readonly code: JWTVerificationErrorCode;
  /** The claim that failed, for `ERR_JWT_EXPIRED` and `ERR_JWT_CLAIM_INVALID`. */
  readonly claim: string | undefined;
  /** `'missing'`, `'invalid'` or `'check_failed'`, with `claim`. */
  readonly reason: string | undefined;

  constructor(message: string, options: { code?: JWTVerificationErrorCode; claim?: string; reason?: string; cause?: unknown } = {}) {
    super(options.code ?? JWTVerificationError.code, message, { cause: options.cause });
    this.name = 'JWTVerificationError';
    this.claim = options.claim;
    this.reason = options.reason;
  }
}

/**
 * The public key given by the caller cannot be used: not a PEM/DER SPKI key or X.509
 * certificate, an unreadable file, a private or secret key, an unsupported key type, or an
 * RSA key under 2048 bits.
 *
 * @example
 * ```ts
 * try {
 *   verifyJwt(token, process.env.OAUTH_PUBLIC_KEY!);
 * } catch (err) {
 *   if (err instanceof InvalidPublicKeyError) console.error('Fix OAUTH_PUBLIC_KEY:', err.message);
 *   throw err;
 * }
 * ```
 */
export class InvalidPublicKeyError extends ServiceOAuthError {
  static readonly code = 'ERR_PUBLIC_KEY_INVALID';
  declare readonly code: InvalidPublicKeyErrorCode;

  constructor(message: string, options: { cause?: unknown } = {}) {
    super(InvalidPublicKeyError.code, message, options);
    this.name = 'InvalidPublicKeyError';
  }
}
