/** The service's JWS signer, checked by an independent verifier (jose). */
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { compactVerify, decodeProtectedHeader, jwtVerify } from 'jose';
import { signHs256, signRs256 } from '../src/crypto/jws.js';

describe('JWS signing', () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });

  it('makes RS256 compact JWS that jose verifies, with the header and claims intact', async () => {
    const payload = { sub: 'usr_1', email: 'é@example.com', amr: ['swk'], iat: 1, exp: 4_000_000_000 };
    const token = await signRs256({ kid: 'k1', typ: 'JWT', alg: 'none' }, payload, privateKey);
    assert.deepEqual(decodeProtectedHeader(token), { kid: 'k1', typ: 'JWT', alg: 'RS256' }, 'alg cannot be overridden by the caller');
    const { payload: verified } = await jwtVerify(token, publicKey, { algorithms: ['RS256'] });
    assert.deepEqual(verified, payload);
  });

  it('makes HS256 compact JWS that jose verifies, and a changed payload fails', async () => {
    const key = randomBytes(32);
    const token = signHs256({ typ: 'at+jwt' }, { sub: 'usr_1' }, key);
    await compactVerify(token, key, { algorithms: ['HS256'] });
    const [h, , s] = token.split('.');
    const forged = `${h}.${Buffer.from('{"sub":"usr_2"}').toString('base64url')}.${s}`;
    await assert.rejects(compactVerify(forged, key, { algorithms: ['HS256'] }));
  });
});
