import { createHmac, randomFillSync, randomInt, timingSafeEqual } from 'node:crypto';
import { TOKEN_BYTES } from '../defaults.js';

/**
 * CSPRNG output drawn 4 KiB at a time and handed out once each, as Node does for randomUUID:
 * one randomBytes(16) call cost about 7 µs, and a token request or a login draws several.
 */
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let poolOffset = POOL_BYTES;

function freshBytes(bytes: number): Buffer {
  if (bytes > POOL_BYTES) return randomFillSync(Buffer.alloc(bytes));
  if (poolOffset + bytes > POOL_BYTES) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const out = pool.subarray(poolOffset, poolOffset + bytes);
  poolOffset += bytes;
  return out;
}

/** A random token with a readable prefix (`ac_`, `dt_`…), 256 bits of entropy by default. */
export function randomToken(prefix: string, bytes = TOKEN_BYTES): string {
  return prefix + freshBytes(bytes).toString('base64url');
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
