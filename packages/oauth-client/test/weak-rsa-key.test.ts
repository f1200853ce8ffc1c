/**
 * Attack: RSA keys under 2048 bits can be factored with enough compute (NIST SP 800-131A,
 * RFC 8725 3.5). A short key given by the caller is a configuration error
 * (InvalidPublicKeyError); a short key served by the key set is refused per token
 * (JWTVerificationError ERR_JWKS_KEY_TOO_SHORT).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RSA_MIN_MODULUS_BITS } from '../src/defaults.js';
import { exchangeCodeForClaims, InvalidPublicKeyError, JWTVerificationError, verifyJwt } from '../src/index.js';
import { baseOptions, clearExchangeEnv, rawJwt, standardClaims, startFakeIdp, weakRsaKey } from './fake-idp.js';

describe(`RSA keys under ${RSA_MIN_MODULUS_BITS} bits`, () => {
  const weak = weakRsaKey('weak-1');
  const token = rawJwt({ alg: 'RS256', kid: weak.kid }, standardClaims(), { rsa: weak.privateKey });

  it('refuses a 1024-bit PEM given to verifyJwt', async () => {
    assert.throws(
      () => verifyJwt(token, weak.publicPem),
      (err: unknown) => {
        assert.ok(err instanceof InvalidPublicKeyError, String(err));
        assert.equal(err.code, 'ERR_PUBLIC_KEY_INVALID');
        assert.match(err.message, /1024 bits/);
        return true;
      },
    );
  });

  it('refuses a 1024-bit key served by the key set', async () => {
    const restore = clearExchangeEnv();
    const idp = await startFakeIdp();
    try {
      idp.jwks = { keys: [weak.jwk] };
      idp.respond = async () => ({ status: 200, body: { token_type: 'Bearer', id_token: token } });
      const { publicKey: _unused, ...options } = baseOptions(idp);
      await assert.rejects(exchangeCodeForClaims({ ...options, jwksUrl: idp.jwksUrl }), (err: unknown) => {
        assert.ok(err instanceof JWTVerificationError, String(err));
        assert.equal(err.code, 'ERR_JWKS_KEY_TOO_SHORT');
        return true;
      });
    } finally {
      await idp.close();
      restore();
    }
  });
});
