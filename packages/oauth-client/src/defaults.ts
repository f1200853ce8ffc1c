/**
 * Every default of the library, in one place. Units are in the names.
 */

/** Token endpoint request timeout (whole request, body included). Override with `timeoutMs`. */
export const EXCHANGE_TIMEOUT_MS = 10_000;

/** Key set (JWKS) request timeout; the value jose's `createRemoteJWKSet` uses. */
export const JWKS_TIMEOUT_MS = 5_000;

/** A fetched key set is used for at most this long, then fetched again (10 minutes). */
export const JWKS_CACHE_MAX_AGE_MS = 10 * 60_000;

/**
 * After a key set fetch (successful or not), no new fetch of the same URL starts for this
 * long, whatever `kid` the tokens carry: tokens with random `kid`s cannot flood the key server.
 */
export const JWKS_COOLDOWN_MS = 30_000;

/** RFC 8725 3.5 / NIST SP 800-131A: RSA keys below 2048 bits are refused. */
export const RSA_MIN_MODULUS_BITS = 2048;

/**
 * verifyJwt: imported public keys kept, keyed by their material (least recently used leave
 * first). An application verifies with a handful of keys; the bound only caps memory when a
 * caller passes a new key on every call.
 */
export const IMPORTED_KEY_CACHE_MAX_ENTRIES = 64;

/** The spec's default allow-list for verifyJwt, and the only algorithm of exchangeCodeForClaims. */
export const DEFAULT_ALGORITHMS: readonly string[] = ['RS256'];

/** Clock-skew tolerance, seconds (spec: default 0). */
export const DEFAULT_LEEWAY_SECONDS = 0;

/**
 * Delegation: lifetime of a request the client seals. Short, but long enough for an SP clock
 * up to 2 minutes behind the service's.
 */
export const DELEGATION_REQUEST_TTL_SECONDS = 120;

/** Delegation: whole-request timeout of the client; override with `timeoutMs`. */
export const DELEGATION_TIMEOUT_MS = 10_000;

/** verifyDpopRequest: proof algorithms accepted by default (RFC 9449 4.2: asymmetric only; Ed25519 as EdDSA, RFC 8037, and as Ed25519, RFC 9864). */
export const DPOP_ALGORITHMS: readonly string[] = ['ES256', 'ES384', 'EdDSA', 'Ed25519', 'RS256', 'PS256'];

/** verifyDpopRequest: a proof older than this (by `iat`) is refused; its `jti` is remembered this long. */
export const DPOP_MAX_AGE_SECONDS = 60;

/** verifyDpopRequest: a proof's `iat` may be this far ahead of the server's clock. */
export const DPOP_MAX_FUTURE_SECONDS = 5;

/** verifyDpopRequest's default in-process replay cache: its bound (the oldest entries leave first). */
export const DPOP_REPLAY_CACHE_MAX_ENTRIES = 100_000;

/**
 * verifyAccessToken: the only algorithms the service signs access tokens with (RFC 9068 4:
 * asymmetric; never `none` or HS*).
 */
export const ACCESS_TOKEN_ALGORITHMS: readonly ('RS256' | 'ES256' | 'EdDSA')[] = ['RS256', 'ES256', 'EdDSA'];

/**
 * verifyAccessToken: clock-skew tolerance for `exp` and `iat`, seconds. Small, as access tokens
 * live minutes; the value express-oauth2-jwt-bearer uses.
 */
export const ACCESS_TOKEN_LEEWAY_SECONDS = 5;
