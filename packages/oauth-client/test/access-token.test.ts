/**
 * verifyAccessToken (RFC 9068, RFC 9449 7): an API takes only the service's access tokens made
 * for it. Attacks, one test each: a token signed with `alg: none` or HS256 keyed with the
 * public key; an ID token presented as an access token; a token for another API; an expired
 * token; a token signed with a key the verifier does not know yet (rotation) or never will
 * (made-up `kid`s); a DPoP proof replayed, made for another URL or method, for another token
 * (`ath`), or of another key than the token's `cnf.jkt`; a bound token sent as a bearer token;
 * a token without the scope the route requires. Tokens are signed with jose; the key set is
 * served over HTTP on 127.0.0.1 (fake-idp.ts).
 */
import assert from 'node:assert/strict';
import { createHash, type KeyObject, randomUUID } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type CryptoKey as JoseKey, type JWK, SignJWT } from 'jose';
import { verifyAccessTokenWithKeySet } from '../src/access-token.js';
import { ACCESS_TOKEN_LEEWAY_SECONDS, JWKS_COOLDOWN_MS } from '../src/defaults.js';
import {
  AccessTokenError,
  type AccessTokenErrorCode,
  DPoPVerificationError,
  type DPoPVerificationErrorCode,
  type VerifyAccessTokenOptions,
  verifyAccessToken,
} from '../src/index.js';
import { JwksCache } from '../src/jwks.js';
import {
  CLIENT_ID,
  type FakeIdp,
  ISSUER,
  newSigningKey,
  rawJwt,
  type SigningKey,
  signIdToken,
  standardClaims,
  startFakeIdp,
} from './fake-idp.js';

const API = 'https://api.example/notes';
const OTHER_API = 'https://billing.example';

let idp: FakeIdp;
let rsa: SigningKey;
let ec: { kid: string; privateKey: JoseKey };
let ed: { kid: string; privateKey: JoseKey };

before(async () => {
  rsa = await newSigningKey('rsa-1');
  idp = await startFakeIdp(rsa);
  for (const [alg, kid] of [
    ['ES256', 'ec-1'],
    ['EdDSA', 'ed-1'],
  ] as const) {
    const pair = await generateKeyPair(alg === 'EdDSA' ? 'Ed25519' : alg, { extractable: true });
    idp.jwks.keys.push({ ...(await exportJWK(pair.publicKey)), kid, alg, use: 'sig' });
    if (alg === 'ES256') ec = { kid, privateKey: pair.privateKey };
    else ed = { kid, privateKey: pair.privateKey };
  }
});
after(() => idp.close());

const now = () => Math.floor(Date.now() / 1000);

/** An access token as the service issues it for an API (docs/protocol.md). */
function accessClaims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    iss: ISSUER,
    sub: 'usr_1',
    aud: API,
    client_id: CLIENT_ID,
    scope: 'read:notes write:notes',
    iat: now(),
    exp: now() + 300,
    jti: randomUUID(),
    auth_time: now() - 60,
    acr: 'urn:service:acr:device',
    amr: ['swk'],
    ...overrides,
  };
}

function sign(
  claims: Record<string, unknown> = accessClaims(),
  header: Record<string, unknown> = {},
  key: { kid: string; privateKey: KeyObject | JoseKey } = rsa,
  alg = 'RS256',
): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg, kid: key.kid, typ: 'at+jwt', ...header }).sign(key.privateKey);
}

const options = (extra: Partial<VerifyAccessTokenOptions> = {}): VerifyAccessTokenOptions => ({
  issuer: ISSUER,
  jwksUrl: idp.jwksUrl,
  audience: API,
  ...extra,
});

function refused(code: AccessTokenErrorCode, challenge: RegExp, causeCode?: string) {
  return (error: unknown) => {
    assert.ok(error instanceof AccessTokenError, String(error));
    assert.equal(error.code, code);
    assert.match(error.challenge, challenge);
    if (causeCode !== undefined) assert.equal((error.cause as { code?: string } | undefined)?.code, causeCode);
    return true;
  };
}

function refusedDpop(code: DPoPVerificationErrorCode, challenge: RegExp) {
  return (error: unknown) => {
    assert.ok(error instanceof DPoPVerificationError, String(error));
    assert.equal(error.code, code);
    assert.equal(error.status, 401);
    assert.match(error.challenge, challenge);
    return true;
  };
}

describe('verifyAccessToken', () => {
  it('takes the service`s access token for this API, signed RS256, ES256 or EdDSA, and returns its claims and scopes', async () => {
    for (const [key, alg] of [
      [rsa, 'RS256'],
      [ec, 'ES256'],
      [ed, 'EdDSA'],
    ] as const) {
      const verified = await verifyAccessToken(await sign(accessClaims(), {}, key, alg), options());
      assert.equal(verified.claims.sub, 'usr_1', alg);
      assert.equal(verified.claims.client_id, CLIENT_ID);
      assert.deepEqual(verified.claims.amr, ['swk']);
      assert.deepEqual(verified.scopes, ['read:notes', 'write:notes']);
      assert.equal(verified.jkt, undefined);
    }
    const typed = await verifyAccessToken(await sign(accessClaims(), { typ: 'application/AT+JWT' }), options());
    assert.equal(typed.claims.aud, API, 'typ with the application/ prefix, any case (RFC 7515 4.1.9)');
    const listed = await verifyAccessToken(await sign(accessClaims({ aud: [OTHER_API, API] })), options());
    assert.deepEqual(listed.claims.aud, [OTHER_API, API]);
  });

  it('refuses alg none and HS256 keyed with the public key (algorithm confusion), even when listed', async () => {
    const claims = accessClaims();
    const none = rawJwt({ alg: 'none', typ: 'at+jwt', kid: rsa.kid }, claims);
    const hmacPem = rawJwt({ alg: 'HS256', typ: 'at+jwt', kid: rsa.kid }, claims, { hmacSecret: rsa.publicPem });
    const hmacJwk = rawJwt({ alg: 'HS256', typ: 'at+jwt', kid: rsa.kid }, claims, { hmacSecret: JSON.stringify(rsa.jwk) });
    for (const token of [none, hmacPem, hmacJwk]) {
      await assert.rejects(
        verifyAccessToken(token, options()),
        refused('ERR_ACCESS_TOKEN_INVALID', /^Bearer error="invalid_token"/, 'ERR_JWT_ALG_NOT_ALLOWED'),
      );
      const listed = options({ algorithms: ['HS256', 'none'] as unknown as ['RS256'] });
      await assert.rejects(
        verifyAccessToken(token, listed),
        refused('ERR_ACCESS_TOKEN_INVALID', /invalid_token/, 'ERR_JWT_ALG_NOT_ALLOWED'),
      );
    }
  });

  it('refuses an ID token presented as an access token (wrong typ), even one whose aud is the API', async () => {
    const idToken = await signIdToken(rsa, standardClaims());
    await assert.rejects(
      verifyAccessToken(idToken, options()),
      refused('ERR_ACCESS_TOKEN_INVALID', /error_description="The token is not an access token."/),
    );
    const forApi = await signIdToken(rsa, { ...accessClaims() });
    await assert.rejects(verifyAccessToken(forApi, options()), refused('ERR_ACCESS_TOKEN_INVALID', /not an access token/));
    const untyped = await new SignJWT(accessClaims()).setProtectedHeader({ alg: 'RS256', kid: rsa.kid }).sign(rsa.privateKey);
    await assert.rejects(verifyAccessToken(untyped, options()), refused('ERR_ACCESS_TOKEN_INVALID', /not an access token/));
  });

  it('refuses a token for another API (wrong aud), and one from another issuer', async () => {
    await assert.rejects(
      verifyAccessToken(await sign(accessClaims({ aud: OTHER_API })), options()),
      refused('ERR_ACCESS_TOKEN_INVALID', /another audience/, 'ERR_JWT_CLAIM_INVALID'),
    );
    await assert.rejects(
      verifyAccessToken(await sign(accessClaims({ iss: 'https://evil.example' })), options()),
      refused('ERR_ACCESS_TOKEN_INVALID', /another issuer/),
    );
  });

  it(`refuses an expired token, with ${ACCESS_TOKEN_LEEWAY_SECONDS} s of clock skew`, async () => {
    const skewed = await sign(accessClaims({ exp: now() - ACCESS_TOKEN_LEEWAY_SECONDS + 2 }));
    assert.equal((await verifyAccessToken(skewed, options())).claims.sub, 'usr_1');
    await assert.rejects(
      verifyAccessToken(await sign(accessClaims({ exp: now() - ACCESS_TOKEN_LEEWAY_SECONDS - 1 })), options()),
      refused('ERR_ACCESS_TOKEN_INVALID', /error_description="The access token has expired."/, 'ERR_JWT_EXPIRED'),
    );
    await assert.rejects(
      verifyAccessToken(await sign(accessClaims({ iat: now() + 60 })), options()),
      refused('ERR_ACCESS_TOKEN_INVALID', /invalid_token/, 'ERR_JWT_CLAIM_INVALID'),
    );
  });

  it('refuses a token without the claims RFC 9068 requires (client_id, jti, sub)', async () => {
    for (const claim of ['client_id', 'jti', 'sub', 'exp']) {
      const claims = accessClaims();
      delete claims[claim];
      await assert.rejects(verifyAccessToken(await sign(claims), options()), refused('ERR_ACCESS_TOKEN_INVALID', /invalid_token/), claim);
    }
  });

  it('refuses a token without a required scope with 403 insufficient_scope, naming the scopes', async () => {
    const token = await sign(accessClaims({ scope: 'read:notes' }));
    assert.deepEqual((await verifyAccessToken(token, options({ requiredScopes: ['read:notes'] }))).scopes, ['read:notes']);
    await assert.rejects(verifyAccessToken(token, options({ requiredScopes: ['read:notes', 'write:notes'] })), (error: unknown) => {
      assert.ok(error instanceof AccessTokenError);
      assert.equal(error.code, 'ERR_ACCESS_TOKEN_INSUFFICIENT_SCOPE');
      assert.equal(error.status, 403);
      assert.equal(error.error, 'insufficient_scope');
      assert.equal(error.scope, 'read:notes write:notes');
      assert.equal(
        error.challenge,
        'Bearer error="insufficient_scope", error_description="The access token lacks a required scope.", scope="read:notes write:notes"',
      );
      return true;
    });
    const unscoped = accessClaims();
    delete unscoped.scope;
    await assert.rejects(
      verifyAccessToken(await sign(unscoped), options({ requiredScopes: ['read:notes'] })),
      refused('ERR_ACCESS_TOKEN_INSUFFICIENT_SCOPE', /insufficient_scope/),
    );
  });

  it('needs an issuer and an audience', async () => {
    const saved = process.env.OAUTH_ISSUER;
    delete process.env.OAUTH_ISSUER;
    try {
      await assert.rejects(verifyAccessToken('a.b.c', { audience: API, jwksUrl: idp.jwksUrl }), TypeError);
      await assert.rejects(verifyAccessToken('a.b.c', { issuer: ISSUER, jwksUrl: idp.jwksUrl, audience: '' }), TypeError);
      await assert.rejects(verifyAccessToken('a.b.c', { issuer: 'http://idp.example', audience: API }), /https/);
    } finally {
      if (saved !== undefined) process.env.OAUTH_ISSUER = saved;
    }
  });
});

describe('verifyAccessToken: key rotation (unknown kid), controlled clock', () => {
  let clock: number;
  let cache: JwksCache;
  beforeEach(() => {
    clock = 1_000_000;
    cache = new JwksCache({ now: () => clock });
  });
  const verify = (token: string) => verifyAccessTokenWithKeySet(token, options(), cache.resolver(idp.jwksUrl));

  it('follows a rotation: an unknown kid re-fetches the key set once the cooldown has passed, and made-up kids cannot flood it', async () => {
    const saved = idp.jwks.keys;
    try {
      idp.jwks.keys = [rsa.jwk];
      const hits = idp.jwksHits;
      await verify(await sign());
      assert.equal(idp.jwksHits, hits + 1);
      const next = await newSigningKey('rsa-2');
      idp.jwks.keys = [rsa.jwk, next.jwk];
      const rotated = await sign(accessClaims(), {}, next);
      // Within the cooldown, the new kid is unknown and no fetch happens.
      clock += 1_000;
      await assert.rejects(verify(rotated), refused('ERR_ACCESS_TOKEN_INVALID', /invalid_token/, 'ERR_JWKS_NO_MATCHING_KEY'));
      assert.equal(idp.jwksHits, hits + 1);
      clock += JWKS_COOLDOWN_MS;
      assert.equal((await verify(rotated)).claims.sub, 'usr_1');
      assert.equal(idp.jwksHits, hits + 2, 'one fetch for the new kid');
      clock += JWKS_COOLDOWN_MS;
      const forged = await Promise.allSettled(
        Array.from({ length: 30 }, async () => verify(await sign(accessClaims(), {}, { kid: randomUUID(), privateKey: next.privateKey }))),
      );
      assert.ok(forged.every((r) => r.status === 'rejected' && r.reason instanceof AccessTokenError));
      assert.equal(idp.jwksHits, hits + 3, '30 made-up kids: one fetch');
    } finally {
      idp.jwks.keys = saved;
    }
  });
});

interface Holder {
  privateKey: JoseKey;
  jwk: JWK;
  jkt: string;
}

async function holder(): Promise<Holder> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = await exportJWK(publicKey);
  return { privateKey, jwk, jkt: await calculateJwkThumbprint(jwk) };
}

function proof(key: Holder, token: string, claims: { htm?: string; htu?: string; jti?: string; nonce?: string } = {}): Promise<string> {
  return new SignJWT({
    jti: claims.jti ?? randomUUID(),
    htm: claims.htm ?? 'GET',
    htu: claims.htu ?? API,
    iat: now(),
    ath: createHash('sha256').update(token).digest('base64url'),
    ...(claims.nonce === undefined ? {} : { nonce: claims.nonce }),
  })
    .setProtectedHeader({ typ: 'dpop+jwt', alg: 'ES256', jwk: key.jwk })
    .sign(key.privateKey);
}

describe('verifyAccessToken with a DPoP proof (RFC 9449 7)', () => {
  let owner: Holder;
  let bound: string;
  before(async () => {
    owner = await holder();
    bound = await sign(accessClaims({ cnf: { jkt: owner.jkt } }));
  });
  const dpop = (proofValue: string | undefined, extra: Record<string, unknown> = {}) =>
    options({ dpop: { method: 'GET', url: `${API}?page=2`, proof: proofValue, ...extra } });

  it('takes a bound token with a proof of its key, and says which key', async () => {
    const verified = await verifyAccessToken(bound, dpop(await proof(owner, bound)));
    assert.equal(verified.jkt, owner.jkt);
    assert.equal(verified.claims.cnf?.jkt, owner.jkt);
  });

  it('refuses a bound token sent as a bearer token (no proof)', async () => {
    await assert.rejects(verifyAccessToken(bound, options()), refusedDpop('ERR_DPOP_TOKEN_NOT_BOUND', /^DPoP error="invalid_token"/));
  });

  it('refuses an unbound token used as DPoP, and a DPoP token without its proof', async () => {
    const unbound = await sign();
    await assert.rejects(
      verifyAccessToken(unbound, dpop(await proof(owner, unbound))),
      refusedDpop('ERR_DPOP_TOKEN_NOT_BOUND', /error="invalid_token"/),
    );
    await assert.rejects(verifyAccessToken(bound, dpop(undefined)), refusedDpop('ERR_DPOP_PROOF_INVALID', /invalid_dpop_proof/));
  });

  it('refuses a replayed DPoP proof, in the default store and in the caller`s', async () => {
    const once = await proof(owner, bound);
    await verifyAccessToken(bound, dpop(once));
    await assert.rejects(verifyAccessToken(bound, dpop(once)), refusedDpop('ERR_DPOP_PROOF_REPLAYED', /error="invalid_dpop_proof"/));
    const seen = new Set<string>();
    const isFirstUse = (jkt: string, jti: string) => !seen.has(`${jkt} ${jti}`) && Boolean(seen.add(`${jkt} ${jti}`));
    const other = await proof(owner, bound);
    await verifyAccessToken(bound, dpop(other, { isFirstUse }));
    assert.equal(seen.size, 1);
    await assert.rejects(
      verifyAccessToken(bound, dpop(other, { isFirstUse })),
      refusedDpop('ERR_DPOP_PROOF_REPLAYED', /invalid_dpop_proof/),
    );
  });

  it('refuses a proof for another URL or another method', async () => {
    for (const claims of [{ htu: 'https://api.example/admin' }, { htu: 'https://evil.example/notes' }, { htm: 'DELETE' }]) {
      await assert.rejects(
        verifyAccessToken(bound, dpop(await proof(owner, bound, claims))),
        refusedDpop('ERR_DPOP_PROOF_INVALID', /invalid_dpop_proof/),
      );
    }
  });

  it('refuses a proof whose ath is another token`s hash', async () => {
    const otherToken = await sign(accessClaims({ cnf: { jkt: owner.jkt } }));
    await assert.rejects(
      verifyAccessToken(bound, dpop(await proof(owner, otherToken))),
      refusedDpop('ERR_DPOP_PROOF_INVALID', /error_description="The DPoP proof does not cover this access token \(ath\)."/),
    );
  });

  it('refuses a proof of another key than the token`s cnf.jkt (a stolen token with the thief`s proof)', async () => {
    const thief = await holder();
    await assert.rejects(
      verifyAccessToken(bound, dpop(await proof(thief, bound))),
      refusedDpop('ERR_DPOP_TOKEN_NOT_BOUND', /invalid_token/),
    );
  });

  it('asks for the server nonce when one is required (use_dpop_nonce)', async () => {
    await assert.rejects(
      verifyAccessToken(bound, dpop(await proof(owner, bound), { nonce: 'n-1' })),
      refusedDpop('ERR_DPOP_NONCE_REQUIRED', /error="use_dpop_nonce"/),
    );
    const verified = await verifyAccessToken(bound, dpop(await proof(owner, bound, { nonce: 'n-1' }), { nonce: 'n-1' }));
    assert.equal(verified.jkt, owner.jkt);
  });

  it('answers an invalid bound token with a DPoP challenge, and a missing scope after the proof is checked', async () => {
    const expired = await sign(accessClaims({ cnf: { jkt: owner.jkt }, exp: now() - 60 }));
    await assert.rejects(
      verifyAccessToken(expired, dpop(await proof(owner, expired))),
      refused('ERR_ACCESS_TOKEN_INVALID', /^DPoP error="invalid_token", error_description="The access token has expired.", algs="/),
    );
    await assert.rejects(
      verifyAccessToken(bound, { ...dpop(await proof(owner, bound)), requiredScopes: ['admin'] }),
      refused('ERR_ACCESS_TOKEN_INSUFFICIENT_SCOPE', /^DPoP error="insufficient_scope".*scope="admin"$/),
    );
  });
});
