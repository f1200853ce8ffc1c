/**
 * Token introspection (RFC 7662, issue 37): a confidential client asks POST /oauth/introspect
 * about a token, authenticated as at the token endpoint, and learns whether it is live and what
 * it carries, each member exactly: the userinfo access token, an API's RFC 9068 token (asked by
 * the client it was issued to, and by the API's resource server), a refresh token, a DPoP-bound
 * token. The refusals and the threats are in introspection.security.test.ts. On SQLite, and on
 * PostgreSQL when SERVICE_TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { REFRESH_TOKEN_IDLE_TTL_SECONDS } from '../../src/defaults.js';
import { NOTES, startWithApis, userWithRoles } from '../support/api-helpers.js';
import { currentNonce, dpopKey, dpopProof } from '../support/dpop-helpers.js';
import { sendClock, type TestService, uniqueEmail } from '../support/helpers.js';
import {
  basicAuthorization,
  credentials,
  introspect,
  type RelyingParty,
  refresh,
  relyingParty,
  signIn,
} from '../support/oidc-token-helpers.js';

describe('token introspection (RFC 7662)', () => {
  let service: TestService;
  let rp: RelyingParty;
  let notesServer: RelyingParty;
  const clock = sendClock();
  before(async () => {
    ({ service, rp } = await startWithApis(clock.now));
    notesServer = await relyingParty(service, { name: 'Notes API', redirectUri: 'https://notes.example.com/unused' });
    await service.ctx.apis.updateApi(NOTES, { resourceServerClientId: notesServer.clientId }, 'test');
  });
  after(() => service.close());

  /** The members an active answer for an access token has: its own claims, and the token type its binding gives. */
  const accessTokenAnswer = (accessToken: string, tokenType: 'Bearer' | 'DPoP') => {
    const claims = decodeJwt(accessToken);
    return {
      active: true,
      scope: claims.scope,
      client_id: claims.client_id,
      sub: claims.sub,
      exp: claims.exp,
      iat: claims.iat,
      iss: service.url,
      aud: claims.aud,
      jti: claims.jti,
      token_type: tokenType,
      ...(claims.cnf ? { cnf: claims.cnf } : {}),
    };
  };

  it('is advertised in discovery, for client_secret_basic, client_secret_post and private_key_jwt', async () => {
    const document = await (await fetch(`${service.url}/.well-known/openid-configuration`)).json();
    assert.equal(document.introspection_endpoint, `${service.url}/oauth/introspect`);
    assert.deepEqual(document.introspection_endpoint_auth_methods_supported, [
      'client_secret_basic',
      'client_secret_post',
      'private_key_jwt',
    ]);
  });

  it('the userinfo access token: active with its members, to its client by either method, never cached', async () => {
    clock.tick();
    const email = uniqueEmail('introspect-userinfo');
    const { tokens } = await signIn(service, rp, email);
    const expected = accessTokenAnswer(tokens.access_token ?? '', 'Bearer');
    assert.equal(expected.aud, `${service.url}/oauth/userinfo`);
    assert.equal(expected.scope, 'openid email offline_access');
    const posted = await introspect(service, { token: tokens.access_token ?? '', ...credentials(rp) });
    assert.equal(posted.status, 200);
    assert.deepEqual(posted.body, expected);
    assert.equal(posted.headers.get('cache-control'), 'no-store');
    const basic = await introspect(service, { token: tokens.access_token ?? '', token_type_hint: 'access_token' }, basicAuthorization(rp));
    assert.deepEqual(basic.body, expected);
  });

  it("an API's token: active with its audience and permissions, to its client and to the API's resource server", async () => {
    clock.tick();
    const email = uniqueEmail('introspect-api');
    const userId = await userWithRoles(service, email, ['reader']);
    const { tokens } = await signIn(service, rp, email, { scope: 'openid email read:notes write:notes', extra: { resource: NOTES } });
    const expected = accessTokenAnswer(tokens.access_token ?? '', 'Bearer');
    assert.deepEqual([expected.aud, expected.scope, expected.sub, expected.client_id], [NOTES, 'read:notes', userId, rp.clientId]);
    assert.deepEqual((await introspect(service, { token: tokens.access_token ?? '', ...credentials(rp) })).body, expected);
    assert.deepEqual((await introspect(service, { token: tokens.access_token ?? '' }, basicAuthorization(notesServer))).body, expected);
  });

  it('a refresh token: active with its grant, to its client; the access token a refresh issued is active too', async () => {
    clock.tick();
    const email = uniqueEmail('introspect-refresh');
    const { tokens } = await signIn(service, rp, email);
    const sub = decodeJwt(tokens.access_token ?? '').sub;
    const answer = await introspect(service, { token: tokens.refresh_token ?? '', token_type_hint: 'refresh_token', ...credentials(rp) });
    assert.deepEqual(answer.body, {
      active: true,
      scope: 'openid email offline_access',
      client_id: rp.clientId,
      sub,
      exp: Math.floor(clock.at / 1000) + REFRESH_TOKEN_IDLE_TTL_SECONDS,
      iat: Math.floor(clock.at / 1000),
      iss: service.url,
      token_type: 'refresh_token',
    });
    const rotated = await refresh(service, { refresh_token: tokens.refresh_token ?? '', ...credentials(rp) });
    assert.equal(rotated.status, 200);
    const fresh = await introspect(service, { token: rotated.body.access_token, ...credentials(rp) });
    assert.deepEqual(fresh.body, accessTokenAnswer(rotated.body.access_token, 'Bearer'));
    const spent = await introspect(service, { token: tokens.refresh_token ?? '', ...credentials(rp) });
    assert.deepEqual(spent.body, { active: false }, 'rotation spent it');
  });

  it('a DPoP-bound access token: token_type DPoP and cnf.jkt, the key it is bound to', async () => {
    clock.tick();
    const key = await dpopKey();
    const { tokens } = await signIn(service, rp, uniqueEmail('introspect-dpop'), {
      redeemHeaders: async () => ({
        dpop: await dpopProof(key, {
          htm: 'POST',
          htu: `${service.url}/oauth/token`,
          nonce: await currentNonce(service.url),
          iat: Math.floor(clock.at / 1000),
        }),
      }),
    });
    assert.equal(tokens.token_type, 'DPoP');
    const answer = await introspect(service, { token: tokens.access_token ?? '', ...credentials(rp) });
    assert.deepEqual(answer.body, accessTokenAnswer(tokens.access_token ?? '', 'DPoP'));
    assert.deepEqual(answer.body.cnf, { jkt: key.jkt });
  });
});
