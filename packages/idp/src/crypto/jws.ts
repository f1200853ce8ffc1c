import { createHmac, type KeyObject, sign } from 'node:crypto';
import { decodeProtectedHeader } from 'jose';

/**
 * JWS compact serialization (RFC 7515 7.1) over node:crypto's signatures: RS256 is
 * RSASSA-PKCS1-v1_5 with SHA-256 (RFC 7518 3.3), ES256 is ECDSA P-256 with SHA-256 and the
 * signature as r‖s (RFC 7518 3.4), EdDSA is Ed25519 (RFC 8037 3.1), HS256 is HMAC-SHA-256
 * (RFC 7518 3.2).
 *
 * Why not jose here: measured on this project's 2-core machine, jose's WebCrypto signing
 * reached about 3,200 ID tokens/s while node:crypto's callback `sign`, which runs in the
 * libuv thread pool, reached about 5,700 of the machine's 6,700 raw signatures/s. Tokens are
 * verified with jose and openid-client in the tests. Untrusted input is only read by
 * `unacceptedAlg`, for the words of a refusal.
 */
const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

export type AsymmetricAlg = 'RS256' | 'ES256' | 'EdDSA';

/** Signs in the libuv thread pool (crypto.sign's callback form), off the event loop. */
export function signJws(
  alg: AsymmetricAlg,
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  key: KeyObject,
): Promise<string> {
  const input = `${encode({ ...header, alg })}.${encode(payload)}`;
  return new Promise((resolve, reject) => {
    const done = (error: Error | null, signature: Buffer) => {
      if (error) reject(error);
      else resolve(`${input}.${signature.toString('base64url')}`);
    };
    if (alg === 'EdDSA') sign(null, Buffer.from(input), key, done);
    else if (alg === 'ES256') sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }, done);
    else sign('sha256', Buffer.from(input), key, done);
  });
}

export function signHs256(header: Record<string, unknown>, payload: Record<string, unknown>, key: Uint8Array): string {
  const input = `${encode({ ...header, alg: 'HS256' })}.${encode(payload)}`;
  return `${input}.${createHmac('sha256', key).update(input).digest('base64url')}`;
}

/** How an `alg` outside the accepted list is named in a refusal: as sent when plainly a name, never echoing other text into a header. */
const QUOTABLE_ALG = /^[A-Za-z0-9._+-]{1,32}$/;

/**
 * The `alg` a compact JWS's protected header names when it is not one of `accepted`, fit to quote
 * in a refusal (RFC 9449 12.2's error_description, a quoted string in WWW-Authenticate); undefined
 * when it is accepted, or when the header cannot be read (the verifier's own refusal says so).
 */
export function unacceptedAlg(jws: string, accepted: readonly string[]): string | undefined {
  let alg: unknown;
  try {
    alg = decodeProtectedHeader(jws).alg;
  } catch {
    return undefined;
  }
  if (typeof alg === 'string' && accepted.includes(alg)) return undefined;
  return typeof alg === 'string' && QUOTABLE_ALG.test(alg) ? alg : 'an unnamed one';
}
