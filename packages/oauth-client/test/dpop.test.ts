/**
 * verifyDpopRequest (RFC 9449 7): a resource server takes an access token bound to a key
 * (`cnf.jkt`) only with a fresh proof of that key for this very request. Attacks: the token
 * stolen and sent as a bearer token or with the thief's own proof; a proof replayed, made for
 * another URL or method, too old, for another token, forged with another key than it names, or
 * without the server's nonce. Proofs and tokens are made with jose, as a client and an
 * authorization server would.
 */
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type CryptoKey as JoseKey, type JWK, SignJWT } from 'jose';
import { DPOP_MAX_AGE_SECONDS } from '../src/defaults.js';
import { DPoPVerificationError, type DPoPVerificationErrorCode, verifyDpopRequest, verifyJwt } from '../src/index.js';
import { ISSUER, newSigningKey, type SigningKey } from './fake-idp.js';

const API = 'https://api.example/orders';

interface Holder {
  privateKey: JoseKey;
  jwk: JWK;
  jkt: string;
  /** The `alg` its proofs name (an Ed25519 key: `EdDSA`, RFC 8037, or `Ed25519`, RFC 9864). */
  alg: string;
}

async function holder(alg: 'ES256' | 'EdDSA' | 'Ed25519' = 'ES256'): Promise<Holder> {
  const { privateKey, publicKey } = await generateKeyPair(alg === 'EdDSA' ? 'Ed25519' : alg);
  const jwk = await exportJWK(publicKey);
  return { privateKey, jwk, jkt: await calculateJwkThumbprint(jwk), alg };
}

let as: SigningKey;
let owner: Holder;
let token: string;
before(async () => {
  as = await newSigningKey('as-1');
  owner = await holder();
  const now = Math.floor(Date.now() / 1000);
  // An RFC 9068 JWT access token bound to the owner's key.
  token = await new SignJWT({ iss: ISSUER, sub: 'user-1', aud: API, iat: now, exp: now + 300, cnf: { jkt: owner.jkt } })
    .setProtectedHeader({ alg: 'RS256', kid: as.kid, typ: 'at+jwt' })
    .sign(as.privateKey);
});

function proof(
  key: Holder,
  claims: { htm?: string; htu?: string; iat?: number; accessToken?: string; nonce?: string; jti?: string } = {},
  signer?: JoseKey,
): Promise<string> {
  return new SignJWT({
    jti: claims.jti ?? randomUUID(),
    htm: claims.htm ?? 'GET',
    htu: claims.htu ?? `${API}?page=2`,
    iat: claims.iat ?? Math.floor(Date.now() / 1000),
    ath: createHash('sha256')
      .update(claims.accessToken ?? token)
      .digest('base64url'),
    ...(claims.nonce ? { nonce: claims.nonce } : {}),
  })
    .setProtectedHeader({ typ: 'dpop+jwt', alg: key.alg, jwk: key.jwk })
    .sign(signer ?? key.privateKey);
}

const verifyAccessToken = (t: string) => verifyJwt(t, as.publicPem, { issuer: ISSUER, audience: API });
const request = (dpop: string | undefined, extra: Record<string, unknown> = {}) =>
  verifyDpopRequest({ method: 'GET', url: `${API}?page=2`, authorization: `DPoP ${token}`, dpop, verifyAccessToken, ...extra });

function refusedWith(code: DPoPVerificationErrorCode, challenge: RegExp) {
  return (error: unknown) => {
    assert.ok(error instanceof DPoPVerificationError, String(error));
    assert.equal(error.code, code);
    assert.match(error.challenge, challenge);
    return true;
  };
}

describe('verifyDpopRequest', () => {
  it('takes the token with a proof of its key, and says whose', async () => {
    const verified = await request(await proof(owner));
    assert.equal(verified.claims.sub, 'user-1');
    assert.equal(verified.jkt, owner.jkt);
  });

  it('takes an Ed25519 key`s proof under both names, EdDSA (RFC 8037) and Ed25519 (RFC 9864, openid-client 6)', async () => {
    for (const alg of ['EdDSA', 'Ed25519'] as const) {
      const key = await holder(alg);
      const now = Math.floor(Date.now() / 1000);
      const bound = await new SignJWT({ iss: ISSUER, sub: 'user-2', aud: API, iat: now, exp: now + 300, cnf: { jkt: key.jkt } })
        .setProtectedHeader({ alg: 'RS256', kid: as.kid, typ: 'at+jwt' })
        .sign(as.privateKey);
      const verified = await request(await proof(key, { accessToken: bound }), { authorization: `DPoP ${bound}` });
      assert.equal(verified.jkt, key.jkt, alg);
    }
  });

  it('refuses the stolen token as a bearer token, and with the thief`s own proof', async () => {
    await assert.rejects(
      verifyDpopRequest({ method: 'GET', url: API, authorization: `Bearer ${token}`, dpop: undefined, verifyAccessToken }),
      refusedWith('ERR_DPOP_TOKEN_NOT_BOUND', /^DPoP error="invalid_token"/),
    );
    await assert.rejects(request(await proof(await holder())), refusedWith('ERR_DPOP_TOKEN_NOT_BOUND', /error="invalid_token"/));
  });

  it('refuses a replayed proof', async () => {
    const once = await proof(owner);
    await request(once);
    await assert.rejects(request(once), refusedWith('ERR_DPOP_PROOF_REPLAYED', /error="invalid_dpop_proof"/));
  });

  it('uses the caller`s replay store, and a refused proof is not recorded', async () => {
    const recorded: string[] = [];
    const isFirstUse = (jkt: string, jti: string) => {
      if (recorded.includes(`${jkt} ${jti}`)) return false;
      recorded.push(`${jkt} ${jti}`);
      return true;
    };
    await assert.rejects(
      request(await proof(owner, { htm: 'POST' }), { isFirstUse }),
      refusedWith('ERR_DPOP_PROOF_INVALID', /invalid_dpop_proof/),
    );
    assert.deepEqual(recorded, []);
    const jti = randomUUID();
    await request(await proof(owner, { jti }), { isFirstUse });
    assert.deepEqual(recorded, [`${owner.jkt} ${jti}`]);
  });

  for (const [what, claims] of [
    ['another URL', { htu: 'https://api.example/admin' }],
    ['another origin', { htu: 'https://evil.example/orders' }],
    ['another method', { htm: 'DELETE' }],
    ['too old', { iat: Math.floor(Date.now() / 1000) - DPOP_MAX_AGE_SECONDS - 2 }],
    ['from the future', { iat: Math.floor(Date.now() / 1000) + 60 }],
    ['another token', { accessToken: `${'x'}.y.z` }],
  ] as const) {
    it(`refuses a proof for ${what}`, async () => {
      await assert.rejects(request(await proof(owner, claims)), refusedWith('ERR_DPOP_PROOF_INVALID', /invalid_dpop_proof/));
    });
  }

  it('refuses a proof signed with another key than the one it names, and two proofs at once', async () => {
    const forger = await holder();
    await assert.rejects(request(await proof(owner, {}, forger.privateKey)), refusedWith('ERR_DPOP_PROOF_INVALID', /invalid_dpop_proof/));
    await assert.rejects(
      request(`${await proof(owner)}, ${await proof(owner)}`),
      refusedWith('ERR_DPOP_PROOF_INVALID', /invalid_dpop_proof/),
    );
  });

  it('asks for the server nonce when one is required', async () => {
    await assert.rejects(request(await proof(owner), { nonce: 'n-1' }), refusedWith('ERR_DPOP_NONCE_REQUIRED', /error="use_dpop_nonce"/));
    await assert.rejects(
      request(await proof(owner, { nonce: 'n-0' }), { nonce: (n: string) => n === 'n-1' }),
      refusedWith('ERR_DPOP_NONCE_REQUIRED', /use_dpop_nonce/),
    );
    assert.equal((await request(await proof(owner, { nonce: 'n-1' }), { nonce: ['n-0', 'n-1'] })).jkt, owner.jkt);
  });

  it('passes the access token`s own refusal through', async () => {
    const other = await newSigningKey('as-2');
    await assert.rejects(
      request(await proof(owner), { verifyAccessToken: (t: string) => verifyJwt(t, other.publicPem) }),
      (error: Error) => {
        assert.equal((error as { code?: string }).code, 'ERR_JWT_SIGNATURE_INVALID');
        return true;
      },
    );
  });
});
