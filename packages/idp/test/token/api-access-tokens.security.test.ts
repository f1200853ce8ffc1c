/**
 * Threats to access tokens for APIs (issue 37): token confusion (an ID token or the userinfo
 * token taken for an API's token), a token for one API replayed at another, a `resource` that
 * is not a registered API or was not asked for at sign-in, several audiences in one token,
 * scope widening on refresh, a user without the role, and a DPoP-bound token's key. The
 * resource server is jose's jwtVerify against the JWKS, as a third party's would be.
 * On SQLite, and on PostgreSQL when SERVICE_TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { createPkcePair } from 'service-web';
import { BILLING, NOTES, startWithApis, userWithRoles } from '../support/api-helpers.js';
import { currentNonce, dpopKey, dpopProof } from '../support/dpop-helpers.js';
import { sendClock, type TestService, uniqueEmail } from '../support/helpers.js';
import { authorize, paramsOf, RP_CALLBACK, redeem } from '../support/oidc-helpers.js';
import { credentials, type RelyingParty, refresh, signIn, signInForCode } from '../support/oidc-token-helpers.js';

describe('access tokens for APIs under attack', () => {
  let service: TestService;
  let rp: RelyingParty;
  const clock = sendClock();
  let jwks: ReturnType<typeof createRemoteJWKSet>;
  before(async () => {
    ({ service, rp } = await startWithApis(clock.now));
    jwks = createRemoteJWKSet(new URL(`${service.url}/.well-known/jwks.json`));
  });
  after(() => service.close());

  const verify = (token: string, audience: string) =>
    jwtVerify(token, jwks, { issuer: service.url, audience, typ: 'at+jwt', currentDate: new Date(clock.now()) });
  const readerSignIn = async (label: string, scope: string, extra: Record<string, string | string[]>) => {
    clock.tick();
    const email = uniqueEmail(label);
    await userWithRoles(service, email, ['reader']);
    return signIn(service, rp, email, { scope, extra });
  };

  it('token confusion: an ID token, the userinfo token or a refresh token is refused by the API as an access token', async () => {
    const { tokens } = await readerSignIn('confusion', 'openid email offline_access read:notes', { resource: NOTES });
    await assert.rejects(verify(tokens.id_token ?? '', NOTES), 'an ID token (typ JWT, aud the client)');
    await assert.rejects(verify(tokens.refresh_token ?? '', NOTES), 'a refresh token is no JWT');
    const plain = await readerSignIn('confusion-plain', 'openid email', {});
    await assert.rejects(verify(plain.tokens.access_token ?? '', NOTES), 'the userinfo token: HS256 under a secret, not in the JWKS');
  });

  it('audience mismatch: a token for Notes is refused by Billing', async () => {
    const { tokens } = await readerSignIn('aud', 'openid email read:notes', { resource: NOTES });
    assert.equal((await verify(tokens.access_token ?? '', NOTES)).payload.aud, NOTES);
    await assert.rejects(verify(tokens.access_token ?? '', BILLING), /aud/);
  });

  for (const [resource, why] of [
    ['https://unknown.example.com', 'an API nobody registered'],
    ['notes', 'not an absolute URI'],
    [`${NOTES}#frag`, 'a URI with a fragment'],
  ] as const) {
    it(`resource naming ${why} is refused at /authorize with invalid_target, no code`, async () => {
      const pkce = await createPkcePair();
      const answer = await authorize(service, {
        response_type: 'code',
        client_id: rp.clientId,
        redirect_uri: RP_CALLBACK,
        scope: 'openid email read:notes',
        state: 'st',
        code_challenge: pkce.codeChallenge,
        code_challenge_method: 'S256',
        resource,
      });
      assert.equal(answer.status, 303);
      const params = paramsOf(answer.location);
      assert.deepEqual([params.error, params.state, params.code], ['invalid_target', 'st', undefined]);
    });
  }

  it('resource widening at the token endpoint: an API the sign-in did not name, or two at once, is invalid_target', async () => {
    for (const resource of [BILLING, [NOTES, BILLING]]) {
      clock.tick();
      const email = uniqueEmail('token-target');
      await userWithRoles(service, email, ['reader', 'accountant']);
      const { code, codeVerifier } = await signInForCode(service, rp, email, {
        scope: 'openid email read:notes',
        extra: { resource: NOTES },
      });
      const body = new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: rp.redirectUri,
        code_verifier: codeVerifier,
        ...credentials(rp),
      });
      for (const value of [resource].flat()) body.append('resource', value);
      const answer = await fetch(service.tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body,
      });
      assert.equal(answer.status, 400, String(resource));
      assert.equal(((await answer.json()) as { error: string }).error, 'invalid_target');
    }
  });

  it('scope widening on refresh is invalid_scope and leaves the refresh token live; another API is invalid_target, likewise', async () => {
    const { tokens } = await readerSignIn('widen', 'openid email offline_access read:notes', { resource: NOTES });
    const widened = await refresh(service, {
      refresh_token: tokens.refresh_token ?? '',
      ...credentials(rp),
      scope: 'openid read:notes write:notes',
    });
    assert.deepEqual([widened.status, widened.body.error], [400, 'invalid_scope']);
    const other = await refresh(service, { refresh_token: tokens.refresh_token ?? '', ...credentials(rp), resource: BILLING });
    assert.deepEqual([other.status, other.body.error], [400, 'invalid_target']);
    const fine = await refresh(service, { refresh_token: tokens.refresh_token ?? '', ...credentials(rp) });
    assert.equal(fine.status, 200, 'not spent by the refused requests');
    assert.equal((await verify(fine.body.access_token, NOTES)).payload.scope, 'read:notes');
  });

  it('a user without the role gets a token for the API with none of its permissions', async () => {
    clock.tick();
    const { tokens } = await signIn(service, rp, uniqueEmail('no-role'), {
      scope: 'openid email read:notes write:notes',
      extra: { resource: NOTES },
    });
    assert.equal(tokens.scope, 'openid email');
    assert.equal((await verify(tokens.access_token ?? '', NOTES)).payload.scope, '');
  });

  it('a DPoP-bound token for an API names its key (cnf.jkt), so a stolen copy is useless without the key', async () => {
    clock.tick();
    const email = uniqueEmail('dpop-api');
    await userWithRoles(service, email, ['reader']);
    const key = await dpopKey();
    const { tokens } = await signIn(service, rp, email, {
      scope: 'openid email read:notes',
      extra: { resource: NOTES },
      redeemHeaders: async () => ({
        dpop: await dpopProof(key, {
          htm: 'POST',
          htu: service.tokenUrl,
          iat: Math.floor(clock.now() / 1000),
          nonce: await currentNonce(service.url),
        }),
      }),
    });
    assert.equal(tokens.token_type, 'DPoP');
    assert.deepEqual((await verify(tokens.access_token ?? '', NOTES)).payload.cnf, { jkt: key.jkt });
  });

  it('refuses a code request whose token asks a resource while the code has none (no audience invented)', async () => {
    clock.tick();
    const { code, codeVerifier } = await signInForCode(service, rp, uniqueEmail('no-target'), { scope: 'openid email' });
    const answer = await redeem(service, {
      code,
      redirect_uri: rp.redirectUri,
      code_verifier: codeVerifier,
      ...credentials(rp),
      resource: NOTES,
    });
    assert.deepEqual([answer.status, answer.body.error], [400, 'invalid_target']);
  });
});
