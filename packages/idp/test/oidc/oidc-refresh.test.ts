/**
 * Refresh tokens (issue 14): granted for scope offline_access to a sign-in with a remembered
 * device, rotated on every use, with a fresh ID token (same sub, aud, auth_time, acr; no nonce);
 * ended by their idle and absolute lifetimes, by the device's revocation and by the user being
 * disabled; and the acr claim of every ID token. Runs on PostgreSQL too (helpers.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createPkcePair } from 'service-web';
import { REFRESH_TOKEN_ABSOLUTE_LIFETIME_SECONDS, REFRESH_TOKEN_IDLE_TTL_SECONDS } from '../../src/defaults.js';
import { acrClassesOf, FACTORS } from '../../src/factors/index.js';
import { ACR, ACR_VALUES, acrOf } from '../../src/oidc/acr.js';
import { sendClock, startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import { authorize, idTokenClaims, paramsOf } from '../support/oidc-helpers.js';
import { credentials, type RelyingParty, refresh, relyingParty, signIn, userinfoStatus } from '../support/oidc-token-helpers.js';

describe('refresh tokens', () => {
  let service: TestService;
  const clock = sendClock();
  let rp: RelyingParty;
  let spa: RelyingParty;
  before(async () => {
    service = await startTestService({ now: clock.now });
    rp = await relyingParty(service);
    spa = await relyingParty(service, { name: 'SPA', public: true, redirectUri: 'https://spa.example/cb' });
  });
  after(() => service.close());

  it('grants a refresh token for offline_access, and each refresh rotates it with new tokens', async () => {
    clock.tick();
    const email = uniqueEmail('refresh');
    const { tokens } = await signIn(service, rp, email);
    assert.equal(tokens.scope, 'openid email offline_access');
    assert.match(tokens.refresh_token ?? '', /^rt_[A-Za-z0-9_-]{43}$/);
    const first = idTokenClaims(tokens.id_token ?? '');
    assert.equal(first.acr, ACR.otp);

    clock.at += 60_000;
    const refreshed = await refresh(service, { refresh_token: tokens.refresh_token ?? '', ...credentials(rp) });
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
    assert.notEqual(refreshed.body.refresh_token, tokens.refresh_token, 'rotated');
    assert.equal(refreshed.body.scope, 'openid email offline_access');
    assert.equal(refreshed.body.token_type, 'Bearer');
    const claims = idTokenClaims(refreshed.body.id_token);
    // OIDC Core 12.2: same iss, sub, aud and auth_time; a new iat; no nonce.
    for (const name of ['iss', 'sub', 'aud', 'auth_time', 'amr', 'acr', 'email', 'device_id'])
      assert.deepEqual(claims[name], first[name], name);
    assert.equal(claims.iat, Math.floor(clock.at / 1000));
    assert.equal(claims.nonce, undefined);
    assert.equal(await userinfoStatus(service, refreshed.body.access_token), 200);

    const again = await refresh(service, { refresh_token: refreshed.body.refresh_token, ...credentials(rp) });
    assert.equal(again.status, 200, 'the successor works');
  });

  it('says in acr how the user signed in: the remembered device`s key is urn:service:acr:device', async () => {
    clock.tick();
    const email = uniqueEmail('acr');
    const first = await signIn(service, rp, email);
    assert.equal(idTokenClaims(first.tokens.id_token ?? '').acr, ACR.otp);
    const again = await signIn(service, rp, email, { browser: first.browser, extra: { prompt: 'login' } });
    const claims = idTokenClaims(again.tokens.id_token ?? '');
    assert.deepEqual([claims.amr, claims.acr], [['swk'], ACR.device]);
    assert.equal(acrOf(['otp', 'mfa', 'totp'], acrClassesOf(FACTORS)), ACR.mfa);
    assert.equal(acrOf(['swk', 'mfa', 'sms'], acrClassesOf(FACTORS)), ACR.mfa);
    assert.equal(acrOf(['hwk'], acrClassesOf(FACTORS)), ACR.phishingResistant);
    assert.equal(acrOf(['hwk', 'user', 'mfa'], acrClassesOf(FACTORS)), ACR.phishingResistant, 'a passkey counted as MFA');
    assert.equal(acrOf(['fed'], acrClassesOf(FACTORS)), ACR.otp, 'an upstream sign-in alone');
  });

  it('serves prompt=consent with offline_access: the operator`s registration stands for consent, no page, SSO still answers', async () => {
    clock.tick();
    const email = uniqueEmail('consent');
    const { tokens, browser } = await signIn(service, rp, email, { extra: { prompt: 'consent' } });
    assert.equal(tokens.scope, 'openid email offline_access');
    assert.ok(tokens.refresh_token, 'a refresh token');
    // With a live service session, prompt=consent asks nothing more: the code comes at once.
    const pkce = await createPkcePair();
    const again = await authorize(
      service,
      {
        response_type: 'code',
        client_id: rp.clientId,
        redirect_uri: rp.redirectUri,
        scope: 'openid email offline_access',
        prompt: 'consent',
        code_challenge: pkce.codeChallenge,
        code_challenge_method: 'S256',
      },
      browser.jar,
    );
    assert.equal(again.status, 303);
    assert.ok(paramsOf(again.location).code, `a code, no page: ${again.location}`);
    // Combined with login, login still asks for a fresh sign-in.
    const fresh = await authorize(
      service,
      {
        response_type: 'code',
        client_id: rp.clientId,
        redirect_uri: rp.redirectUri,
        scope: 'openid email offline_access',
        prompt: 'login consent',
        code_challenge: pkce.codeChallenge,
        code_challenge_method: 'S256',
      },
      browser.jar,
    );
    assert.match(fresh.location ?? '', /^\/signin\?request=/);
  });

  it('grants none without offline_access, and says so in scope', async () => {
    clock.tick();
    const plain = await signIn(service, rp, uniqueEmail('no-offline'), { scope: 'openid email' });
    assert.equal(plain.tokens.refresh_token, undefined);
    assert.equal(plain.tokens.scope, 'openid email');
  });

  it('serves a public client bound by its client_id, with Basic or post credentials for a confidential one', async () => {
    clock.tick();
    const { tokens } = await signIn(service, spa, uniqueEmail('spa'));
    const refreshed = await refresh(service, { refresh_token: tokens.refresh_token ?? '', client_id: spa.clientId });
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));

    clock.tick();
    const confidential = await signIn(service, rp, uniqueEmail('basic'));
    const basic = `Basic ${Buffer.from(`${rp.clientId}:${rp.secretKey}`).toString('base64')}`;
    const viaBasic = await refresh(service, { refresh_token: confidential.tokens.refresh_token ?? '' }, { authorization: basic });
    assert.equal(viaBasic.status, 200, JSON.stringify(viaBasic.body));
    // Without its secret a confidential client does not authenticate, and the token is not spent.
    const noSecret = await refresh(service, { refresh_token: viaBasic.body.refresh_token, client_id: rp.clientId });
    assert.deepEqual([noSecret.status, noSecret.body.error], [401, 'invalid_client']);
    const wrongSecret = await refresh(service, {
      refresh_token: viaBasic.body.refresh_token,
      client_id: rp.clientId,
      client_secret: 'sk_x',
    });
    assert.deepEqual([wrongSecret.status, wrongSecret.body.error], [401, 'invalid_client']);
    assert.equal((await refresh(service, { refresh_token: viaBasic.body.refresh_token, ...credentials(rp) })).status, 200);
  });

  it('refuses a scope beyond the grant (invalid_scope) without spending the token; a narrower one is fine', async () => {
    clock.tick();
    const { tokens } = await signIn(service, rp, uniqueEmail('scope'));
    const wider = await refresh(service, { refresh_token: tokens.refresh_token ?? '', scope: 'openid admin', ...credentials(rp) });
    assert.deepEqual([wider.status, wider.body.error], [400, 'invalid_scope']);
    const narrower = await refresh(service, { refresh_token: tokens.refresh_token ?? '', scope: 'openid', ...credentials(rp) });
    assert.equal(narrower.status, 200, JSON.stringify(narrower.body));
  });

  it('answers a missing or unknown refresh token and an unknown grant type with RFC 6749 errors', async () => {
    const missing = await refresh(service, credentials(rp));
    assert.deepEqual([missing.status, missing.body.error], [400, 'invalid_request']);
    const unknown = await refresh(service, { refresh_token: 'rt_nothing', ...credentials(rp) });
    assert.deepEqual([unknown.status, unknown.body.error], [400, 'invalid_grant']);
    const grant = await refresh(service, { grant_type: 'password', ...credentials(rp) });
    assert.deepEqual([grant.status, grant.body.error], [400, 'unsupported_grant_type']);
  });

  it('ends a token unused for REFRESH_TOKEN_IDLE_TTL_SECONDS, and a family REFRESH_TOKEN_ABSOLUTE_LIFETIME_SECONDS after sign-in', async () => {
    clock.tick();
    const idle = await signIn(service, rp, uniqueEmail('idle'));
    clock.at += (REFRESH_TOKEN_IDLE_TTL_SECONDS + 1) * 1000;
    const late = await refresh(service, { refresh_token: idle.tokens.refresh_token ?? '', ...credentials(rp) });
    assert.deepEqual([late.status, late.body.error], [400, 'invalid_grant']);

    clock.tick();
    const kept = await signIn(service, rp, uniqueEmail('absolute'));
    let token = kept.tokens.refresh_token ?? '';
    let elapsed = 0;
    const step = REFRESH_TOKEN_IDLE_TTL_SECONDS - 60;
    while (elapsed + step < REFRESH_TOKEN_ABSOLUTE_LIFETIME_SECONDS) {
      clock.at += step * 1000;
      elapsed += step;
      const next = await refresh(service, { refresh_token: token, ...credentials(rp) });
      assert.equal(next.status, 200, `used within its idle time, ${elapsed} s after sign-in`);
      token = next.body.refresh_token;
    }
    clock.at += (REFRESH_TOKEN_ABSOLUTE_LIFETIME_SECONDS - elapsed + 1) * 1000;
    const ended = await refresh(service, { refresh_token: token, ...credentials(rp) });
    assert.deepEqual([ended.status, ended.body.error], [400, 'invalid_grant'], 'the family ended');

    // The sweep then deletes the ended family and its tokens, spent ones included (kept until now to recognise reuse).
    await service.ctx.sweepExpired(clock.at);
    const { db } = service.ctx;
    assert.deepEqual(await db.selectFrom('refresh_tokens').select('id').where('family_expires_at', '<', clock.at).execute(), []);
    assert.deepEqual(await db.selectFrom('refresh_token_families').select('id').where('expires_at', '<', clock.at).execute(), []);
  });

  it('ends with the device of its sign-in when it is revoked', async () => {
    clock.tick();
    const email = uniqueEmail('device');
    const { tokens } = await signIn(service, rp, email);
    const deviceId = String(idTokenClaims(tokens.id_token ?? '').device_id);
    assert.ok(await service.ctx.devices.revokeById(deviceId, clock.at));
    const after = await refresh(service, { refresh_token: tokens.refresh_token ?? '', ...credentials(rp) });
    assert.deepEqual([after.status, after.body.error], [400, 'invalid_grant']);
  });

  it('ends when an operator disables the user, and stays ended once they are enabled again', async () => {
    clock.tick();
    const email = uniqueEmail('disabled');
    const { tokens } = await signIn(service, rp, email);
    await service.ctx.users.disable(email, 'test');
    const refused = await refresh(service, { refresh_token: tokens.refresh_token ?? '', ...credentials(rp) });
    assert.deepEqual([refused.status, refused.body.error], [400, 'invalid_grant']);
    await service.ctx.users.enable(email, 'test');
    const still = await refresh(service, { refresh_token: tokens.refresh_token ?? '', ...credentials(rp) });
    assert.deepEqual([still.status, still.body.error], [400, 'invalid_grant'], 'revoked, not only suspended');
  });

  it('deletes the refresh tokens with their user, and with their client', async () => {
    const { db } = service.ctx;
    const families = (column: 'user_id' | 'client_id', id: string) =>
      db.selectFrom('refresh_token_families').select('id').where(column, '=', id).execute();
    const tokensOf = async (familyIds: string[]) =>
      familyIds.length ? db.selectFrom('refresh_tokens').select('id').where('family_id', 'in', familyIds).execute() : [];

    clock.tick();
    const email = uniqueEmail('deleted');
    const { tokens } = await signIn(service, rp, email);
    const userId = String(idTokenClaims(tokens.id_token ?? '').sub);
    const before = (await families('user_id', userId)).map((f) => f.id);
    assert.equal(before.length, 1);
    await service.ctx.users.delete(email, 'test');
    assert.deepEqual(await families('user_id', userId), []);
    assert.deepEqual(await tokensOf(before), []);

    clock.tick();
    const doomed = await relyingParty(service, { name: 'Doomed', redirectUri: 'https://doomed.example/cb' });
    await signIn(service, doomed, uniqueEmail('doomed-client'));
    const ofClient = (await families('client_id', doomed.clientId)).map((f) => f.id);
    assert.equal(ofClient.length, 1);
    await service.ctx.clients.delete(doomed.clientId);
    assert.deepEqual(await families('client_id', doomed.clientId), []);
    assert.deepEqual(await tokensOf(ofClient), []);
  });

  it('revokes the family of a replayed code (RFC 6749 4.1.2: every token of that code)', async () => {
    clock.tick();
    const { tokens, code, codeVerifier } = await signIn(service, rp, uniqueEmail('code-replay'));
    const replay = await fetch(service.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        code_verifier: codeVerifier,
        redirect_uri: rp.redirectUri,
        ...credentials(rp),
      }),
    });
    assert.equal(replay.status, 400);
    const after = await refresh(service, { refresh_token: tokens.refresh_token ?? '', ...credentials(rp) });
    assert.deepEqual([after.status, after.body.error], [400, 'invalid_grant']);
  });

  it('publishes refresh_token, offline_access, the acr values and the new endpoints in discovery', async () => {
    const metadata = await (await fetch(`${service.url}/.well-known/openid-configuration`)).json();
    assert.deepEqual(metadata.grant_types_supported, [
      'authorization_code',
      'refresh_token',
      'client_credentials',
      'urn:ietf:params:oauth:grant-type:device_code',
    ]);
    assert.deepEqual(metadata.scopes_supported, ['openid', 'email', 'offline_access', 'organization']);
    assert.deepEqual(metadata.acr_values_supported, [...ACR_VALUES]);
    assert.ok(metadata.claims_supported.includes('acr'));
    assert.equal(metadata.revocation_endpoint, `${service.url}/oauth/revoke`);
    assert.equal(metadata.end_session_endpoint, `${service.url}/logout`);
    // private_key_jwt is the token endpoint's alone (machine clients' client_credentials).
    assert.deepEqual(metadata.revocation_endpoint_auth_methods_supported, ['client_secret_basic', 'client_secret_post', 'none']);
  });
});
