import type { KeyObject } from 'node:crypto';
import { decodeProtectedHeader, type JWTVerifyGetKey, type JWTVerifyOptions, errors as joseErrors, jwtVerify } from 'jose';
import { DEFAULT_ALGORITHMS, DEFAULT_LEEWAY_SECONDS } from './defaults.js';
import { JWTVerificationError } from './errors.js';
import { ASYMMETRIC_ALGORITHMS, algorithmFitsKey, loadPublicKey, type PublicKeyInput } from './keys.js';

/**
 * Claims of a verified JWT: a map of claim name to value, with the registered claims of
 * RFC 7519 4.1 typed.
 */
export interface JwtPayload {
  iss?: string;
  sub?: string;
  aud?: string | string[];
  exp?: number;
  nbf?: number;
  iat?: number;
  jti?: string;
  [claim: string]: unknown;
}

/** Options of {@link verifyJwt}. */
export interface VerifyJwtOptions {
  /**
   * Allowed `alg` values; default `['RS256']`. Only asymmetric algorithms (RS*, PS*, ES*,
   * EdDSA) can ever pass: `none` and HS* are refused even when listed, since the key is public.
   */
  algorithms?: string[];
  /** Expected `aud`: the token must name this audience (or one of these). */
  audience?: string | string[];
  /** Expected `iss` (or one of these). */
  issuer?: string | string[];
  /** Clock-skew tolerance in seconds for `exp`, `nbf` and `iat`; default 0. */
  leeway?: number;
  /** The time to check `exp`, `nbf` and `iat` against; default now. */
  currentDate?: Date;
  /**
   * Claims the token must carry; default `['exp']` (a token that never expires is refused).
   * Relaxing it is explicit: `requiredClaims: []` accepts a token without `exp`.
   */
  requiredClaims?: string[];
}

/** What verifyJwt requires unless told otherwise: an expiry (docs/security.md, RFC 8725 3.10). */
const DEFAULT_REQUIRED_CLAIMS = ['exp'];

/** Header parameters that carry a key or a key location (RFC 7515 4.1.2-4.1.6). */
const KEY_CARRYING_HEADERS = ['jwk', 'jku', 'x5u', 'x5c'] as const;

/**
 * Verifies a compact JWS JWT with a static public key and returns its claims.
 *
 * Rules (RFC 8725): `alg` must be in `algorithms` (default RS256) and fit the key's type;
 * `none` and symmetric algorithms never pass; a header carrying a key (`jwk`, `jku`, `x5u`,
 * `x5c`) is refused; RSA keys need 2048 bits; `exp` is required (unless `requiredClaims` says
 * otherwise); `exp`, `nbf` and `iat` (not in the future) are checked with `leeway`; `aud` and
 * `iss` when given.
 *
 * Asynchronous: it returns a promise (key import and verification use WebCrypto).
 *
 * @param token - compact JWT
 * @param publicKey - PEM string, path to a PEM file, Buffer (PEM or DER SPKI), public
 *   `KeyObject` or `CryptoKey`; an SPKI public key or an X.509 certificate
 * @throws {@link JWTVerificationError} when the token is refused
 * @throws {@link InvalidPublicKeyError} when the key is malformed or too weak
 * @throws `TypeError` when an option has a wrong type or value
 *
 * @example
 * ```ts
 * import { verifyJwt } from 'service-oauth-client';
 *
 * const claims = await verifyJwt(idToken, process.env.OAUTH_PUBLIC_KEY!, {
 *   audience: 'my-client-id',
 *   issuer: 'https://idp.example.com',
 *   leeway: 10,
 * });
 * console.log(claims.sub);
 * ```
 */
export async function verifyJwt(token: string, publicKey: PublicKeyInput, options: VerifyJwtOptions = {}): Promise<JwtPayload> {
  const key = await loadPublicKey(publicKey);
  const required = options.requiredClaims ?? DEFAULT_REQUIRED_CLAIMS;
  if (!Array.isArray(required) || !required.every((claim) => typeof claim === 'string')) {
    throw new TypeError('requiredClaims must be an array of claim names');
  }
  return verifyToken(token, key, options, required);
}

/** @internal Shared by verifyJwt (static key) and exchangeCodeForClaims (static key or JWKS). */
export async function verifyToken(
  token: string,
  key: KeyObject | JWTVerifyGetKey,
  options: VerifyJwtOptions,
  requiredClaims: string[] = [],
): Promise<JwtPayload> {
  const leeway = options.leeway ?? DEFAULT_LEEWAY_SECONDS;
  if (typeof leeway !== 'number' || !Number.isFinite(leeway) || leeway < 0) {
    throw new TypeError('leeway must be a non-negative number of seconds');
  }
  const algorithms = (options.algorithms ?? DEFAULT_ALGORITHMS).filter((alg) => ASYMMETRIC_ALGORITHMS.has(alg));
  const alg = checkHeader(token, algorithms);
  if (typeof key !== 'function' && !algorithmFitsKey(alg, key)) {
    throw new JWTVerificationError(`alg ${alg} cannot be verified with a ${key.asymmetricKeyType} key`, {
      code: 'ERR_JWT_ALG_NOT_ALLOWED',
    });
  }

  const verifyOptions: JWTVerifyOptions = { algorithms, clockTolerance: leeway, requiredClaims };
  if (options.audience !== undefined) verifyOptions.audience = options.audience;
  if (options.issuer !== undefined) verifyOptions.issuer = options.issuer;
  if (options.currentDate !== undefined) verifyOptions.currentDate = options.currentDate;

  let payload: JwtPayload;
  try {
    // Overloads differ for a key and a resolver; both are valid here.
    ({ payload } = typeof key === 'function' ? await jwtVerify(token, key, verifyOptions) : await jwtVerify(token, key, verifyOptions));
  } catch (err) {
    throw mapJoseError(err);
  }

  // jose checks iat only with maxTokenAge; RFC 7519 4.1.6 gives no bound, but a token issued
  // in the future is a sign of a forged or mis-clocked issuer.
  const now = Math.floor((options.currentDate?.getTime() ?? Date.now()) / 1000);
  if (payload.iat !== undefined && (typeof payload.iat !== 'number' || payload.iat > now + leeway)) {
    throw new JWTVerificationError('"iat" claim is in the future', {
      code: 'ERR_JWT_CLAIM_INVALID',
      claim: 'iat',
      reason: 'check_failed',
    });
  }
  return payload;
}

function checkHeader(token: string, algorithms: readonly string[]): string {
  if (typeof token !== 'string' || token.split('.').length !== 3) {
    throw new JWTVerificationError('token is not a compact JWS');
  }
  let header: Record<string, unknown>;
  try {
    header = decodeProtectedHeader(token);
  } catch (cause) {
    throw new JWTVerificationError('token header cannot be decoded', { cause });
  }
  // RFC 8725 3.10: never trust a key (or a key location) chosen by the token itself.
  for (const name of KEY_CARRYING_HEADERS) {
    if (name in header) {
      throw new JWTVerificationError(`token header carries "${name}"; keys from the token are refused`, {
        code: 'ERR_JWT_EMBEDDED_KEY',
      });
    }
  }
  const { alg } = header;
  // RFC 8725 3.1 and 3.2: allow-list, and "none" never.
  if (typeof alg !== 'string' || !algorithms.includes(alg)) {
    throw new JWTVerificationError(`alg ${JSON.stringify(alg)} is not allowed`, { code: 'ERR_JWT_ALG_NOT_ALLOWED' });
  }
  return alg;
}

function mapJoseError(err: unknown): JWTVerificationError {
  if (err instanceof JWTVerificationError) return err;
  if (err instanceof joseErrors.JWTExpired) {
    return new JWTVerificationError('token has expired', { code: 'ERR_JWT_EXPIRED', claim: err.claim, reason: err.reason, cause: err });
  }
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    return new JWTVerificationError(`"${err.claim}" claim check failed (${err.reason})`, {
      code: 'ERR_JWT_CLAIM_INVALID',
      claim: err.claim,
      reason: err.reason,
      cause: err,
    });
  }
  if (err instanceof joseErrors.JWSSignatureVerificationFailed) {
    return new JWTVerificationError('signature verification failed', { code: 'ERR_JWT_SIGNATURE_INVALID', cause: err });
  }
  if (err instanceof joseErrors.JOSEAlgNotAllowed || err instanceof joseErrors.JOSENotSupported) {
    return new JWTVerificationError('alg is not allowed', { code: 'ERR_JWT_ALG_NOT_ALLOWED', cause: err });
  }
  if (err instanceof joseErrors.JWKSNoMatchingKey || err instanceof joseErrors.JWKSMultipleMatchingKeys) {
    return new JWTVerificationError('no single key in the key set matches the token header', {
      code: 'ERR_JWKS_NO_MATCHING_KEY',
      cause: err,
    });
  }
  if (err instanceof TypeError) {
    // After our own checks, jose's TypeErrors at this point mean the key does not fit the alg.
    return new JWTVerificationError('key cannot verify this alg', { code: 'ERR_JWT_ALG_NOT_ALLOWED', cause: err });
  }
  return new JWTVerificationError('token is invalid', { cause: err });
}
