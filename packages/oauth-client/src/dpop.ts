import { createHash, timingSafeEqual } from 'node:crypto';
import { calculateJwkThumbprint, EmbeddedJWK, type JWK, jwtVerify } from 'jose';
import { DPOP_ALGORITHMS, DPOP_MAX_AGE_SECONDS, DPOP_MAX_FUTURE_SECONDS, DPOP_REPLAY_CACHE_MAX_ENTRIES } from './defaults.js';
import { DPoPVerificationError, type DPoPVerificationErrorCode } from './errors.js';
import type { JwtPayload } from './verify-jwt.js';

/** Options of {@link verifyDpopRequest}: the request as received, and how to check its token. */
export interface VerifyDpopRequestOptions {
  /** The request's method (`GET`, `POST`, …). */
  method: string;
  /**
   * The URL the client called, as the public sees it (behind a proxy: its public origin, not
   * the internal one). Query and fragment are ignored (RFC 9449 4.3).
   */
  url: string | URL;
  /** The `Authorization` header: `DPoP <token>`. */
  authorization: string | undefined;
  /** The `DPoP` header (exactly one proof). */
  dpop: string | string[] | undefined;
  /**
   * Verifies the access token and returns its claims, e.g. `(t) => verifyJwt(t, key, { issuer })`
   * for an RFC 9068 JWT access token; a thrown error is passed through.
   */
  verifyAccessToken: (accessToken: string) => JwtPayload | Promise<JwtPayload>;
  /** Allowed proof algorithms; default ES256, ES384, EdDSA, Ed25519, RS256, PS256 (asymmetric only). */
  algorithms?: string[];
  /** A proof older than this (by `iat`) is refused; default 60 seconds. */
  maxAgeSeconds?: number;
  /** A proof from up to this far in the future is taken (clock skew); default 5 seconds. */
  futureSeconds?: number;
  /** The time to check `iat` against; default now. */
  currentDate?: Date;
  /**
   * Records the proof's (`jkt`, `jti`) and says whether it is new: false refuses the proof as a
   * replay. Servers with several nodes pass one backed by their shared store (an insert that
   * fails on a duplicate key). Default: an in-process cache, enough for one process.
   */
  isFirstUse?: (jkt: string, jti: string, expiresAt: Date) => boolean | Promise<boolean>;
  /**
   * Server nonces (RFC 9449 9): the nonces accepted now, or a check. When given, a proof without
   * an accepted nonce is refused with `ERR_DPOP_NONCE_REQUIRED`; answer it with 401, the error's
   * `challenge` as `WWW-Authenticate`, and a `DPoP-Nonce` header.
   */
  nonce?: string | string[] | ((nonce: string) => boolean | Promise<boolean>);
}

/** What {@link verifyDpopRequest} accepted. */
export interface VerifiedDpopRequest {
  /** The access token's claims, as `verifyAccessToken` returned them. */
  claims: JwtPayload;
  /** The JWK SHA-256 thumbprint (RFC 7638) of the proof's key, equal to the token's `cnf.jkt`. */
  jkt: string;
  accessToken: string;
}

const b64sha256 = (value: string) => createHash('sha256').update(value).digest('base64url');

function same(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** @internal A refusal with its RFC 9449 7.1 challenge (also used by verifyAccessToken). */
export function dpopRefusal(
  code: DPoPVerificationErrorCode,
  message: string,
  error: 'invalid_token' | 'invalid_dpop_proof' | 'use_dpop_nonce',
  algs: string[],
) {
  return new DPoPVerificationError(message, {
    code,
    challenge: `DPoP error="${error}", error_description="${message}", algs="${algs.join(' ')}"`,
  });
}

const fail = dpopRefusal;

/** The default replay check: (jkt, jti) pairs seen by this process until their proofs expire. */
const seen = new Map<string, number>();
function firstUseInProcess(jkt: string, jti: string, expiresAt: Date): boolean {
  const now = Date.now();
  if (seen.size >= DPOP_REPLAY_CACHE_MAX_ENTRIES) for (const [key, until] of seen) if (until <= now) seen.delete(key);
  const key = `${jkt} ${jti}`;
  if ((seen.get(key) ?? 0) > now) return false;
  if (seen.size >= DPOP_REPLAY_CACHE_MAX_ENTRIES) seen.delete(seen.keys().next().value as string);
  seen.set(key, expiresAt.getTime());
  return true;
}

function targetOf(value: string | URL): string | undefined {
  try {
    const url = new URL(value);
    return url.origin + url.pathname;
  } catch {
    return undefined;
  }
}

/**
 * Verifies a request to a resource server that carries a DPoP-bound access token (RFC 9449 7):
 * `Authorization: DPoP <token>` and one `DPoP` proof, which must be a `dpop+jwt` signed by the
 * public key in its header (verified by jose), with this request's method (`htm`) and URL
 * (`htu`), a recent `iat`, the token's hash (`ath`), a `jti` not seen before, the server's
 * nonce when `nonce` is given; and the token, verified by `verifyAccessToken`, must be bound to
 * that key (`cnf.jkt`). A bearer token, or a DPoP token without its key, is refused.
 *
 * @throws {@link DPoPVerificationError} the request is refused; answer 401 with its `challenge`
 *   as `WWW-Authenticate`
 *
 * @example
 * ```ts
 * import { verifyDpopRequest, verifyJwt, DPoPVerificationError } from 'service-oauth-client';
 *
 * app.get('/api/orders', async (req, res) => {
 *   try {
 *     const { claims } = await verifyDpopRequest({
 *       method: req.method,
 *       url: `https://api.example.com${req.originalUrl}`,
 *       authorization: req.headers.authorization,
 *       dpop: req.headers.dpop,
 *       verifyAccessToken: (token) => verifyJwt(token, publicKeyPem, { issuer: 'https://idp.example.com' }),
 *     });
 *     res.json(await ordersOf(claims.sub));
 *   } catch (err) {
 *     if (err instanceof DPoPVerificationError) return res.status(401).set('www-authenticate', err.challenge).end();
 *     throw err;
 *   }
 * });
 * ```
 */
export async function verifyDpopRequest(options: VerifyDpopRequestOptions): Promise<VerifiedDpopRequest> {
  const algorithms = options.algorithms ?? [...DPOP_ALGORITHMS];
  const match = /^DPoP +([A-Za-z0-9\-._~+/]+=*)$/i.exec(options.authorization ?? '');
  if (!match?.[1]) throw fail('ERR_DPOP_TOKEN_NOT_BOUND', 'Send the access token as DPoP, with a proof.', 'invalid_token', algorithms);
  const accessToken = match[1];
  const header = options.dpop;
  if (typeof header !== 'string' || /[\s,]/.test(header))
    throw fail('ERR_DPOP_PROOF_INVALID', 'Send exactly one DPoP proof.', 'invalid_dpop_proof', algorithms);
  const at = options.currentDate ?? new Date();
  let payload: JwtPayload;
  let jwk: JWK;
  try {
    const verified = await jwtVerify(header, EmbeddedJWK, { typ: 'dpop+jwt', algorithms, currentDate: at });
    payload = verified.payload;
    jwk = verified.protectedHeader.jwk as JWK;
  } catch (cause) {
    const error = fail(
      'ERR_DPOP_PROOF_INVALID',
      'The DPoP proof is malformed or its signature does not verify.',
      'invalid_dpop_proof',
      algorithms,
    );
    throw Object.assign(error, { cause });
  }
  const invalid = (message: string) => fail('ERR_DPOP_PROOF_INVALID', message, 'invalid_dpop_proof', algorithms);
  const { jti, htm, htu, iat, ath, nonce } = payload;
  if (typeof jti !== 'string' || jti === '' || jti.length > 200) throw invalid('The DPoP proof has no usable jti.');
  if (htm !== options.method) throw invalid('The DPoP proof is for another HTTP method.');
  if (typeof htu !== 'string' || targetOf(htu) === undefined || targetOf(htu) !== targetOf(options.url))
    throw invalid('The DPoP proof is for another URL.');
  const nowSeconds = at.getTime() / 1000;
  const maxAge = options.maxAgeSeconds ?? DPOP_MAX_AGE_SECONDS;
  if (typeof iat !== 'number' || iat < nowSeconds - maxAge || iat > nowSeconds + (options.futureSeconds ?? DPOP_MAX_FUTURE_SECONDS))
    throw invalid('The DPoP proof is too old or from the future.');
  if (typeof ath !== 'string' || !same(ath, b64sha256(accessToken)))
    throw invalid('The DPoP proof does not cover this access token (ath).');
  if (options.nonce !== undefined) {
    const accepted =
      typeof nonce === 'string' &&
      (typeof options.nonce === 'function'
        ? await options.nonce(nonce)
        : (Array.isArray(options.nonce) ? options.nonce : [options.nonce]).some((n) => same(n, nonce)));
    if (!accepted) throw fail('ERR_DPOP_NONCE_REQUIRED', 'Use the DPoP-Nonce of this answer.', 'use_dpop_nonce', algorithms);
  }
  const jkt = await calculateJwkThumbprint(jwk, 'sha256');
  const claims = await options.verifyAccessToken(accessToken);
  const bound = (claims.cnf as { jkt?: unknown } | undefined)?.jkt;
  if (typeof bound !== 'string' || !same(bound, jkt))
    throw fail('ERR_DPOP_TOKEN_NOT_BOUND', 'The access token is not bound to the proof`s key.', 'invalid_token', algorithms);
  // Last, so that a refused request spends nothing: the proof is used once.
  const firstUse = options.isFirstUse ?? firstUseInProcess;
  if (!(await firstUse(jkt, jti, new Date((iat + maxAge + 1) * 1000))))
    throw fail('ERR_DPOP_PROOF_REPLAYED', 'This DPoP proof was already used.', 'invalid_dpop_proof', algorithms);
  return { claims, jkt, accessToken };
}
