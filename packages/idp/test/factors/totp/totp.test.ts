/**
 * TOTP (RFC 6238) on node:crypto, checked against the RFC's own vectors and against an
 * independent implementation (the `otpauth` package), plus the replay and window rules of
 * the security baseline: ±1 step, never the same or an older step twice.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomInt } from 'node:crypto';
import { describe, it } from 'node:test';
import * as OTPAuth from 'otpauth';
import {
  base32Decode,
  base32Encode,
  generateTotpSecret,
  matchTotp,
  otpauthUri,
  TOTP_DIGITS,
  TOTP_PERIOD_SECONDS,
  TOTP_SECRET_BYTES,
  TOTP_WINDOW_STEPS,
  timeStep,
  totpAt,
} from '../../../src/factors/totp/totp.js';

const PERIOD_MS = TOTP_PERIOD_SECONDS * 1000;

describe('base32 (RFC 4648)', () => {
  // RFC 4648 section 10 test vectors, shown there with padding.
  const vectors: [string, string][] = [
    ['', ''],
    ['f', 'MY======'],
    ['fo', 'MZXQ===='],
    ['foo', 'MZXW6==='],
    ['foob', 'MZXW6YQ='],
    ['fooba', 'MZXW6YTB'],
    ['foobar', 'MZXW6YTBOI======'],
  ];

  it('encodes the RFC 4648 vectors, without padding', () => {
    for (const [plain, encoded] of vectors) assert.equal(base32Encode(Buffer.from(plain)), encoded.replace(/=+$/, ''), plain);
  });

  it('decodes the RFC 4648 vectors with or without padding, in any case, with spaces', () => {
    for (const [plain, encoded] of vectors) {
      assert.equal(base32Decode(encoded).toString(), plain);
      assert.equal(base32Decode(encoded.replace(/=+$/, '')).toString(), plain);
      assert.equal(base32Decode(encoded.toLowerCase()).toString(), plain);
    }
    assert.equal(base32Decode('mzxw 6ytb oi').toString(), 'foobar');
    assert.equal(base32Decode(' MZXW\t6YTB\nOI== ').toString(), 'foobar');
  });

  it('round-trips random bytes of every length from 0 to 64', () => {
    for (let length = 0; length <= 64; length++) {
      const bytes = randomBytes(length);
      const encoded = base32Encode(bytes);
      assert.match(encoded, /^[A-Z2-7]*$/);
      assert.deepEqual(base32Decode(encoded), bytes);
      assert.deepEqual(base32Decode(encoded.toLowerCase()), bytes);
    }
  });

  it('refuses characters outside the alphabet and impossible lengths', () => {
    for (const bad of ['MZXW1', 'MZXW0', 'MZXW8', 'MZXW6YT!', 'MZ-XW', 'ÉZXW', 'A', 'ABC', 'ABCDEF'])
      assert.throws(() => base32Decode(bad), TypeError, bad);
  });
});

describe('TOTP codes', () => {
  // RFC 6238 Appendix B, SHA-1 rows: the seed is the ASCII string "12345678901234567890".
  const seed = Buffer.from('12345678901234567890', 'ascii');
  const vectors: [number, string][] = [
    [59, '94287082'],
    [1111111109, '07081804'],
    [1111111111, '14050471'],
    [1234567890, '89005924'],
    [2000000000, '69279037'],
    [20000000000, '65353130'],
  ];

  it('matches the RFC 6238 Appendix B SHA-1 vectors (8 digits) and their 6-digit suffixes', () => {
    for (const [seconds, code] of vectors) {
      const step = timeStep(seconds * 1000);
      assert.equal(step, Math.floor(seconds / 30));
      assert.equal(totpAt(seed, step, 8), code, `T=${seconds}`);
      assert.equal(totpAt(seed, step), code.slice(2), `T=${seconds}, 6 digits`);
      assert.equal(matchTotp(seed, code.slice(2), seconds * 1000), step);
    }
  });

  it('agrees with the independent otpauth package on random secrets and times', () => {
    for (let i = 0; i < 500; i++) {
      const secret = i % 2 ? generateTotpSecret() : randomBytes(randomInt(1, 65));
      const timestamp = randomInt(0, 2 ** 47); // up to the year 6429, in milliseconds
      const reference = new OTPAuth.TOTP({
        secret: OTPAuth.Secret.fromBase32(base32Encode(secret)),
        algorithm: 'SHA1',
        digits: TOTP_DIGITS,
        period: TOTP_PERIOD_SECONDS,
      });
      const expected = reference.generate({ timestamp });
      assert.equal(totpAt(secret, timeStep(timestamp)), expected, `secret ${secret.toString('hex')} at ${timestamp}`);
      assert.equal(matchTotp(secret, expected, timestamp), timeStep(timestamp));
    }
  });

  it('makes 20-byte random secrets', () => {
    assert.equal(TOTP_SECRET_BYTES, 20);
    const a = generateTotpSecret();
    assert.equal(a.length, TOTP_SECRET_BYTES);
    assert.notDeepEqual(a, generateTotpSecret());
  });

  it('refuses steps and digit counts outside the RFC', () => {
    assert.throws(() => totpAt(seed, -1), RangeError);
    assert.throws(() => totpAt(seed, 1.5), RangeError);
    assert.throws(() => totpAt(seed, 1, 5), RangeError);
    assert.throws(() => totpAt(seed, 1, 9), RangeError);
  });
});

describe('TOTP verification', () => {
  const secret = generateTotpSecret();
  // The middle of a step, so "now" is not on a boundary.
  const now = 1_750_000_000_000 - (1_750_000_000_000 % PERIOD_MS) + PERIOD_MS / 2;
  const step = timeStep(now);
  const codeAt = (offset: number) => totpAt(secret, step + offset);

  it(`accepts the current step and ±${TOTP_WINDOW_STEPS}, and returns the step matched`, () => {
    assert.equal(TOTP_WINDOW_STEPS, 1);
    for (const offset of [-1, 0, 1]) assert.equal(matchTotp(secret, codeAt(offset), now), step + offset);
    // Step boundaries: the first and last millisecond of the current step.
    assert.equal(matchTotp(secret, codeAt(-1), step * PERIOD_MS), step - 1);
    assert.equal(matchTotp(secret, codeAt(1), (step + 1) * PERIOD_MS - 1), step + 1);
  });

  it('refuses codes two or more steps away', () => {
    for (const offset of [-3, -2, 2, 3]) {
      const code = codeAt(offset);
      // Skip the ~1e-6 case where a far code collides with one inside the window.
      if ([-1, 0, 1].some((near) => codeAt(near) === code)) continue;
      assert.equal(matchTotp(secret, code, now), undefined, `offset ${offset}`);
    }
  });

  it('with a wider window, accepts ±2', () => {
    assert.equal(matchTotp(secret, codeAt(-2), now, { window: 2 }), step - 2);
    assert.equal(matchTotp(secret, codeAt(2), now, { window: 2 }), step + 2);
  });

  it('never accepts the same step, or an older one, twice (lastStep)', () => {
    // Attack: a code seen over a shoulder or phished in real time is replayed within its 90 s of validity.
    const accepted = matchTotp(secret, codeAt(0), now);
    assert.equal(accepted, step);
    assert.equal(matchTotp(secret, codeAt(0), now, { lastStep: accepted }), undefined, 'same code again');
    assert.equal(matchTotp(secret, codeAt(-1), now, { lastStep: accepted }), undefined, 'an older code');
    assert.equal(matchTotp(secret, codeAt(1), now, { lastStep: accepted }), step + 1, 'the next code still works');
    assert.equal(matchTotp(secret, codeAt(1), now, { lastStep: step + 1 }), undefined);
    assert.equal(matchTotp(secret, codeAt(0), now + PERIOD_MS, { lastStep: accepted }), undefined, 'still refused a step later');
  });

  it('refuses anything but exactly six ASCII digits, before computing', () => {
    const code = codeAt(0);
    for (const bad of [
      '',
      code.slice(0, 5),
      `${code}0`,
      ` ${code}`,
      `${code} `,
      `${code.slice(0, 3)} ${code.slice(3)}`,
      'abcdef',
      '12345a',
      '١٢٣٤٥٦',
      '+12345',
      '-12345',
    ])
      assert.equal(matchTotp(secret, bad, now), undefined, JSON.stringify(bad));
    assert.equal(matchTotp(secret, undefined as unknown as string, now), undefined);
    assert.equal(matchTotp(secret, 123456 as unknown as string, now), undefined);
  });

  it('refuses a code made with another secret', () => {
    const other = generateTotpSecret();
    const code = totpAt(other, step);
    if ([-1, 0, 1].some((offset) => codeAt(offset) === code)) return;
    assert.equal(matchTotp(secret, code, now), undefined);
  });
});

describe('otpauth URI', () => {
  it('follows the Key Uri Format and parses back with otpauth to the same secret, issuer and label', () => {
    const secret = generateTotpSecret();
    const uri = otpauthUri({ secret, account: 'ada+mfa@example.com', issuer: 'Example Co & Sons' });
    assert.equal(
      uri,
      `otpauth://totp/Example%20Co%20%26%20Sons:ada%2Bmfa%40example.com?secret=${base32Encode(secret)}&issuer=Example%20Co%20%26%20Sons&algorithm=SHA1&digits=6&period=30`,
    );
    const parsed = OTPAuth.URI.parse(uri);
    assert.ok(parsed instanceof OTPAuth.TOTP);
    assert.equal(parsed.issuer, 'Example Co & Sons');
    assert.equal(parsed.label, 'ada+mfa@example.com');
    assert.equal(parsed.algorithm, 'SHA1');
    assert.equal(parsed.digits, 6);
    assert.equal(parsed.period, 30);
    assert.deepEqual(Buffer.from(parsed.secret.bytes), secret);
    const timestamp = Date.now();
    assert.equal(parsed.generate({ timestamp }), totpAt(secret, timeStep(timestamp)));
  });

  it('encodes non-ASCII names and colons in the account, and refuses an empty account or a colon in the issuer', () => {
    const secret = generateTotpSecret();
    const parsed = OTPAuth.URI.parse(otpauthUri({ secret, account: 'zoë@exämple.com', issuer: 'Société Générale' }));
    assert.equal(parsed.issuer, 'Société Générale');
    assert.equal(parsed.label, 'zoë@exämple.com');
    // A colon (legal in an email local part, or an IPv6 host) is encoded, not taken as the label separator.
    const colons = OTPAuth.URI.parse(otpauthUri({ secret, account: '"a:b"@example.com', issuer: 'X' }));
    assert.equal(colons.issuer, 'X');
    assert.equal(colons.label, '"a:b"@example.com');
    assert.throws(() => otpauthUri({ secret, account: 'a', issuer: 'X:Y' }), TypeError);
    assert.throws(() => otpauthUri({ secret, account: '', issuer: 'X' }), TypeError);
  });
});
