import { Paths } from 'service-protocol';
import { ACCESS_TOKEN_ALGORITHMS, ACCESS_TOKEN_LEEWAY_SECONDS, DPOP_ALGORITHMS } from './defaults.js';
import { dpopRefusal, type VerifyDpopRequestOptions, verifyDpopRequest } from './dpop.js';
import { fromEnv } from './env.js';
import { AccessTokenError, JWTVerificationError } from './errors.js';
import { type KeySetResolver, sharedJwksCache } from './jwks.js';
import { type JwtPayload, verifyWithKeySet } from './verify-jwt.js';

/** The claims of an RFC 9068 access token of the service (docs/protocol.md, "Access token for an API"). */
export interface AccessTokenClaims extends JwtPayload {
  iss: string;
  /** The user, or the machine client for `client_credentials`. */
  sub: string;
  /** The API identifier the token was issued for (`resource`, RFC 8707). */
  aud: string | string[];
  exp: number;
  iat: number;
  jti: string;
  /** The client the token was issued to. */
  client_id: string;
  /** The granted permissions, space-separated (RFC 9068 2.2.3). */
  scope?: string;
  auth_time?: number;
  acr?: string;
  amr?: string[];
  /** Present when the token is DPoP-bound: the thumbprint of its key (RFC 9449 6.1). */
  cnf?: { jkt?: string; [member: string]: unknown };
}

/** The request's DPoP proof, when the token came as `Authorization: DPoP <token>` (RFC 9449 7). */
export interface AccessTokenDpopOptions {
  /** The request's method. */
  method: string;
  /** The URL the client called, as the public sees it; query and fragment are ignored. */
  url: string | URL;
  /** The `DPoP` header (exactly one proof). */
  proof: string | string[] | undefined;
  /** Server nonces (RFC 9449 9), as {@link VerifyDpopRequestOptions.nonce}. */
  nonce?: VerifyDpopRequestOptions['nonce'];
  /** The replay store, as {@link VerifyDpopRequestOptions.isFirstUse}; default in-process, bounded. */
  isFirstUse?: VerifyDpopRequestOptions['isFirstUse'];
  /** Allowed proof algorithms; default ES256, ES384, EdDSA, Ed25519, RS256, PS256. */
  algorithms?: string[];
  /** A proof older than this (by `iat`) is refused; default 60 seconds. */
  maxAgeSeconds?: number;
}

/** Options of {@link verifyAccessToken}. */
export interface VerifyAccessTokenOptions {
  /** Your API's identifier, as registered with the service: the token's `aud` must contain it. */
  audience: string;
  /** Scopes the token must all carry, else `insufficient_scope` (403). */
  requiredScopes?: readonly string[];
  /** The service's issuer URL; env `OAUTH_ISSUER`. Required. */
  issuer?: string;
  /** The service's key set; env `JWKS_URL`; default `<issuer>/.well-known/jwks.json`. */
  jwksUrl?: string;
  /** Allowed `alg`s among RS256, ES256 and EdDSA (the default: all three); anything else never passes. */
  algorithms?: readonly ('RS256' | 'ES256' | 'EdDSA')[];
  /** Clock-skew tolerance for `exp` and `iat`, seconds; default 5. */
  leeway?: number;
  /** The time to check `exp` and `iat` against; default now. */
  currentDate?: Date;
  /**
   * The proof, when the request carried the token as `DPoP`. Without it the token is taken as a
   * bearer token, and a DPoP-bound token (`cnf`) is refused.
   */
  dpop?: AccessTokenDpopOptions;
}

/** What {@link verifyAccessToken} accepted. */
export interface VerifiedAccessToken {
  claims: AccessTokenClaims;
  /** `scope`, split on spaces. */
  scopes: string[];
  /** The proof key's thumbprint, for a DPoP-bound token. */
  jkt: string | undefined;
}

/** RFC 9068 2.2 requires these. */
const REQUIRED_CLAIMS = ['iss', 'exp', 'aud', 'sub', 'client_id', 'iat', 'jti'];

/** RFC 9068 4; RFC 7515 4.1.9: the `application/` prefix may be left out, and case does not matter. */
const ACCESS_TOKEN_TYPES = new Set(['at+jwt', 'application/at+jwt']);

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Verifies an RFC 9068 JWT access token issued by the service for your API, as a resource
 * server does, and with `dpop`, the request's proof (RFC 9449 7, through
 * {@link verifyDpopRequest}).
 *
 * Rules: header `typ` `at+jwt` (an ID token is refused); `alg` RS256, ES256 or EdDSA, with a
 * key of the service's key set picked by `kid` (cached; an unknown `kid` re-fetches the set at
 * most once per 30 s, so a rotated key is followed); `iss` = `issuer`; `aud` contains
 * `audience`; `exp` and `iat` with `leeway`; `sub`, `client_id`, `jti` present;
 * `requiredScopes` all in `scope`. A token carrying `cnf` is taken only with a proof of its
 * key (`dpop`): `htm`, `htu`, `iat` window, `ath`, `jti` once, the nonce if you ask for one.
 *
 * @throws {@link AccessTokenError} `invalid_token` (401) or `insufficient_scope` (403)
 * @throws {@link DPoPVerificationError} the proof is refused, or the token's binding does not fit (401)
 * @throws {@link JWTVerificationError} `ERR_JWKS_UNAVAILABLE`: the key set cannot be fetched (answer 503)
 * @throws `TypeError` when an option is missing or malformed
 *
 * @example
 * ```ts
 * import { verifyAccessToken } from 'service-oauth-client';
 *
 * const { claims, scopes } = await verifyAccessToken(token, {
 *   issuer: 'https://idp.example.com',
 *   audience: 'https://api.example.com',
 *   requiredScopes: ['read:notes'],
 * });
 * console.log(claims.sub, claims.client_id, scopes);
 * ```
 */
export function verifyAccessToken(token: string, options: VerifyAccessTokenOptions): Promise<VerifiedAccessToken> {
  let resolve: KeySetResolver;
  try {
    resolve = sharedJwksCache.resolver(jwksUrlOf(options));
  } catch (error) {
    return Promise.reject(error);
  }
  return verifyAccessTokenWithKeySet(token, options, resolve);
}

/** @internal verifyAccessToken with a key set resolver of the caller's (tests use their own cache and clock). */
export async function verifyAccessTokenWithKeySet(
  token: string,
  options: VerifyAccessTokenOptions,
  resolve: KeySetResolver,
): Promise<VerifiedAccessToken> {
  const issuer = issuerOf(options);
  if (typeof options.audience !== 'string' || options.audience === '') throw new TypeError('audience must be your API`s identifier');
  const required = options.requiredScopes ?? [];
  if (!Array.isArray(required) || !required.every((s) => typeof s === 'string' && /^[\x21\x23-\x5B\x5D-\x7E]+$/.test(s))) {
    throw new TypeError('requiredScopes must be an array of scope names');
  }
  const algorithms = (options.algorithms ?? ACCESS_TOKEN_ALGORITHMS).filter((alg) => ACCESS_TOKEN_ALGORITHMS.includes(alg));
  const { dpop } = options;
  const scheme = dpop === undefined ? 'Bearer' : 'DPoP';
  const proofAlgorithms = dpop?.algorithms ?? [...DPOP_ALGORITHMS];
  const invalid = (description: string, cause?: unknown) =>
    new AccessTokenError(description, { challenge: challenge(scheme, 'invalid_token', description, proofAlgorithms), cause });
  if (typeof token !== 'string' || token === '') throw invalid('The access token is missing.');

  const verifyToken = async (candidate: string): Promise<AccessTokenClaims> => {
    const typ = headerOf(candidate)?.typ;
    if (typeof typ !== 'string' || !ACCESS_TOKEN_TYPES.has(typ.toLowerCase())) throw invalid('The token is not an access token.');
    let payload: JwtPayload;
    try {
      payload = await verifyWithKeySet(
        candidate,
        resolve,
        {
          algorithms: [...algorithms],
          issuer,
          audience: options.audience,
          leeway: options.leeway ?? ACCESS_TOKEN_LEEWAY_SECONDS,
          ...(options.currentDate === undefined ? {} : { currentDate: options.currentDate }),
        },
        REQUIRED_CLAIMS,
      );
    } catch (error) {
      if (error instanceof JWTVerificationError && error.code !== 'ERR_JWKS_UNAVAILABLE') throw invalid(describe(error), error);
      throw error;
    }
    const { sub, client_id, jti, scope, cnf } = payload;
    if (typeof sub !== 'string' || sub === '' || typeof client_id !== 'string' || typeof jti !== 'string')
      throw invalid('The access token is invalid.');
    if (scope !== undefined && typeof scope !== 'string') throw invalid('The access token is invalid.');
    if (cnf !== undefined && (cnf === null || typeof cnf !== 'object')) throw invalid('The access token is invalid.');
    return payload as AccessTokenClaims;
  };

  let claims: AccessTokenClaims;
  let jkt: string | undefined;
  if (dpop === undefined) {
    claims = await verifyToken(token);
    // RFC 9449 7.2 (and RFC 7800 3.1: a confirmation we cannot check is not ignored).
    if (claims.cnf !== undefined) {
      throw dpopRefusal(
        'ERR_DPOP_TOKEN_NOT_BOUND',
        'This access token is bound to a key: send it as DPoP, with a proof.',
        'invalid_token',
        proofAlgorithms,
      );
    }
  } else {
    const verified = await verifyDpopRequest({
      method: dpop.method,
      url: dpop.url,
      authorization: `DPoP ${token}`,
      dpop: dpop.proof,
      verifyAccessToken: verifyToken,
      algorithms: proofAlgorithms,
      ...(dpop.nonce === undefined ? {} : { nonce: dpop.nonce }),
      ...(dpop.isFirstUse === undefined ? {} : { isFirstUse: dpop.isFirstUse }),
      ...(dpop.maxAgeSeconds === undefined ? {} : { maxAgeSeconds: dpop.maxAgeSeconds }),
      ...(options.currentDate === undefined ? {} : { currentDate: options.currentDate }),
    });
    claims = verified.claims as AccessTokenClaims;
    jkt = verified.jkt;
  }

  const scopes = (claims.scope ?? '').split(' ').filter((s) => s !== '');
  if (!required.every((s) => scopes.includes(s))) {
    const scope = required.join(' ');
    const description = 'The access token lacks a required scope.';
    throw new AccessTokenError(description, {
      code: 'ERR_ACCESS_TOKEN_INSUFFICIENT_SCOPE',
      challenge: `${challenge(scheme, 'insufficient_scope', description, proofAlgorithms)}, scope="${scope}"`,
      scope,
    });
  }
  return { claims, scopes, jkt };
}

/** @internal The `WWW-Authenticate` challenge of RFC 6750 3 (Bearer) or RFC 9449 7.1 (DPoP, with `algs`). */
export function challenge(scheme: 'Bearer' | 'DPoP', error: string | undefined, description: string | undefined, algs: readonly string[]) {
  const params = error === undefined ? [] : [`error="${error}"`, `error_description="${description}"`];
  if (scheme === 'DPoP') params.push(`algs="${algs.join(' ')}"`);
  return params.length === 0 ? scheme : `${scheme} ${params.join(', ')}`;
}

/** A fixed description per failure: never text from the token. */
function describe(error: JWTVerificationError): string {
  if (error.code === 'ERR_JWT_EXPIRED') return 'The access token has expired.';
  if (error.claim === 'aud') return 'The access token is for another audience.';
  if (error.claim === 'iss') return 'The access token is from another issuer.';
  return 'The access token is invalid.';
}

function headerOf(token: string): Record<string, unknown> | undefined {
  try {
    const header: unknown = JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString('utf8'));
    return header !== null && typeof header === 'object' ? (header as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function issuerOf(options: VerifyAccessTokenOptions): string {
  if (options === null || typeof options !== 'object') throw new TypeError('options are required');
  const issuer = fromEnv('issuer', options.issuer);
  if (typeof issuer !== 'string') throw new TypeError('issuer is required (option, or environment variable OAUTH_ISSUER)');
  return issuer;
}

function jwksUrlOf(options: VerifyAccessTokenOptions): URL {
  const issuer = issuerOf(options);
  const value = fromEnv('jwksUrl', options.jwksUrl) ?? `${issuer.replace(/\/$/, '')}${Paths.jwks}`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TypeError('jwksUrl (or the issuer it is made from) is not a valid URL');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.has(url.hostname))) {
    throw new TypeError('jwksUrl must be an https URL (http is allowed only for localhost)');
  }
  return url;
}
