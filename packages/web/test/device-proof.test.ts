import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compactVerify, decodeProtectedHeader, importJWK } from 'jose';
import { createDeviceProof, exportDevicePublicJwk, generateDeviceKeyPair } from '../src/device-proof.ts';

test('a device proof is a compact ES256 JWS that jose verifies with the exported public JWK', async () => {
  const keyPair = await generateDeviceKeyPair(crypto);
  const jwk = await exportDevicePublicJwk(crypto, keyPair.publicKey);
  assert.deepEqual(Object.keys(jwk).sort(), ['crv', 'kty', 'x', 'y']);
  assert.equal(jwk.kty, 'EC');
  assert.equal(jwk.crv, 'P-256');

  const jws = await createDeviceProof(crypto, keyPair.privateKey, {
    deviceId: 'dev_123',
    cryptoVersion: 'v1',
    sub: 'ann@example.com',
    nonce: 'challenge-abc',
    iat: 1_700_000_000,
  });
  assert.match(jws, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{86}$/, 'base64url without padding; 64-byte r||s');

  const { payload, protectedHeader } = await compactVerify(jws, await importJWK(jwk, 'ES256'), { algorithms: ['ES256'] });
  assert.deepEqual(protectedHeader, { alg: 'ES256', typ: 'device-proof+jwt', kid: 'dev_123', cv: 'v1' });
  assert.deepEqual(JSON.parse(new TextDecoder().decode(payload)), {
    sub: 'ann@example.com',
    nonce: 'challenge-abc',
    iat: 1_700_000_000,
  });
});

test('iat defaults to the current time in seconds', async () => {
  const keyPair = await generateDeviceKeyPair(crypto);
  const before = Math.floor(Date.now() / 1000);
  const jws = await createDeviceProof(crypto, keyPair.privateKey, { deviceId: 'd', cryptoVersion: 'v1', sub: 's@x.io', nonce: 'n' });
  const payload = JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString());
  assert.ok(payload.iat >= before && payload.iat <= before + 2);
  assert.equal(decodeProtectedHeader(jws).cv, 'v1');
});

test('a proof signed by another key does not verify (cv and nonce are covered by the signature)', async () => {
  const device = await generateDeviceKeyPair(crypto);
  const other = await generateDeviceKeyPair(crypto);
  const jws = await createDeviceProof(crypto, other.privateKey, { deviceId: 'd', cryptoVersion: 'v1', sub: 's@x.io', nonce: 'n' });
  const key = await importJWK(await exportDevicePublicJwk(crypto, device.publicKey), 'ES256');
  await assert.rejects(compactVerify(jws, key), { code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' });
  const [, payload, signature] = (
    await createDeviceProof(crypto, device.privateKey, { deviceId: 'd', cryptoVersion: 'v1', sub: 's@x.io', nonce: 'n' })
  ).split('.');
  const forgedHeader = Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'device-proof+jwt', kid: 'd', cv: 'v2' })).toString('base64url');
  await assert.rejects(compactVerify(`${forgedHeader}.${payload}.${signature}`, key), { code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' });
});
