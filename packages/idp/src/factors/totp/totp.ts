import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

import { TOTP_DIGITS, TOTP_PERIOD_SECONDS, TOTP_SECRET_BYTES, TOTP_WINDOW_STEPS } from '../../defaults.js';

export { TOTP_DIGITS, TOTP_PERIOD_SECONDS, TOTP_SECRET_BYTES, TOTP_WINDOW_STEPS };

const BASE32_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
/** ASCII digits only: `\d` without the `u` flag never matches other scripts' digits. */
const CODE_PATTERN = new RegExp(`^\\d{${TOTP_DIGITS}}$`);

/**
 * A new TOTP secret from the CSPRNG: {@link TOTP_SECRET_BYTES} bytes.
 * Store it sealed (crypto/seal.ts), never in the clear.
 *
 * @example
 * const secret = generateTotpSecret();
 * const uri = otpauthUri({ secret, account: 'ada@example.com', issuer: 'Example' });
 */
export function generateTotpSecret(): Buffer {
  return randomBytes(TOTP_SECRET_BYTES);
}

/**
 * RFC 4648 section 6 base32, upper case, without `=` padding (what authenticator apps expect).
 *
 * @example base32Encode(Buffer.from('foobar')) // 'MZXW6YTBOI'
 */
export function base32Encode(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = ((buffer << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += BASE32_ALPHABET[(buffer >>> bits) & 31];
    }
  }
  if (bits > 0) out += BASE32_ALPHABET[(buffer << (5 - bits)) & 31];
  return out;
}

/**
 * RFC 4648 section 6 base32 decoding. Case-insensitive; ignores `=` padding and white space
 * (people copy secrets in groups of four). Throws a TypeError on any other character and on
 * lengths no encoder produces (1, 3 or 6 characters in the last group of 8).
 *
 * @example base32Decode('mzxw 6ytb oi======') // Buffer 'foobar'
 */
export function base32Decode(text: string): Buffer {
  const clean = text.replace(/[\s=]/g, '').toUpperCase();
  if ([1, 3, 6].includes(clean.length % 8)) throw new TypeError('Invalid base32 length.');
  const out = Buffer.alloc(Math.floor((clean.length * 5) / 8));
  let buffer = 0;
  let bits = 0;
  let index = 0;
  for (const char of clean) {
    const value = BASE32_ALPHABET.indexOf(char);
    if (value < 0) throw new TypeError('Invalid base32 character.');
    buffer = ((buffer << 5) | value) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out[index++] = (buffer >>> bits) & 0xff;
    }
  }
  return out;
}

/** The RFC 6238 time step of a moment (T0 = 0): floor(unix seconds / period). */
export function timeStep(nowMs: number, periodSeconds = TOTP_PERIOD_SECONDS): number {
  return Math.floor(nowMs / (periodSeconds * 1000));
}

/**
 * The code for one time step: HOTP (RFC 4226 5.3) with HMAC-SHA-1, counter = step, dynamic
 * truncation, zero-padded to `digits` (6 to 8; 8 is what the RFC 6238 Appendix B vectors use).
 *
 * @example totpAt(Buffer.from('12345678901234567890'), timeStep(59_000), 8) // '94287082' (RFC 6238 Appendix B)
 */
export function totpAt(secret: Uint8Array, step: number, digits = TOTP_DIGITS): string {
  if (!Number.isSafeInteger(step) || step < 0) throw new RangeError('The TOTP step must be a non-negative integer.');
  if (!Number.isInteger(digits) || digits < 6 || digits > 8) throw new RangeError('TOTP codes have 6 to 8 digits.');
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const mac = createHmac('sha1', secret).update(counter).digest();
  // RFC 4226 5.4: the low 4 bits of the last byte pick the offset of a 31-bit big-endian integer.
  const offset = mac[mac.length - 1]! & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return (binary % 10 ** digits).toString().padStart(digits, '0');
}

export interface MatchTotpOptions {
  /** Steps accepted either side of the current one; default {@link TOTP_WINDOW_STEPS}. */
  window?: number;
  /** The step of the last code this secret accepted; that step and older ones never match again. */
  lastStep?: number | undefined;
}

/**
 * Checks a 6-digit code against the steps now-window..now+window (RFC 6238 5.2) and returns the
 * step it matched, or undefined. Only steps strictly after `lastStep` count, so a code (or an
 * older one) is never accepted twice: store the returned step as the new `lastStep`, atomically.
 * Every candidate is computed and compared in constant time, whatever matches.
 *
 * @example
 * const step = matchTotp(secret, '287082', Date.now(), { lastStep: factor.lastStep });
 * if (step === undefined) throw new ServiceError('ERR_OTP_INVALID', 'The code is not correct.');
 */
export function matchTotp(secret: Uint8Array, code: string, nowMs: number, options: MatchTotpOptions = {}): number | undefined {
  const { window = TOTP_WINDOW_STEPS, lastStep } = options;
  if (!Number.isInteger(window) || window < 0) throw new RangeError('The TOTP window must be a non-negative integer.');
  if (typeof code !== 'string' || !CODE_PATTERN.test(code)) return undefined;
  const given = Buffer.from(code);
  const now = timeStep(nowMs);
  let matched: number | undefined;
  for (let step = now - window; step <= now + window; step++) {
    if (step < 0) continue;
    const equal = timingSafeEqual(Buffer.from(totpAt(secret, step, TOTP_DIGITS)), given);
    // The latest matching step wins (a collision is ~1e-6): the replay barrier only moves forward.
    if (equal && (lastStep === undefined || step > lastStep)) matched = step;
  }
  return matched;
}

export interface OtpauthUriInput {
  secret: Uint8Array;
  /** Shown under the issuer in the app, usually the email address. */
  account: string;
  /** The service or client name shown in the app. */
  issuer: string;
}

/**
 * The `otpauth://` URI authenticator apps scan as a QR code (Google Authenticator Key Uri Format):
 * label `issuer:account`, both parts percent-encoded, and the issuer repeated as a parameter.
 * Neither part may contain a colon (the format forbids it); this throws a TypeError then.
 *
 * @example
 * otpauthUri({ secret, account: 'ada@example.com', issuer: 'Example Co' })
 * // 'otpauth://totp/Example%20Co:ada%40example.com?secret=…&issuer=Example%20Co&algorithm=SHA1&digits=6&period=30'
 */
export function otpauthUri({ secret, account, issuer }: OtpauthUriInput): string {
  if (!account || !issuer) throw new TypeError('The otpauth URI needs an account and an issuer.');
  // Apps split the decoded label at its first colon: one inside the account is harmless (it
  // comes after the separator), one inside the issuer would move the split.
  if (issuer.includes(':')) throw new TypeError('The issuer may not contain a colon.');
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  const query = [
    `secret=${base32Encode(secret)}`,
    `issuer=${encodeURIComponent(issuer)}`,
    'algorithm=SHA1',
    `digits=${TOTP_DIGITS}`,
    `period=${TOTP_PERIOD_SECONDS}`,
  ].join('&');
  return `otpauth://totp/${label}?${query}`;
}
