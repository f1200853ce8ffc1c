import { createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import { TOKEN_BYTES } from '../defaults.js';

/** A random token with a readable prefix (`ac_`, `dt_`…), 256 bits of entropy by default. */
export function randomToken(prefix: string, bytes = TOKEN_BYTES): string {
  return prefix + randomBytes(bytes).toString('base64url');
}

/** A uniformly drawn decimal code from the CSPRNG (randomInt rejects modulo bias). */
export function randomDigits(digits: number): string {
  return randomInt(0, 10 ** digits)
    .toString()
    .padStart(digits, '0');
}

/** Constant-time equality of two strings; unequal lengths compare as unequal without a shortcut on content. */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  if (left.length !== right.length) {
    timingSafeEqual(left, left);
    return false;
  }
  return timingSafeEqual(left, right);
}

/**
 * Keyed hash for secrets at rest (OTPs, codes, tokens, client keys). An HMAC under the server
 * secret rather than a bare hash: a stolen database alone cannot test six-digit OTP guesses.
 */
export type SecretHasher = (purpose: string, value: string) => string;

export function createSecretHasher(serverSecret: Buffer): SecretHasher {
  return (purpose, value) => createHmac('sha256', serverSecret).update(purpose).update('\0').update(value).digest('base64url');
}
