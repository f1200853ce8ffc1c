/**
 * Threats to token introspection (RFC 7662, issue 37). Attacks: a caller that is not an
 * authenticated confidential client probes tokens; a client learns about another client's
 * tokens, or an API's resource server about another API's (RFC 7662 4: never tell one client
 * about another's tokens); a token outlives what ended its grant (its refresh token revoked,
 * its device revoked, "sign out everywhere else", its user disabled, its code replayed), which
 * must be inactive at introspection at once, not at its exp; a forged or confused token (another
 * key, alg none, HS256 under a guessed key, an ID token) or an expired one is taken for live.
 * Each refusal is the bare `{ active: false }`, the same as for garbage, so nothing is learnt.
 * On SQLite, and on PostgreSQL when SERVICE_TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt, decodeProtectedHeader, generateKeyPair, SignJWT } from 'jose';
import { HOSTED_CLIENT_ID } from '../../src/clients/service.js';
import { ACCESS_TOKEN_TTL_SECONDS } from '../../src/defaults.js';
import { BILLING, NOTES, startWithApis, userWithRoles } from '../support/api-helpers.js';
import { sendClock, type TestService, uniqueEmail } from '../support/helpers.js';
import { idTokenClaims, redeem } from '../support/oidc-helpers.js';
import {
  basicAuthorization,
  credentials,
  introspect,
  type RelyingParty,
  relyingParty,
  revoke,
  signIn,
  signInForCode,
} from '../support/oidc-token-helpers.js';

const INACTIVE = { active: false };

describe('token introspection under attack', () => {
  let service: TestService;
  let rp: RelyingParty;
  let other: RelyingParty;
  let spa: RelyingParty;
  let notesServer: RelyingParty;
  const clock = sendClock();
  before(async () => {
    ({ service, rp } = await startWithApis(clock.now));
    other = await relyingParty(service, { name: 'Other App', redirectUri: 'https://other.example/cb' });
    spa = await relyingParty(service, { name: 'SPA', public: true, redirectUri: 'https://spa.example/cb' });
    notesServer = await relyingParty(service, { name: 'Notes API', redirectUri: 'https://notes.example.com/unused' });
    await service.ctx.apis.updateApi(NOTES, { resourceServerClientId: notesServer.clientId }, 'test');
  });
  after(() => service.close());

  /** The answer `caller` gets for `token`. */
  const askAs = async (caller: RelyingParty, token: string) => (await introspect(service, { token, ...credentials(caller) })).body;

  it('an unauthenticated or public caller is refused with 401 invalid_client, whatever the token', async () => {
    clock.tick();
    const { tokens } = await signIn(service, rp, uniqueEmail('introspect-anon'));
    const token = tokens.access_token ?? '';
    const refusals: [string, Record<string, string>, Record<string, string>][] = [
      ['no credentials', { token }, {}],
      ['a public client by its id alone', { token, client_id: spa.clientId }, {}],
      ['a public client with a made-up secret', { token, client_id: spa.clientId, client_secret: 'sk_guess' }, {}],
      ['the issuing client with a wrong secret', { token, client_id: rp.clientId, client_secret: 'sk_wrong' }, {}],
      ['the issuing client id with no secret', { token, client_id: rp.clientId }, {}],
      ['a wrong Basic secret', { token }, basicAuthorization({ ...rp, secretKey: 'sk_wrong' })],
    ];
    for (const [name, params, headers] of refusals) {
      const answer = await introspect(service, params, headers);
      assert.deepEqual([answer.status, answer.body.error], [401, 'invalid_client'], name);
      assert.equal(answer.body.active, undefined, `${name}: nothing about the token`);
    }
  });

  it("another client asking about someone else's token learns nothing: the answer of an unknown token", async () => {
    clock.tick();
    const email = uniqueEmail('introspect-other');
    await userWithRoles(service, email, ['reader']);
    const plain = await signIn(service, rp, email);
    const forApi = await signIn(service, rp, email, {
      scope: 'openid email read:notes',
      extra: { resource: NOTES },
      browser: plain.browser,
    });
    for (const token of [plain.tokens.access_token, plain.tokens.refresh_token, forApi.tokens.access_token]) {
      assert.equal((await askAs(rp, token ?? '')).active, true, 'live for its own client');
      assert.deepEqual(await askAs(other, token ?? ''), INACTIVE);
    }
    assert.deepEqual(await askAs(other, 'rt_not-a-token'), INACTIVE, 'the same answer as for an unknown token');
    assert.deepEqual(await askAs(other, 'garbage'), INACTIVE);
  });

  it("the API's resource server asking about a token for another API, or a userinfo or refresh token, learns nothing", async () => {
    clock.tick();
    const email = uniqueEmail('introspect-cross-api');
    await userWithRoles(service, email, ['reader', 'accountant']);
    const billing = await signIn(service, rp, email, {
      scope: 'openid email offline_access read:invoices',
      extra: { resource: BILLING },
    });
    assert.equal(decodeJwt(billing.tokens.access_token ?? '').aud, BILLING);
    assert.equal((await askAs(rp, billing.tokens.access_token ?? '')).active, true);
    assert.deepEqual(await askAs(notesServer, billing.tokens.access_token ?? ''), INACTIVE, 'another API’s token');
    assert.deepEqual(await askAs(notesServer, billing.tokens.refresh_token ?? ''), INACTIVE, 'a refresh token');
    const plain = await signIn(service, rp, email, { browser: billing.browser });
    assert.deepEqual(await askAs(notesServer, plain.tokens.access_token ?? ''), INACTIVE, 'the userinfo token');
  });

  /** A sign-in whose tokens are live, for one of the endings below. */
  async function liveSignIn(name: string, scope = 'openid email offline_access') {
    clock.tick();
    const email = uniqueEmail(name);
    const signedIn = await signIn(service, rp, email, { scope });
    const claims = idTokenClaims(signedIn.tokens.id_token ?? '');
    assert.equal((await askAs(rp, signedIn.tokens.access_token ?? '')).active, true, 'live before');
    return { ...signedIn, email, sub: String(claims.sub), deviceId: String(claims.device_id) };
  }

  it('after revoking the refresh token (RFC 7009), its access token and itself are inactive at once', async () => {
    const { tokens } = await liveSignIn('introspect-revoked');
    assert.equal((await revoke(service, { token: tokens.refresh_token ?? '', ...credentials(rp) })).status, 200);
    assert.deepEqual(await askAs(rp, tokens.access_token ?? ''), INACTIVE);
    assert.deepEqual(await askAs(rp, tokens.refresh_token ?? ''), INACTIVE);
  });

  for (const scope of ['openid email offline_access', 'openid email'])
    it(`after revoking the device, its access token is inactive at once (${scope})`, async () => {
      const { tokens, deviceId } = await liveSignIn('introspect-device', scope);
      await service.ctx.users.revokeDevice(deviceId, 'cli');
      assert.deepEqual(await askAs(rp, tokens.access_token ?? ''), INACTIVE);
      if (tokens.refresh_token) assert.deepEqual(await askAs(rp, tokens.refresh_token), INACTIVE);
    });

  it('after "sign out everywhere else" from another browser, the access token is inactive at once', async () => {
    const { tokens, sub } = await liveSignIn('introspect-everywhere', 'openid email');
    assert.ok((await service.ctx.deviceService.revokeAll(HOSTED_CLIENT_ID, sub, 'dev_another_browser')) >= 1);
    assert.deepEqual(await askAs(rp, tokens.access_token ?? ''), INACTIVE);
  });

  it('after disabling the user, the access and refresh tokens are inactive at once, and stay so once enabled', async () => {
    const { tokens, email } = await liveSignIn('introspect-disabled');
    await service.ctx.users.disable(email, 'test');
    assert.deepEqual(await askAs(rp, tokens.access_token ?? ''), INACTIVE);
    assert.deepEqual(await askAs(rp, tokens.refresh_token ?? ''), INACTIVE);
    await service.ctx.users.enable(email, 'test');
    assert.deepEqual(await askAs(rp, tokens.refresh_token ?? ''), INACTIVE, 'the family was revoked, not suspended');
  });

  it('after the code is replayed, the tokens of its first redemption are inactive at once', async () => {
    clock.tick();
    const { code, codeVerifier } = await signInForCode(service, rp, uniqueEmail('introspect-replay'));
    const params = { code, redirect_uri: rp.redirectUri, code_verifier: codeVerifier, ...credentials(rp) };
    const first = await redeem(service, params);
    assert.equal((await askAs(rp, first.body.access_token)).active, true);
    assert.equal((await redeem(service, params)).body.error, 'invalid_grant');
    assert.deepEqual(await askAs(rp, first.body.access_token), INACTIVE);
    assert.deepEqual(await askAs(rp, first.body.refresh_token), INACTIVE);
  });

  it('a token signed by another key, alg none, HS256 under a wrong key, or an ID token is inactive', async () => {
    clock.tick();
    const email = uniqueEmail('introspect-forged');
    await userWithRoles(service, email, ['reader']);
    const forApi = await signIn(service, rp, email, { scope: 'openid email read:notes', extra: { resource: NOTES } });
    const plain = await signIn(service, rp, email, { browser: forApi.browser });
    const apiClaims = decodeJwt(forApi.tokens.access_token ?? '');
    const { kid } = decodeProtectedHeader(forApi.tokens.access_token ?? '');
    // The real claims (a live jti), so only the signature is wrong.
    const otherKey = (await generateKeyPair('RS256')).privateKey;
    const anotherKey = await new SignJWT(apiClaims)
      .setProtectedHeader({ alg: 'RS256', typ: 'at+jwt', ...(kid ? { kid } : {}) })
      .sign(otherKey);
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const algNone = `${encode({ alg: 'none', typ: 'at+jwt' })}.${encode(apiClaims)}.`;
    const wrongHmac = await new SignJWT(decodeJwt(plain.tokens.access_token ?? ''))
      .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt' })
      .sign(new TextEncoder().encode('not the service secret, 32 bytes!'));
    const forged: [string, string][] = [
      ['signed by another key', anotherKey],
      ['alg none', algNone],
      ['HS256 under a wrong key', wrongHmac],
      ['an ID token', plain.tokens.id_token ?? ''],
      ['an ID token of an API sign-in', forApi.tokens.id_token ?? ''],
    ];
    for (const [name, token] of forged) {
      assert.deepEqual(await askAs(rp, token), INACTIVE, name);
      assert.deepEqual(await askAs(notesServer, token), INACTIVE, `${name}, to the resource server`);
    }
  });

  it('an expired access token is inactive', async () => {
    clock.tick();
    const email = uniqueEmail('introspect-expired');
    await userWithRoles(service, email, ['reader']);
    const plain = await signIn(service, rp, email, { scope: 'openid email' });
    const forApi = await signIn(service, rp, email, {
      scope: 'openid email read:notes',
      extra: { resource: NOTES },
      browser: plain.browser,
    });
    clock.at += ACCESS_TOKEN_TTL_SECONDS * 1000;
    assert.deepEqual(await askAs(rp, plain.tokens.access_token ?? ''), INACTIVE);
    assert.deepEqual(await askAs(rp, forApi.tokens.access_token ?? ''), INACTIVE);
    assert.deepEqual(await askAs(notesServer, forApi.tokens.access_token ?? ''), INACTIVE);
  });
});
