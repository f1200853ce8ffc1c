/**
 * DPoP (RFC 9449, issue 27) at the token endpoint, userinfo and revocation, with proofs made
 * by jose as any client would: `token_type: DPoP` and `cnf.jkt`; the server nonce (8) asked for
 * before a code is spent; a public client's refresh tokens bound to its key; a confidential
 * client's refreshed with a new key; the client setting that requires DPoP; discovery. Runs
 * on PostgreSQL too (helpers.ts). The thefts are in dpop-*.security.test.ts beside this.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { IDBFactory } from 'fake-indexeddb';
import { calculateJwkThumbprint } from 'jose';
import { exchangeCodeForTokens, OAuthExchangeError } from 'service-oauth-client';
import { createPkcePair, ServiceClient } from 'service-web';
import { ServiceDpop } from 'service-web/dpop';
import { DPOP_NONCE_WINDOW_SECONDS } from '../../src/defaults.js';
import { currentNonce, dpopKey, dpopProof, formPost, userinfo } from '../support/dpop-helpers.js';
import { sendClock, startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import { idTokenClaims } from '../support/oidc-helpers.js';
import { credentials, type RelyingParty, relyingParty, signIn, signInForCode } from '../support/oidc-token-helpers.js';

describe('DPoP-bound tokens', () => {
  let service: TestService;
  const clock = sendClock();
  let rp: RelyingParty;
  let spa: RelyingParty;
  let tokenUrl: string;
  let revokeUrl: string;
  before(async () => {
    service = await startTestService({ now: clock.now });
    rp = await relyingParty(service);
    spa = await relyingParty(service, { name: 'SPA', public: true, redirectUri: 'https://spa.example/cb' });
    tokenUrl = service.tokenUrl;
    revokeUrl = `${service.url}/oauth/revoke`;
  });
  after(() => service.close());

  /** A proof for the token endpoint with the service's nonce. */
  const tokenProof = async (key: Awaited<ReturnType<typeof dpopKey>>) =>
    dpopProof(key, { htm: 'POST', htu: tokenUrl, nonce: await currentNonce(service.url), iat: Math.floor(clock.at / 1000) });
  const userinfoProof = async (key: Awaited<ReturnType<typeof dpopKey>>, accessToken: string) =>
    dpopProof(key, {
      htm: 'GET',
      htu: `${service.url}/oauth/userinfo`,
      nonce: await currentNonce(service.url),
      accessToken,
      iat: Math.floor(clock.at / 1000),
    });

  it('publishes the proof algorithms in discovery', async () => {
    const document = await (await fetch(`${service.url}/.well-known/openid-configuration`)).json();
    assert.ok(document.dpop_signing_alg_values_supported.includes('ES256'));
    assert.ok(!document.dpop_signing_alg_values_supported.includes('HS256'), 'asymmetric only (RFC 9449 4.2)');
  });

  it('takes Ed25519 proofs under both names, EdDSA (RFC 8037) and Ed25519 (RFC 9864), and publishes both', async () => {
    const document = await (await fetch(`${service.url}/.well-known/openid-configuration`)).json();
    assert.ok(document.dpop_signing_alg_values_supported.includes('EdDSA'));
    assert.ok(document.dpop_signing_alg_values_supported.includes('Ed25519'));
    for (const alg of ['EdDSA', 'Ed25519'] as const) {
      clock.tick();
      const key = await dpopKey(alg);
      const { tokens } = await signIn(service, rp, uniqueEmail(`dpop-${alg.toLowerCase()}`), {
        redeemHeaders: async () => ({ dpop: await tokenProof(key) }),
      });
      assert.equal(tokens.token_type, 'DPoP', alg);
      assert.deepEqual(idTokenClaims(tokens.access_token ?? '').cnf, { jkt: key.jkt });
      const answer = await userinfo(service.url, 'DPoP', tokens.access_token ?? '', await userinfoProof(key, tokens.access_token ?? ''));
      assert.equal(answer.status, 200, `${alg}: ${JSON.stringify(answer.body)}`);
    }
  });

  it('binds the tokens of a code exchange to the proof`s key, and userinfo takes them only with a proof', async () => {
    clock.tick();
    const key = await dpopKey();
    const { tokens } = await signIn(service, rp, uniqueEmail('dpop-code'), {
      redeemHeaders: async () => ({ dpop: await tokenProof(key) }),
    });
    assert.equal(tokens.token_type, 'DPoP');
    const access = idTokenClaims(tokens.access_token ?? '');
    assert.deepEqual(access.cnf, { jkt: key.jkt });
    const answer = await userinfo(service.url, 'DPoP', tokens.access_token ?? '', await userinfoProof(key, tokens.access_token ?? ''));
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.ok(answer.headers.get('dpop-nonce'));
  });

  it('asks for its nonce before the code is spent, and the same code then works (RFC 9449 8)', async () => {
    clock.tick();
    const key = await dpopKey();
    const { code, codeVerifier } = await signInForCode(service, rp, uniqueEmail('dpop-nonce'));
    const params = {
      grant_type: 'authorization_code',
      code,
      code_verifier: codeVerifier,
      redirect_uri: rp.redirectUri,
      ...credentials(rp),
    };
    const iat = Math.floor(clock.at / 1000);
    const noNonce = await formPost(tokenUrl, params, await dpopProof(key, { htm: 'POST', htu: tokenUrl, iat }));
    assert.equal(noNonce.status, 400);
    assert.equal(noNonce.body.error, 'use_dpop_nonce');
    const nonce = noNonce.headers.get('dpop-nonce') ?? '';
    assert.equal(nonce, await currentNonce(service.url));
    const retried = await formPost(tokenUrl, params, await dpopProof(key, { htm: 'POST', htu: tokenUrl, nonce, iat }));
    assert.equal(retried.status, 200, 'the code was not spent by the refusal');
    assert.equal(retried.body.token_type, 'DPoP');
  });

  it('rotates the nonce every window and takes the previous window`s (documented rotation)', async () => {
    const before = await currentNonce(service.url);
    clock.at += DPOP_NONCE_WINDOW_SECONDS * 1000;
    const next = await currentNonce(service.url);
    assert.notEqual(next, before);
    const key = await dpopKey();
    const proofWith = (nonce: string) => dpopProof(key, { htm: 'POST', htu: revokeUrl, nonce, iat: Math.floor(clock.at / 1000) });
    const previous = await formPost(revokeUrl, { token: 'rt_unknown', ...credentials(rp) }, await proofWith(before));
    assert.equal(previous.status, 200, 'the previous window`s nonce still works');
    clock.at += DPOP_NONCE_WINDOW_SECONDS * 1000;
    const stale = await formPost(revokeUrl, { token: 'rt_unknown', ...credentials(rp) }, await proofWith(before));
    assert.equal(stale.status, 400);
    assert.equal(stale.body.error, 'use_dpop_nonce');
  });

  it('binds a public client`s refresh tokens to the key: each refresh proves it and stays bound', async () => {
    clock.tick();
    const key = await dpopKey();
    const { tokens } = await signIn(service, spa, uniqueEmail('dpop-spa'), {
      redeemHeaders: async () => ({ dpop: await tokenProof(key) }),
    });
    assert.equal(tokens.token_type, 'DPoP');
    const refreshed = await formPost(
      tokenUrl,
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token ?? '', ...credentials(spa) },
      await tokenProof(key),
    );
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
    assert.equal(refreshed.body.token_type, 'DPoP');
    assert.deepEqual(idTokenClaims(refreshed.body.access_token).cnf, { jkt: key.jkt });
    const again = await formPost(
      tokenUrl,
      { grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token, ...credentials(spa) },
      await tokenProof(key),
    );
    assert.equal(again.status, 200, 'the successor is bound to the same key');
  });

  it('lets a confidential client refresh with a new key (its secret binds the refresh token, RFC 9449 5)', async () => {
    clock.tick();
    const first = await dpopKey();
    const { tokens } = await signIn(service, rp, uniqueEmail('dpop-rp'), {
      redeemHeaders: async () => ({ dpop: await tokenProof(first) }),
    });
    const second = await dpopKey();
    const refreshed = await formPost(
      tokenUrl,
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token ?? '', ...credentials(rp) },
      await tokenProof(second),
    );
    assert.equal(refreshed.status, 200);
    assert.deepEqual(idTokenClaims(refreshed.body.access_token).cnf, { jkt: second.jkt });
  });

  it('revokes a public client`s bound refresh token only with a proof of its key', async () => {
    clock.tick();
    const key = await dpopKey();
    const { tokens } = await signIn(service, spa, uniqueEmail('dpop-revoke'), {
      redeemHeaders: async () => ({ dpop: await tokenProof(key) }),
    });
    const refreshToken = tokens.refresh_token ?? '';
    const unproved = await formPost(revokeUrl, { token: refreshToken, ...credentials(spa) });
    assert.equal(unproved.status, 200, 'RFC 7009 2.2: answered alike');
    const stillLive = await formPost(
      tokenUrl,
      { grant_type: 'refresh_token', refresh_token: refreshToken, ...credentials(spa) },
      await tokenProof(key),
    );
    assert.equal(stillLive.status, 200, 'not revoked without the key');
    const next = stillLive.body.refresh_token;
    const revokeProof = await dpopProof(key, {
      htm: 'POST',
      htu: revokeUrl,
      nonce: await currentNonce(service.url),
      iat: Math.floor(clock.at / 1000),
    });
    assert.equal((await formPost(revokeUrl, { token: next, ...credentials(spa) }, revokeProof)).status, 200);
    const after = await formPost(
      tokenUrl,
      { grant_type: 'refresh_token', refresh_token: next, ...credentials(spa) },
      await tokenProof(key),
    );
    assert.equal(after.status, 400);
    assert.equal(after.body.error, 'invalid_grant');
  });

  it('refuses a client that requires DPoP a token request without a proof, and spends nothing', async () => {
    clock.tick();
    const strict = await relyingParty(service, { name: 'Strict', redirectUri: 'https://strict.example/cb' });
    await service.ctx.operations.setDpop(strict.clientId, 'required', 'test');
    const key = await dpopKey();
    const { code, codeVerifier } = await signInForCode(service, strict, uniqueEmail('dpop-required'));
    const params = {
      grant_type: 'authorization_code',
      code,
      code_verifier: codeVerifier,
      redirect_uri: strict.redirectUri,
      ...credentials(strict),
    };
    const bare = await formPost(tokenUrl, params);
    assert.equal(bare.status, 400);
    assert.equal(bare.body.error, 'invalid_dpop_proof');
    const proved = await formPost(tokenUrl, params, await tokenProof(key));
    assert.equal(proved.status, 200, 'the refusal spent no code');
    const refreshParams = { grant_type: 'refresh_token', refresh_token: proved.body.refresh_token, ...credentials(strict) };
    const refresh = await formPost(tokenUrl, refreshParams);
    assert.equal(refresh.status, 400);
    assert.equal(refresh.body.error, 'invalid_dpop_proof');
    assert.equal((await formPost(tokenUrl, refreshParams, await tokenProof(key))).status, 200, 'the refusal spent no refresh token');
  });
});

describe('DPoP through service-oauth-client`s code exchange', () => {
  let service: TestService;
  before(async () => {
    service = await startTestService();
  });
  after(() => service.close());

  it('binds the tokens of service-oauth-client`s exchange to a proof it forwards, retrying with the nonce it is told', async () => {
    const email = uniqueEmail('dpop-exchange');
    const pkce = await createPkcePair();
    const device = await service.newDevice();
    await device.authenticate(email, { rememberDevice: true, code_challenge: pkce.codeChallenge, code_challenge_method: 'S256' });
    await device.verifyEmailOtp({ userid: email, otp: await service.latestOtp(email) });
    const { code } = await device.verifyDevice({ userid: email });
    const key = await dpopKey();
    const options = {
      code: code as string,
      codeVerifier: pkce.codeVerifier,
      oauthTokenUrl: service.tokenUrl,
      jwksUrl: service.jwksUrl,
      issuer: service.url,
      clientId: service.clientId,
      apiKey: service.secretKey,
    };
    const iat = Math.floor(Date.now() / 1000);
    const refused = await exchangeCodeForTokens({
      ...options,
      dpop: await dpopProof(key, { htm: 'POST', htu: service.tokenUrl, iat }),
    }).catch((error: unknown) => error);
    assert.ok(refused instanceof OAuthExchangeError);
    assert.equal(refused.error, 'use_dpop_nonce');
    assert.ok(refused.dpopNonce);
    const nonce = refused.dpopNonce;
    const exchanged = await exchangeCodeForTokens({
      ...options,
      dpop: await dpopProof(key, { htm: 'POST', htu: service.tokenUrl, iat, nonce }),
    });
    assert.equal(exchanged.tokenType, 'DPoP');
    assert.equal(exchanged.claims.email, email);
    assert.deepEqual(idTokenClaims(exchanged.accessToken).cnf, { jkt: key.jkt });
    const proof = await dpopProof(key, {
      htm: 'GET',
      htu: `${service.url}/oauth/userinfo`,
      nonce: await currentNonce(service.url),
      accessToken: exchanged.accessToken,
    });
    const answer = await userinfo(service.url, 'DPoP', exchanged.accessToken, proof);
    assert.equal(answer.status, 200);
  });
});

describe('DPoP with the device key (service-web/dpop)', () => {
  let service: TestService;
  before(async () => {
    service = await startTestService();
  });
  after(() => service.close());

  it('binds the tokens to the device key service-web keeps: service-web/dpop signs the proofs', async () => {
    const email = uniqueEmail('dpop-device');
    const indexedDB = new IDBFactory();
    const device = new ServiceClient({ indexedDB, fetch: service.browserFetch });
    await device.init(service.publishableKey, service.url);
    const pkce = await createPkcePair();
    await device.authenticate(email, { rememberDevice: true, code_challenge: pkce.codeChallenge, code_challenge_method: 'S256' });
    await device.verifyEmailOtp({ userid: email, otp: await service.latestOtp(email) });
    const { code } = await device.verifyDevice({ userid: email });
    const dpop = new ServiceDpop({ indexedDB, fetch: service.browserFetch });
    assert.equal((await dpop.init(service.publishableKey, service.url)).status, 'INITIALIZED');

    const nonce = await currentNonce(service.url);
    const proof = await dpop.dpop({ userid: email, method: 'POST', url: service.tokenUrl, nonce });
    assert.equal(proof.status, 'SUCCESS');
    if (proof.status !== 'SUCCESS') return;
    const exchanged = await exchangeCodeForTokens({
      code: code as string,
      codeVerifier: pkce.codeVerifier,
      oauthTokenUrl: service.tokenUrl,
      jwksUrl: service.jwksUrl,
      issuer: service.url,
      clientId: service.clientId,
      apiKey: service.secretKey,
      dpop: proof.headers.DPoP,
    });
    assert.deepEqual(idTokenClaims(exchanged.accessToken).cnf, { jkt: proof.jkt });
    const deviceId = exchanged.claims.device_id as string;
    // The key is the device's own: the thumbprint of the public key the service registered for it.
    const registered = await service.ctx.db.selectFrom('devices').select('public_jwk').where('id', '=', deviceId).executeTakeFirstOrThrow();
    assert.equal(proof.jkt, await calculateJwkThumbprint(JSON.parse(registered.public_jwk)));
    const resource = await dpop.dpop({
      userid: email,
      method: 'GET',
      url: `${service.url}/oauth/userinfo`,
      accessToken: exchanged.accessToken,
      nonce,
    });
    assert.equal(resource.status, 'SUCCESS');
    if (resource.status !== 'SUCCESS') return;
    assert.equal((await userinfo(service.url, 'DPoP', exchanged.accessToken, resource.headers.DPoP)).status, 200);

    // Another browser (no key in its IndexedDB) can make no proof for this user.
    const elsewhere = new ServiceDpop({ indexedDB: new IDBFactory(), fetch: service.browserFetch });
    await elsewhere.init(service.publishableKey, service.url);
    assert.equal(
      (await elsewhere.dpop({ userid: email, method: 'GET', url: `${service.url}/oauth/userinfo` })).status,
      'DEVICE_KEY_UNAVAILABLE',
    );
  });
});
