/**
 * The one signed-token codec (crypto/signed-token.ts) that device challenges, "this wasn't me"
 * links and passkey challenges bind: a token checks only under its own purpose, with every
 * visible and bound field, the expiry and the nonce as issued, the exact number of fields,
 * within the length cap and before its expiry.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { createSecretHasher } from '../src/crypto/secrets.js';
import { createSignedTokens } from '../src/crypto/signed-token.js';
import { SQLITE_SUITE_ONLY } from './helpers.js';

const hash = createSecretHasher(randomBytes(32));
const now = 1_800_000_000_000;
const spec = { purpose: 'test-token', visibleFields: 2, maxLength: 200 };
const codec = createSignedTokens(hash, spec);
const fields = { visible: ['a', 'usr_1'], bound: ['cli_1', 'https://app.example'] };

describe('signed tokens', SQLITE_SUITE_ONLY, () => {
  const token = codec.issue(fields, now + 60_000);

  it('shows the visible fields, then the expiry, a 16-byte nonce and the MAC', () => {
    const [a, user, expiry, nonce, mac, extra] = token.split('.');
    assert.deepEqual([a, user], fields.visible);
    assert.equal(Number.parseInt(expiry as string, 36), now + 60_000);
    assert.equal(Buffer.from(nonce as string, 'base64url').length, 16);
    assert.equal(Buffer.from(mac as string, 'base64url').length, 32);
    assert.equal(extra, undefined);
    assert.notEqual(codec.issue(fields, now + 60_000), token, 'a fresh nonce each time');
  });

  it('checks a token as issued, giving back its visible fields and expiry', () => {
    const checked = codec.check(token, fields.bound, now);
    assert.ok(checked.ok);
    assert.deepEqual(checked.visible, fields.visible);
    assert.equal(checked.expiresAt, now + 60_000);
    assert.deepEqual(
      codec.check(token, () => fields.bound, now),
      checked,
      'the bound fields may be derived from the visible ones',
    );
    assert.deepEqual(codec.visibleOf(token), fields.visible);
  });

  it('refuses a tampered visible field, expiry, nonce or MAC', () => {
    const parts = token.split('.');
    for (let i = 0; i < parts.length; i++) {
      const tampered = parts.map((p, j) => (j === i ? (p.startsWith('x') ? `y${p.slice(1)}` : `x${p.slice(1)}`) : p)).join('.');
      assert.deepEqual(codec.check(tampered, fields.bound, now), { ok: false, reason: 'invalid' }, `field ${i}`);
    }
    const later = [...parts.slice(0, 2), (now + 3_600_000).toString(36), ...parts.slice(3)].join('.');
    assert.deepEqual(codec.check(later, fields.bound, now), { ok: false, reason: 'invalid' }, 'a longer life');
  });

  it('refuses each bound field changed, one left out or one added', () => {
    for (let i = 0; i < fields.bound.length; i++) {
      const bound = fields.bound.map((b, j) => (j === i ? `${b}x` : b));
      assert.deepEqual(codec.check(token, bound, now), { ok: false, reason: 'invalid' }, `bound field ${i}`);
    }
    assert.deepEqual(codec.check(token, fields.bound.slice(0, 1), now), { ok: false, reason: 'invalid' });
    assert.deepEqual(codec.check(token, [...fields.bound, ''], now), { ok: false, reason: 'invalid' });
    assert.deepEqual(
      codec.check(token, () => undefined, now),
      { ok: false, reason: 'invalid' },
    );
  });

  it('refuses a field moved between the visible and the bound ones', () => {
    const moved = createSignedTokens(hash, { ...spec, visibleFields: 1 });
    const other = moved.issue({ visible: ['a'], bound: ['usr_1', ...fields.bound] }, now + 60_000);
    const [a, ...rest] = other.split('.');
    assert.deepEqual(codec.check([a, 'usr_1', ...rest].join('.'), fields.bound, now), { ok: false, reason: 'invalid' });
  });

  it('refuses a token of another purpose', () => {
    const other = createSignedTokens(hash, { ...spec, purpose: 'other-token' });
    assert.deepEqual(other.check(token, fields.bound, now), { ok: false, reason: 'invalid' });
    assert.deepEqual(codec.check(other.issue(fields, now + 60_000), fields.bound, now), { ok: false, reason: 'invalid' });
  });

  it('refuses an extra or a missing field, and a token over the length cap', () => {
    assert.deepEqual(codec.check(`${token}.x`, fields.bound, now), { ok: false, reason: 'invalid' });
    assert.deepEqual(codec.check(`x.${token}`, fields.bound, now), { ok: false, reason: 'invalid' });
    assert.deepEqual(codec.check(token.split('.').slice(1).join('.'), fields.bound, now), { ok: false, reason: 'invalid' });
    assert.equal(codec.visibleOf(`${token}.x`), undefined);
    const long = codec.issue({ visible: ['a', 'u'.repeat(200 - token.length + 6)], bound: fields.bound }, now + 60_000);
    assert.ok(long.length > 200);
    assert.deepEqual(codec.check(long, fields.bound, now), { ok: false, reason: 'invalid' });
    assert.equal(codec.visibleOf(long), undefined);
    assert.throws(() => codec.issue({ visible: ['a.b', 'c'], bound: [] }, now), /without a dot/);
    assert.throws(() => codec.issue({ visible: ['a'], bound: [] }, now), /2 visible fields/);
  });

  it('tells an expired token from an invalid one', () => {
    assert.deepEqual(codec.check(token, fields.bound, now + 60_000), { ok: false, reason: 'expired' });
    assert.deepEqual(codec.check(token, ['x', 'y'], now + 60_000), { ok: false, reason: 'invalid' }, 'only a genuine token is expired');
  });

  it('accepts a legacy MAC rule when given one, and only then', () => {
    const legacyMac = (f: { visible: string[]; bound: string[] }, expiry: string, nonce: string) =>
      hash('test-token', `${f.bound.join('.')}.${f.visible.join('.')}.${expiry}.${nonce}`);
    const [a, user, expiry, nonce] = token.split('.') as [string, string, string, string];
    const old = [a, user, expiry, nonce, legacyMac(fields, expiry, nonce)].join('.');
    assert.deepEqual(codec.check(old, fields.bound, now), { ok: false, reason: 'invalid' });
    const compatible = createSignedTokens(hash, { ...spec, legacyMac });
    assert.ok(compatible.check(old, fields.bound, now).ok);
    assert.ok(compatible.check(token, fields.bound, now).ok);
    assert.deepEqual(compatible.check(old, ['cli_2', fields.bound[1] as string], now), { ok: false, reason: 'invalid' });
  });
});
