import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createPrivateKey, createSecretKey, generateKeyPairSync, webcrypto, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateKeyPair, SignJWT } from 'jose';
import { IMPORTED_KEY_CACHE_MAX_ENTRIES } from '../src/defaults.js';
import { InvalidPublicKeyError, JWTVerificationError, verifyJwt } from '../src/index.js';
import { importedKeyCount } from '../src/keys.js';
import { CLIENT_ID, ISSUER, newSigningKey, rawJwt, type SigningKey, signIdToken, standardClaims } from './fake-idp.js';

// Frozen clock: every time check below runs against this instant.
const NOW = new Date('2026-01-15T12:00:00Z');
const NOW_S = NOW.getTime() / 1000;
const at = { currentDate: NOW };
const claimsAt = (overrides: Record<string, unknown> = {}) => standardClaims({ iat: NOW_S - 60, exp: NOW_S + 240, ...overrides });

let key: SigningKey;
let dir: string;
before(async () => {
  key = await newSigningKey('k1');
  dir = await mkdtemp(join(tmpdir(), 'verify-jwt-'));
});
after(() => rm(dir, { recursive: true, force: true }));

const throwsWith = (call: () => unknown, code: string, extra: Record<string, unknown> = {}) =>
  assert.throws(call, (err: unknown) => {
    assert.ok(err instanceof JWTVerificationError, `expected JWTVerificationError, got ${String(err)}`);
    assert.equal(err.code, code);
    for (const [k, v] of Object.entries(extra)) assert.equal((err as unknown as Record<string, unknown>)[k], v);
    return true;
  });

describe('verifyJwt: keys', () => {
  it('accepts PEM string, Buffer, DER Buffer, file path, KeyObject and CryptoKey', async () => {
    const token = await signIdToken(key, claimsAt());
    const path = join(dir, 'k.pem');
    await writeFile(path, key.publicPem);
    const der = key.publicKey.export({ type: 'spki', format: 'der' });
    const cryptoKey = await webcrypto.subtle.importKey('spki', der, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, true, ['verify']);
    for (const input of [key.publicPem, Buffer.from(key.publicPem), der, path, key.publicKey, cryptoKey]) {
      const claims = await verifyJwt(token, input as never, at);
      assert.equal(claims.sub, 'user-1');
    }
  });

  it('accepts PEM with literal \\n sequences (as env variables carry it)', async () => {
    const token = await signIdToken(key, claimsAt());
    const oneLine = key.publicPem.trim().replaceAll('\n', '\\n');
    assert.equal((await verifyJwt(token, oneLine, at)).sub, 'user-1');
  });

  it('accepts an X.509 certificate', async (t) => {
    let certPem: string;
    try {
      const keyPath = join(dir, 'cert-key.pem');
      const certPath = join(dir, 'cert.pem');
      execFileSync(
        'openssl',
        ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyPath, '-out', certPath, '-days', '1', '-subj', '/CN=idp.test'],
        { stdio: 'ignore' },
      );
      certPem = readFileSync(certPath, 'utf8');
      const privatePem = readFileSync(keyPath, 'utf8');
      const token = await new SignJWT(claimsAt()).setProtectedHeader({ alg: 'RS256' }).sign(createPrivateKey(privatePem));
      assert.ok(new X509Certificate(certPem));
      assert.equal((await verifyJwt(token, certPem, at)).sub, 'user-1');
      assert.equal((await verifyJwt(token, certPath, at)).sub, 'user-1');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return t.skip('openssl not installed');
      throw err;
    }
  });

  it('accepts PS256 and ES256 when allowed and the key fits', async () => {
    const ec = await generateKeyPair('ES256');
    const esToken = await new SignJWT(claimsAt()).setProtectedHeader({ alg: 'ES256' }).sign(ec.privateKey);
    assert.equal((await verifyJwt(esToken, ec.publicKey as webcrypto.CryptoKey, { ...at, algorithms: ['ES256'] })).sub, 'user-1');
    const psToken = await new SignJWT(claimsAt()).setProtectedHeader({ alg: 'PS256' }).sign(key.privateKey);
    assert.equal((await verifyJwt(psToken, key.publicPem, { ...at, algorithms: ['RS256', 'PS256'] })).sub, 'user-1');
    // Default allow-list is RS256 only.
    throwsWith(() => verifyJwt(psToken, key.publicPem, at), 'ERR_JWT_ALG_NOT_ALLOWED');
  });

  it('accepts EdDSA (RFC 8037) with an Ed25519 key when allowed', async () => {
    const ed = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const token = await new SignJWT(claimsAt()).setProtectedHeader({ alg: 'EdDSA' }).sign(ed.privateKey);
    assert.equal(verifyJwt(token, ed.publicKey as webcrypto.CryptoKey, { ...at, algorithms: ['EdDSA'] }).sub, 'user-1');
    throwsWith(() => verifyJwt(token, ed.publicKey as webcrypto.CryptoKey, at), 'ERR_JWT_ALG_NOT_ALLOWED');
  });

  it('returns the claims synchronously, as the spec says (await still works)', async () => {
    const token = await signIdToken(key, claimsAt());
    const result = verifyJwt(token, key.publicPem, at);
    assert.ok(!(result instanceof Promise));
    assert.equal(result.sub, 'user-1');
    assert.equal((await verifyJwt(token, key.publicPem, at)).sub, 'user-1');
  });
});

describe('verifyJwt: imported key cache', () => {
  it('keeps keys apart: a token verifies only with its own key, whatever was cached before', async () => {
    const other = await newSigningKey('k2');
    const mine = await signIdToken(key, claimsAt());
    const theirs = await signIdToken(other, claimsAt());
    for (let round = 0; round < 2; round++) {
      assert.equal(verifyJwt(mine, key.publicPem, at).sub, 'user-1');
      throwsWith(() => verifyJwt(theirs, key.publicPem, at), 'ERR_JWT_SIGNATURE_INVALID');
      assert.equal(verifyJwt(theirs, other.publicPem, at).sub, 'user-1');
      throwsWith(() => verifyJwt(mine, Buffer.from(other.publicPem), at), 'ERR_JWT_SIGNATURE_INVALID');
    }
  });

  it('reads a key file again when it is replaced (key rotation)', async () => {
    const other = await newSigningKey('k2');
    const path = join(dir, 'rotating.pem');
    await writeFile(path, key.publicPem);
    const before = await signIdToken(key, claimsAt());
    const afterRotation = await signIdToken(other, claimsAt());
    assert.equal(verifyJwt(before, path, at).sub, 'user-1');
    await writeFile(path, other.publicPem);
    assert.equal(verifyJwt(afterRotation, path, at).sub, 'user-1');
    throwsWith(() => verifyJwt(before, path, at), 'ERR_JWT_SIGNATURE_INVALID');
  });

  it('stays bounded when every call brings a new key', async () => {
    const token = await signIdToken(key, claimsAt());
    for (let i = 0; i < IMPORTED_KEY_CACHE_MAX_ENTRIES + 10; i++) {
      const pem = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
      throwsWith(() => verifyJwt(token, pem, at), 'ERR_JWT_ALG_NOT_ALLOWED');
    }
    assert.equal(importedKeyCount(), IMPORTED_KEY_CACHE_MAX_ENTRIES);
    assert.equal(verifyJwt(token, key.publicPem, at).sub, 'user-1');
  });

  const bad: Array<[string, unknown]> = [
    ['garbage PEM', '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----'],
    ['missing file', '/nonexistent/key.pem'],
    ['empty string', ''],
    ['random bytes', Buffer.from('not a key')],
    ['a private key PEM', generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' })],
    ['a number', 42],
    ['an HMAC secret KeyObject', createSecretKey(Buffer.alloc(32))],
  ];
  for (const [label, input] of bad) {
    it(`refuses ${label} with InvalidPublicKeyError`, async () => {
      const token = await signIdToken(key, claimsAt());
      assert.throws(
        () => verifyJwt(token, input as never, at),
        (err: unknown) => {
          assert.ok(err instanceof InvalidPublicKeyError, String(err));
          assert.equal(err.code, 'ERR_PUBLIC_KEY_INVALID');
          return true;
        },
      );
    });
  }

  it('refuses an EC key with RS256 (alg must fit the key)', async () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const token = await signIdToken(key, claimsAt());
    throwsWith(() => verifyJwt(token, ec.publicKey, at), 'ERR_JWT_ALG_NOT_ALLOWED');
  });
});

describe('verifyJwt: claims', () => {
  it('returns all claims of a valid token', async () => {
    const token = await signIdToken(key, claimsAt({ custom: { a: 1 } }));
    const claims = await verifyJwt(token, key.publicPem, { ...at, audience: CLIENT_ID, issuer: ISSUER });
    assert.deepEqual(claims.custom, { a: 1 });
    assert.equal(claims.email, 'ann@example.com');
  });

  it('refuses a wrong audience', async () => {
    const token = await signIdToken(key, claimsAt({ aud: 'someone-else' }));
    throwsWith(() => verifyJwt(token, key.publicPem, { ...at, audience: CLIENT_ID }), 'ERR_JWT_CLAIM_INVALID', { claim: 'aud' });
  });

  it('refuses a wrong issuer', async () => {
    const token = await signIdToken(key, claimsAt({ iss: 'https://evil.test' }));
    throwsWith(() => verifyJwt(token, key.publicPem, { ...at, issuer: ISSUER }), 'ERR_JWT_CLAIM_INVALID', { claim: 'iss' });
  });

  it('refuses an expired token, and accepts it within leeway', async () => {
    const token = await signIdToken(key, claimsAt({ iat: NOW_S - 600, exp: NOW_S - 10 }));
    throwsWith(() => verifyJwt(token, key.publicPem, at), 'ERR_JWT_EXPIRED', { claim: 'exp' });
    throwsWith(() => verifyJwt(token, key.publicPem, { ...at, leeway: 10 }), 'ERR_JWT_EXPIRED');
    assert.equal((await verifyJwt(token, key.publicPem, { ...at, leeway: 11 })).sub, 'user-1');
  });

  it('requires exp by default (a token that never expires is refused); relaxing it is an explicit option', async () => {
    const { exp: _, ...forever } = claimsAt();
    const token = await signIdToken(key, forever);
    throwsWith(() => verifyJwt(token, key.publicPem, at), 'ERR_JWT_CLAIM_INVALID', { claim: 'exp' });
    throwsWith(() => verifyJwt(token, key.publicPem, { ...at, requiredClaims: ['exp', 'sub'] }), 'ERR_JWT_CLAIM_INVALID', {
      claim: 'exp',
    });
    assert.equal(verifyJwt(token, key.publicPem, { ...at, requiredClaims: [] }).sub, 'user-1');
    assert.throws(() => verifyJwt(token, key.publicPem, { ...at, requiredClaims: 'exp' as never }), TypeError);
  });

  it('refuses exp equal to now (RFC 7519 4.1.4: on or after exp is refused)', async () => {
    const token = await signIdToken(key, claimsAt({ exp: NOW_S }));
    throwsWith(() => verifyJwt(token, key.publicPem, at), 'ERR_JWT_EXPIRED');
  });

  it('refuses nbf in the future, and accepts it within leeway', async () => {
    const token = await signIdToken(key, claimsAt({ nbf: NOW_S + 30 }));
    throwsWith(() => verifyJwt(token, key.publicPem, at), 'ERR_JWT_CLAIM_INVALID', { claim: 'nbf' });
    assert.equal((await verifyJwt(token, key.publicPem, { ...at, leeway: 30 })).sub, 'user-1');
  });

  it('refuses iat in the future, and accepts it within leeway', async () => {
    const token = await signIdToken(key, claimsAt({ iat: NOW_S + 30 }));
    throwsWith(() => verifyJwt(token, key.publicPem, at), 'ERR_JWT_CLAIM_INVALID', { claim: 'iat' });
    assert.equal((await verifyJwt(token, key.publicPem, { ...at, leeway: 30 })).sub, 'user-1');
  });

  it('refuses a tampered payload', async () => {
    const token = await signIdToken(key, claimsAt());
    const [h, , s] = token.split('.');
    const forged = Buffer.from(JSON.stringify(claimsAt({ sub: 'admin' }))).toString('base64url');
    throwsWith(() => verifyJwt(`${h}.${forged}.${s}`, key.publicPem, at), 'ERR_JWT_SIGNATURE_INVALID');
  });

  for (const [label, token] of [
    ['not a JWT', 'abc'],
    ['a bad header', 'e30x.e30.sig'],
    ['a signed JSON array payload', null],
  ] as const) {
    it(`refuses ${label} with ERR_JWT_INVALID`, async () => {
      const jwt = token ?? rawJwt({ alg: 'RS256' }, [] as unknown as Record<string, unknown>, { rsa: key.privateKey });
      throwsWith(() => verifyJwt(jwt, key.publicPem, at), 'ERR_JWT_INVALID');
    });
  }

  it('refuses a validly signed token with a "crit" header (RFC 7515 4.1.11)', () => {
    const jwt = rawJwt({ alg: 'RS256', crit: ['exp2'], exp2: 1 }, claimsAt(), { rsa: key.privateKey });
    throwsWith(() => verifyJwt(jwt, key.publicPem, at), 'ERR_JWT_INVALID');
  });

  it('throws TypeError on a negative leeway', async () => {
    const token = await signIdToken(key, claimsAt());
    assert.throws(() => verifyJwt(token, key.publicPem, { leeway: -1 }), TypeError);
  });
});
