import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createPkcePair, pkceChallengeFromVerifier } from '../src/pkce.ts';

// RFC 7636 Appendix B. (The brief quoted E9cVKx4K8Bv4ms42HAbgUfrLk4s96nXMJYk3dKHgm9M, which is not
// the RFC's value; `openssl dgst -sha256 -binary | base64url` agrees with the RFC.)
test('S256 challenge matches RFC 7636 Appendix B', async () => {
  assert.equal(
    await pkceChallengeFromVerifier('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk'),
    'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
  );
});

test('createPkcePair makes a 43-character verifier and its S256 challenge', async () => {
  const pair = await createPkcePair();
  assert.match(pair.codeVerifier, /^[A-Za-z0-9_-]{43}$/);
  assert.equal(pair.codeChallengeMethod, 'S256');
  assert.equal(pair.codeChallenge, await pkceChallengeFromVerifier(pair.codeVerifier));
  assert.notEqual((await createPkcePair()).codeVerifier, pair.codeVerifier);
});

test('a verifier outside RFC 7636 4.1 is refused', async () => {
  await assert.rejects(pkceChallengeFromVerifier('too-short'), TypeError);
  await assert.rejects(pkceChallengeFromVerifier(`${'a'.repeat(42)} `), TypeError);
});
