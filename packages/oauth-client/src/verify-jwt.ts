import { constants, type KeyObject, verify } from 'node:crypto';
import type { CompactJWSHeaderParameters } from 'jose';
import { DEFAULT_ALGORITHMS, DEFAULT_LEEWAY_SECONDS } from './defaults.js';
import { JWTVerificationError } from './errors.js';
import type { KeySetResolver } from './jwks.js';
import { ASYMMETRIC_ALGORITHMS, algorithmFitsKey, importPublicKey, type PublicKeyInput } from './keys.js';

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
 * `x5c`) or a `crit` extension is refused; RSA keys need 2048 bits; `exp` is required (unless
 * `requiredClaims` says otherwise); `exp`, `nbf` and `iat` (not in the future) are checked with
 * `leeway`; `aud` and `iss` when given.
 *
 * Synchronous, as the spec's signature says: it returns the claims, not a promise (`await`
 * on the result still works). Imported keys are cached by their material (PEM text, bytes,
 * or file path and file identity), so a PEM is parsed once, not on every call.
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
 * const claims = verifyJwt(idToken, process.env.OAUTH_PUBLIC_KEY!, {
 *   audience: 'my-client-id',
 *   issuer: 'https://idp.example.com',
 *   leeway: 10,
 * });
 * console.log(claims.sub);
 * ```
 */
export function verifyJwt(token: string, publicKey: PublicKeyInput, options: VerifyJwtOptions = {}): JwtPayload {
  const required = options.requiredClaims ?? DEFAULT_REQUIRED_CLAIMS;
  if (!Array.isArray(required) || !required.every((claim) => typeof claim === 'string')) {
    throw new TypeError('requiredClaims must be an array of claim names');
  }
  return verifyWithKey(token, importPublicKey(publicKey), options, required);
}

/**
 * @internal The one verification routine, shared by verifyJwt (static key) and
 * exchangeCodeForClaims (static key, or through {@link verifyWithKeySet}).
 */
export function verifyWithKey(
  token: string,
  key: KeyObject,
  options: VerifyJwtOptions,
  requiredClaims: readonly string[] = [],
): JwtPayload {
  const leeway = checkLeeway(options.leeway);
  const { alg, parts } = readHeader(token, options.algorithms);
  if (!algorithmFitsKey(alg, key)) {
    throw new JWTVerificationError(`alg ${alg} cannot be verified with a ${key.asymmetricKeyType} key`, {
      code: 'ERR_JWT_ALG_NOT_ALLOWED',
    });
  }
  if (!verifySignature(alg, key, parts)) {
    throw new JWTVerificationError('signature verification failed', { code: 'ERR_JWT_SIGNATURE_INVALID' });
  }
  const payload = decodeJson(parts[1]);
  if (payload === undefined) throw new JWTVerificationError('JWT claims set is not a JSON object');
  checkClaims(payload as JwtPayload, options, leeway, requiredClaims);
  return payload as JwtPayload;
}

/**
 * @internal Verifies with the key a key set (JWKS) holds for the token's header: the header
 * is checked before any key is looked up, then verification is that of a static key.
 */
export async function verifyWithKeySet(
  token: string,
  resolve: KeySetResolver,
  options: VerifyJwtOptions,
  requiredClaims: readonly string[] = [],
): Promise<JwtPayload> {
  const { header, parts } = readHeader(token, options.algorithms);
  const key = await resolve(header as CompactJWSHeaderParameters, { protected: parts[0], payload: parts[1], signature: parts[2] });
  return verifyWithKey(token, importPublicKey(key), options, requiredClaims);
}

interface Header {
  alg: string;
  header: Record<string, unknown>;
  parts: [string, string, string];
}

const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** Checks the protected header (shape, allow-list, no embedded key, no `crit`). */
function readHeader(token: string, allowed: readonly string[] | undefined): Header {
  const algorithms = (allowed ?? DEFAULT_ALGORITHMS).filter((name) => ASYMMETRIC_ALGORITHMS.has(name));
  const parts = typeof token === 'string' ? token.split('.') : [];
  if (parts.length !== 3 || !parts.every((part) => BASE64URL.test(part))) {
    throw new JWTVerificationError('token is not a compact JWS');
  }
  const header = decodeJson(parts[0] as string);
  if (header === undefined) throw new JWTVerificationError('token header cannot be decoded');
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
  // RFC 7515 4.1.11: an extension the recipient does not understand must be refused; we know none.
  if ('crit' in header) throw new JWTVerificationError('token header carries "crit" extensions, none of which are supported');
  return { alg, header, parts: parts as [string, string, string] };
}

function checkLeeway(value: unknown): number {
  const leeway = value ?? DEFAULT_LEEWAY_SECONDS;
  if (typeof leeway !== 'number' || !Number.isFinite(leeway) || leeway < 0) {
    throw new TypeError('leeway must be a non-negative number of seconds');
  }
  return leeway;
}

function decodeJson(part: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const HASH_BY_SIZE: Record<string, string> = { '256': 'sha256', '384': 'sha384', '512': 'sha512' };

/** RFC 7518 3.3-3.5 and RFC 8037 3.1, with node:crypto's synchronous verify. */
function verifySignature(alg: string, key: KeyObject, [header, payload, signature]: [string, string, string]): boolean {
  const data = Buffer.from(`${header}.${payload}`, 'ascii');
  const sig = Buffer.from(signature, 'base64url');
  try {
    if (alg === 'EdDSA' || alg === 'Ed25519') return verify(null, data, key, sig);
    const hash = HASH_BY_SIZE[alg.slice(2)] as string;
    if (alg.startsWith('PS')) {
      return verify(hash, data, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST }, sig);
    }
    if (alg.startsWith('ES')) return verify(hash, data, { key, dsaEncoding: 'ieee-p1363' }, sig);
    return verify(hash, data, key, sig);
  } catch {
    return false;
  }
}

function claimError(
  claim: string,
  reason: 'missing' | 'invalid' | 'check_failed',
  code: 'ERR_JWT_CLAIM_INVALID' | 'ERR_JWT_EXPIRED' = 'ERR_JWT_CLAIM_INVALID',
) {
  const message = code === 'ERR_JWT_EXPIRED' ? 'token has expired' : `"${claim}" claim check failed (${reason})`;
  return new JWTVerificationError(message, { code, claim, reason });
}

const oneOf = (expected: string | string[], actual: unknown): boolean =>
  typeof actual === 'string' && (typeof expected === 'string' ? expected === actual : expected.includes(actual));

/** RFC 7519 4.1 checks, in the order and with the `claim`/`reason` values the library always reported. */
function checkClaims(payload: JwtPayload, options: VerifyJwtOptions, leeway: number, requiredClaims: readonly string[]): void {
  for (const claim of requiredClaims) {
    if (!(claim in payload)) throw claimError(claim, 'missing');
  }
  if (options.issuer !== undefined && !oneOf(options.issuer, payload.iss)) throw claimError('iss', 'check_failed');
  if (options.audience !== undefined) {
    const audiences = typeof payload.aud === 'string' ? [payload.aud] : Array.isArray(payload.aud) ? payload.aud : [];
    if (!audiences.some((aud) => oneOf(options.audience as string | string[], aud))) throw claimError('aud', 'check_failed');
  }
  const now = Math.floor((options.currentDate?.getTime() ?? Date.now()) / 1000);
  for (const claim of ['iat', 'nbf', 'exp'] as const) {
    if (payload[claim] !== undefined && (typeof payload[claim] !== 'number' || !Number.isFinite(payload[claim]))) {
      throw claimError(claim, 'invalid');
    }
  }
  if (payload.nbf !== undefined && payload.nbf > now + leeway) throw claimError('nbf', 'check_failed');
  if (payload.exp !== undefined && payload.exp <= now - leeway) throw claimError('exp', 'check_failed', 'ERR_JWT_EXPIRED');
  // RFC 7519 4.1.6 gives no bound, but a token issued in the future is a sign of a forged or
  // mis-clocked issuer.
  if (payload.iat !== undefined && payload.iat > now + leeway) throw claimError('iat', 'check_failed');
}
