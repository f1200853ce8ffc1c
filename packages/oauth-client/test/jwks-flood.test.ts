/**
 * Attack: tokens with made-up `kid`s. A verifier that re-fetches the key set on every unknown
 * `kid` turns each forged token into a request to the key server (amplified denial of
 * service). The cache fetches a URL at most once per cooldown, and concurrent callers share
 * one in-flight fetch.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { afterEach, before, beforeEach, describe, it } from 'node:test';
import { JWKS_CACHE_MAX_AGE_MS, JWKS_COOLDOWN_MS } from '../src/defaults.js';
import { exchangeCodeForClaims, JWTVerificationError } from '../src/index.js';
import { JwksCache } from '../src/jwks.js';
import { verifyWithKeySet } from '../src/verify-jwt.js';
import {
  baseOptions,
  clearExchangeEnv,
  type FakeIdp,
  newSigningKey,
  type SigningKey,
  signIdToken,
  standardClaims,
  startFakeIdp,
} from './fake-idp.js';

let idp: FakeIdp;
let restoreEnv: () => void;
let key: SigningKey;
before(async () => {
  key = await newSigningKey('key-1');
});
beforeEach(async () => {
  restoreEnv = clearExchangeEnv();
  idp = await startFakeIdp(key);
});
afterEach(async () => {
  await idp.close();
  restoreEnv();
});

const code = (err: unknown) => (err instanceof JWTVerificationError ? err.code : String(err));

describe('JWKS flood protection through exchangeCodeForClaims (shared cache)', () => {
  it('50 tokens with unknown kids in a burst cause at most 2 key set fetches', async () => {
    idp.respond = async () => ({
      status: 200,
      body: { token_type: 'Bearer', id_token: await signIdToken({ kid: randomUUID(), privateKey: idp.key.privateKey }) },
    });
    const { publicKey: _unused, ...options } = baseOptions(idp);
    const results = await Promise.allSettled(Array.from({ length: 50 }, () => exchangeCodeForClaims({ ...options, jwksUrl: idp.jwksUrl })));
    assert.ok(results.every((r) => r.status === 'rejected' && code(r.reason) === 'ERR_JWKS_NO_MATCHING_KEY'));
    assert.ok(idp.jwksHits <= 2, `key set fetched ${idp.jwksHits} times`);
    const hits = idp.jwksHits;
    for (let i = 0; i < 20; i++) {
      await exchangeCodeForClaims({ ...options, jwksUrl: idp.jwksUrl }).catch(() => {});
    }
    assert.equal(idp.jwksHits, hits, 'no fetch during the cooldown');
  });
});

describe('JwksCache rules (controlled clock)', () => {
  let now: number;
  let cache: JwksCache;
  beforeEach(() => {
    now = 1_000_000;
    cache = new JwksCache({ now: () => now });
  });
  const verify = (token: string) => verifyWithKeySet(token, cache.resolver(idp.jwksUrl), {});

  it('shares one fetch among concurrent cold callers and caches it', async () => {
    const token = await signIdToken(idp.key, standardClaims());
    await Promise.all(Array.from({ length: 20 }, () => verify(token)));
    assert.equal(idp.jwksHits, 1);
    for (let i = 0; i < 10; i++) await verify(token);
    assert.equal(idp.jwksHits, 1);
  });

  it(`re-fetches after the max age (${JWKS_CACHE_MAX_AGE_MS} ms)`, async () => {
    const token = await signIdToken(idp.key, standardClaims());
    await verify(token);
    now += JWKS_CACHE_MAX_AGE_MS - 1;
    await verify(token);
    assert.equal(idp.jwksHits, 1);
    now += 1;
    await verify(token);
    assert.equal(idp.jwksHits, 2);
  });

  it('after the cooldown, a burst of 50 unknown kids causes exactly one fetch', async () => {
    await verify(await signIdToken(idp.key, standardClaims()));
    now += JWKS_COOLDOWN_MS;
    const tokens = await Promise.all(Array.from({ length: 50 }, () => signIdToken({ kid: randomUUID(), privateKey: idp.key.privateKey })));
    const results = await Promise.allSettled(tokens.map(verify));
    assert.ok(results.every((r) => r.status === 'rejected' && code(r.reason) === 'ERR_JWKS_NO_MATCHING_KEY'));
    assert.equal(idp.jwksHits, 2);
  });

  it('picks up a rotated key (new kid) once the cooldown has passed', async () => {
    await verify(await signIdToken(idp.key, standardClaims()));
    const rotated = await newSigningKey('key-2');
    idp.jwks = { keys: [idp.key.jwk, rotated.jwk] };
    const token = await signIdToken(rotated, standardClaims());

    now += 1_000;
    await assert.rejects(verify(token), { code: 'ERR_JWKS_NO_MATCHING_KEY' });
    assert.equal(idp.jwksHits, 1, 'no fetch within the cooldown');

    now += JWKS_COOLDOWN_MS;
    assert.equal((await verify(token)).sub, 'user-1');
    assert.equal(idp.jwksHits, 2);
  });

  it('does not retry a failed fetch during the cooldown', async () => {
    idp.jwksStatus = 500;
    const token = await signIdToken(idp.key, standardClaims());
    await assert.rejects(verify(token), { code: 'ERR_JWKS_UNAVAILABLE' });
    await assert.rejects(verify(token), { code: 'ERR_JWKS_UNAVAILABLE' });
    assert.equal(idp.jwksHits, 1);
    idp.jwksStatus = 200;
    now += JWKS_COOLDOWN_MS;
    assert.equal((await verify(token)).sub, 'user-1');
    assert.equal(idp.jwksHits, 2);
  });

  it('refuses a malformed key set as unavailable', async () => {
    idp.jwks = { keys: 'nope' } as never;
    await assert.rejects(verify(await signIdToken(idp.key, standardClaims())), { code: 'ERR_JWKS_UNAVAILABLE' });
  });

  it('keys the cache by URL', async () => {
    const other = await startFakeIdp(idp.key);
    try {
      const token = await signIdToken(idp.key, standardClaims());
      await verify(token);
      await verifyWithKeySet(token, cache.resolver(other.jwksUrl), {});
      assert.equal(idp.jwksHits, 1);
      assert.equal(other.jwksHits, 1);
    } finally {
      await other.close();
    }
  });
});
