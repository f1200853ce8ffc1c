/** The service's JWS signer, checked by an independent verifier (jose). */
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { compactVerify, decodeProtectedHeader, jwtVerify } from 'jose';
import { signHs256, signJws } from '../../src/crypto/jws.js';

describe('JWS signing', () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });

  it('makes RS256 compact JWS that jose verifies, with the header and claims intact', async () => {
    const payload = { sub: 'usr_1', email: 'é@example.com', amr: ['swk'], iat: 1, exp: 4_000_000_000 };
    const token = await signJws('RS256', { kid: 'k1', typ: 'JWT', alg: 'none' }, payload, privateKey);
    assert.deepEqual(decodeProtectedHeader(token), { kid: 'k1', typ: 'JWT', alg: 'RS256' }, 'alg cannot be overridden by the caller');
    const { payload: verified } = await jwtVerify(token, publicKey, { algorithms: ['RS256'] });
    assert.deepEqual(verified, payload);
  });

  for (const [alg, pair] of [
    ['ES256', generateKeyPairSync('ec', { namedCurve: 'P-256' })],
    ['EdDSA', generateKeyPairSync('ed25519')],
  ] as const) {
    it(`makes ${alg} compact JWS that jose verifies, and a changed payload fails`, async () => {
      const token = await signJws(alg, { kid: 'k2', typ: 'JWT' }, { sub: 'usr_1' }, pair.privateKey);
      assert.deepEqual(decodeProtectedHeader(token), { kid: 'k2', typ: 'JWT', alg });
      assert.equal((await jwtVerify(token, pair.publicKey, { algorithms: [alg] })).payload.sub, 'usr_1');
      const [h, , s] = token.split('.');
      const forged = `${h}.${Buffer.from('{"sub":"usr_2"}').toString('base64url')}.${s}`;
      await assert.rejects(compactVerify(forged, pair.publicKey, { algorithms: [alg] }));
    });
  }

  it('makes HS256 compact JWS that jose verifies, and a changed payload fails', async () => {
    const key = randomBytes(32);
    const token = signHs256({ typ: 'at+jwt' }, { sub: 'usr_1' }, key);
    await compactVerify(token, key, { algorithms: ['HS256'] });
    const [h, , s] = token.split('.');
    const forged = `${h}.${Buffer.from('{"sub":"usr_2"}').toString('base64url')}.${s}`;
    await assert.rejects(compactVerify(forged, key, { algorithms: ['HS256'] }));
  });
});
