/**
 * Attack: the verifier lets the token pick its algorithm (RFC 8725 2.1, 3.1). With `alg: none`
 * the signature is skipped; with `alg: HS256` the attacker signs with the *public* RSA key as
 * the HMAC secret, which a naive verifier then "verifies" with the same bytes. Both must be
 * refused, even when the caller lists them in `algorithms`.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { JWTVerificationError, verifyJwt } from '../src/index.js';
import { newSigningKey, rawJwt, type SigningKey, standardClaims } from './fake-idp.js';

let key: SigningKey;
before(async () => {
  key = await newSigningKey('k1');
});

async function assertAlgRefused(token: string, algorithms?: string[]) {
  assert.throws(
    () => verifyJwt(token, key.publicPem, algorithms ? { algorithms } : {}),
    (err: unknown) => {
      assert.ok(err instanceof JWTVerificationError, String(err));
      assert.equal(err.code, 'ERR_JWT_ALG_NOT_ALLOWED');
      return true;
    },
  );
}

describe('algorithm confusion', () => {
  it('refuses alg none (empty signature)', async () => {
    await assertAlgRefused(rawJwt({ alg: 'none', typ: 'JWT' }, standardClaims()));
  });

  it('refuses alg none even when listed', async () => {
    await assertAlgRefused(rawJwt({ alg: 'none' }, standardClaims()), ['none', 'RS256']);
  });

  it('refuses alg "None" and "NONE"', async () => {
    await assertAlgRefused(rawJwt({ alg: 'None' }, standardClaims()), ['None', 'RS256']);
    await assertAlgRefused(rawJwt({ alg: 'NONE' }, standardClaims()), ['NONE', 'RS256']);
  });

  it('refuses a header without alg', async () => {
    await assertAlgRefused(rawJwt({ typ: 'JWT' }, standardClaims(), { rsa: key.privateKey }));
  });

  it('refuses HS256 signed with the RSA public key PEM as HMAC secret', async () => {
    const token = rawJwt({ alg: 'HS256', typ: 'JWT' }, standardClaims(), { hmacSecret: key.publicPem });
    await assertAlgRefused(token);
  });

  it('refuses HS256 key confusion even when the caller lists HS256', async () => {
    const token = rawJwt({ alg: 'HS256' }, standardClaims(), { hmacSecret: key.publicPem });
    await assertAlgRefused(token, ['HS256', 'RS256']);
    const derToken = rawJwt({ alg: 'HS256' }, standardClaims(), {
      hmacSecret: key.publicKey.export({ type: 'spki', format: 'der' }),
    });
    await assertAlgRefused(derToken, ['HS256']);
  });

  it('refuses an RS256 token when the allow-list is only ES256', async () => {
    await assertAlgRefused(rawJwt({ alg: 'RS256' }, standardClaims(), { rsa: key.privateKey }), ['ES256']);
  });

  it('still accepts the genuine RS256 token (control)', async () => {
    const token = rawJwt({ alg: 'RS256' }, standardClaims(), { rsa: key.privateKey });
    assert.equal((await verifyJwt(token, key.publicPem)).sub, 'user-1');
  });
});
