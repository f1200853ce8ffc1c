import { createHash } from 'node:crypto';
import { PKCE_VERIFIER_PATTERN } from 'service-protocol';
import { safeEqual } from './secrets.js';

/** RFC 7636 4.6 with S256, the only method we accept (RFC 9700 2.1.1). */
export function pkceVerifies(verifier: string, challenge: string): boolean {
  if (!PKCE_VERIFIER_PATTERN.test(verifier)) return false;
  return safeEqual(createHash('sha256').update(verifier, 'ascii').digest('base64url'), challenge);
}
