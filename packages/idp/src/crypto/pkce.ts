import { createHash } from 'node:crypto';
import { PKCE_VERIFIER_PATTERN } from 'service-protocol';
import { safeEqual } from './secrets.js';

/** RFC 7636 4.2 S256: the challenge a verifier answers, or undefined for a malformed verifier (4.1). */
export function pkceChallengeOf(verifier: string): string | undefined {
  if (!PKCE_VERIFIER_PATTERN.test(verifier)) return undefined;
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** RFC 7636 4.6 with S256, the only method we accept (RFC 9700 2.1.1). */
export function pkceVerifies(verifier: string, challenge: string): boolean {
  const computed = pkceChallengeOf(verifier);
  return computed !== undefined && safeEqual(computed, challenge);
}
