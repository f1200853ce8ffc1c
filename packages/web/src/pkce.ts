import { PKCE_VERIFIER_PATTERN } from 'service-protocol';
import { base64url, utf8 } from './base64url.js';

/** A PKCE pair (RFC 7636): keep `codeVerifier` for the backend, send the challenge to authenticate. */
export interface PkcePair {
  codeVerifier: string;
  codeChallenge: string;
  codeChallengeMethod: 'S256';
}

/**
 * Creates a PKCE code verifier (32 random bytes, base64url: 43 characters) and its S256
 * challenge (RFC 7636 Section 4.1 and 4.2).
 *
 * @example
 * ```ts
 * const pkce = await createPkcePair();
 * const result = await ServiceInitializer.authenticate(email, {
 *   code_challenge: pkce.codeChallenge,
 *   code_challenge_method: pkce.codeChallengeMethod,
 * });
 * // later: send result.code and pkce.codeVerifier to your backend
 * ```
 */
export async function createPkcePair(crypto: Crypto = globalThis.crypto): Promise<PkcePair> {
  const codeVerifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const codeChallenge = await pkceChallengeFromVerifier(codeVerifier, crypto);
  return { codeVerifier, codeChallenge, codeChallengeMethod: 'S256' };
}

/**
 * The S256 challenge of a verifier: base64url(SHA-256(ASCII(verifier))) (RFC 7636 Section 4.2).
 * Rejects with a TypeError when the verifier is not 43 to 128 unreserved characters.
 *
 * @example
 * ```ts
 * await pkceChallengeFromVerifier('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk');
 * // 'E9cVKx4K8Bv4ms42HAbgUfrLk4s96nXMJYk3dKHgm9M'
 * ```
 */
export async function pkceChallengeFromVerifier(verifier: string, crypto: Crypto = globalThis.crypto): Promise<string> {
  if (typeof verifier !== 'string' || !PKCE_VERIFIER_PATTERN.test(verifier)) {
    throw new TypeError('Bad PKCE verifier (RFC 7636 4.1)');
  }
  const digest = await crypto.subtle.digest('SHA-256', utf8(verifier));
  return base64url(new Uint8Array(digest));
}
