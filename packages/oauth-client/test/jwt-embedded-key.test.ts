/**
 * Attack: the token carries its own key (`jwk`, RFC 7515 4.1.3) or a key location (`jku`,
 * `x5u`) or certificate chain (`x5c`); a verifier that uses it accepts anything the attacker
 * signs with their own key (RFC 8725 3.10). Such headers are refused outright, before any
 * key lookup or fetch.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { exchangeCodeForClaims, JWTVerificationError, verifyJwt } from '../src/index.js';
import { baseOptions, clearExchangeEnv, newSigningKey, type SigningKey, signIdToken, standardClaims, startFakeIdp } from './fake-idp.js';

let key: SigningKey;
before(async () => {
  key = await newSigningKey('k1');
});

const refused = (err: unknown) => {
  assert.ok(err instanceof JWTVerificationError, String(err));
  assert.equal(err.code, 'ERR_JWT_EMBEDDED_KEY');
  return true;
};

describe('keys carried by the token', () => {
  it('refuses a token signed by the attacker with its key in the jwk header', async () => {
    const attacker = await generateKeyPair('RS256', { extractable: true });
    const token = await new SignJWT(standardClaims())
      .setProtectedHeader({ alg: 'RS256', jwk: await exportJWK(attacker.publicKey) })
      .sign(attacker.privateKey);
    assert.throws(() => verifyJwt(token, key.publicPem), refused);
  });

  it('refuses a jwk header even when the real key signed the token', async () => {
    const token = await signIdToken(key, standardClaims(), { jwk: key.jwk });
    assert.throws(() => verifyJwt(token, key.publicPem), refused);
  });

  for (const header of [{ jku: 'https://evil.test/jwks.json' }, { x5u: 'https://evil.test/cert.pem' }, { x5c: ['MIIB'] }]) {
    it(`refuses a ${Object.keys(header)[0]} header`, async () => {
      const token = await signIdToken(key, standardClaims(), header);
      assert.throws(() => verifyJwt(token, key.publicPem), refused);
    });
  }

  it('refuses a jku header in the code exchange without fetching the key set', async () => {
    const restore = clearExchangeEnv();
    const idp = await startFakeIdp(key);
    try {
      idp.respond = async () => ({
        status: 200,
        body: { token_type: 'Bearer', id_token: await signIdToken(key, standardClaims(), { jku: idp.jwksUrl }) },
      });
      const { publicKey: _unused, ...options } = baseOptions(idp);
      await assert.rejects(exchangeCodeForClaims({ ...options, jwksUrl: idp.jwksUrl }), refused);
      assert.equal(idp.jwksHits, 0);
    } finally {
      await idp.close();
      restore();
    }
  });
});
