/**
 * Token revocation (RFC 7009). Attack: an app revokes, or probes, tokens of another app. The
 * client authenticates as at the token endpoint; a token issued to another client is left
 * alone and answered exactly like an unknown one (200, empty object: RFC 7009 2.2), so the
 * endpoint neither revokes nor confirms anyone else's tokens. Revoking a refresh token ends its
 * family and the access tokens issued with it. Runs on SQLite and PostgreSQL (helpers.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sendClock, type TestService, uniqueEmail } from '../support/helpers.js';
import {
  credentials,
  type RelyingParty,
  refresh,
  revoke,
  signIn,
  startWithRelyingParties,
  userinfoStatus,
} from '../support/oidc-token-helpers.js';

describe('token revocation (RFC 7009)', () => {
  let service: TestService;
  const clock = sendClock();
  let rp: RelyingParty;
  let other: RelyingParty;
  let spa: RelyingParty;
  before(async () => {
    ({ service, rp, other, spa } = await startWithRelyingParties(clock.now));
  });
  after(() => service.close());

  it('revokes a refresh token`s family and its access tokens; the answer is 200 with no-store', async () => {
    clock.tick();
    const { tokens } = await signIn(service, rp, uniqueEmail('revoke'));
    const rotated = await refresh(service, { refresh_token: tokens.refresh_token ?? '', ...credentials(rp) });
    const revoked = await revoke(service, { token: rotated.body.refresh_token, token_type_hint: 'refresh_token', ...credentials(rp) });
    assert.equal(revoked.status, 200);
    assert.deepEqual(revoked.body, {});
    assert.equal(revoked.headers.get('cache-control'), 'no-store');
    const after = await refresh(service, { refresh_token: rotated.body.refresh_token, ...credentials(rp) });
    assert.deepEqual([after.status, after.body.error], [400, 'invalid_grant']);
    assert.equal(await userinfoStatus(service, rotated.body.access_token), 401);
    // Revoking again, or a spent token of the family, is still 200.
    assert.equal((await revoke(service, { token: tokens.refresh_token ?? '', ...credentials(rp) })).status, 200);
  });

  it('revokes an access token of the client (the hint is not needed)', async () => {
    clock.tick();
    const { tokens } = await signIn(service, spa, uniqueEmail('access'), { scope: 'openid email' });
    assert.equal(await userinfoStatus(service, tokens.access_token ?? ''), 200);
    const revoked = await revoke(service, { token: tokens.access_token ?? '', token_type_hint: 'refresh_token', client_id: spa.clientId });
    assert.equal(revoked.status, 200);
    assert.equal(await userinfoStatus(service, tokens.access_token ?? ''), 401);
  });

  it('answers 200 for unknown tokens, and for another client`s tokens without touching them', async () => {
    clock.tick();
    const { tokens } = await signIn(service, rp, uniqueEmail('probe'));
    assert.deepEqual(await revoke(service, { token: 'rt_unknown', ...credentials(other) }).then((r) => [r.status, r.body]), [200, {}]);
    assert.deepEqual(await revoke(service, { token: 'a.b.c', ...credentials(other) }).then((r) => [r.status, r.body]), [200, {}]);
    const probe = await revoke(service, { token: tokens.refresh_token ?? '', ...credentials(other) });
    assert.deepEqual([probe.status, probe.body], [200, {}], 'indistinguishable from an unknown token');
    const byPublic = await revoke(service, { token: tokens.access_token ?? '', client_id: spa.clientId });
    assert.deepEqual([byPublic.status, byPublic.body], [200, {}]);
    assert.equal(await userinfoStatus(service, tokens.access_token ?? ''), 200, 'the access token still works');
    assert.equal(
      (await refresh(service, { refresh_token: tokens.refresh_token ?? '', ...credentials(rp) })).status,
      200,
      'so does the refresh token',
    );
  });

  it('authenticates the client as the token endpoint does', async () => {
    clock.tick();
    const { tokens } = await signIn(service, rp, uniqueEmail('auth'));
    const token = tokens.refresh_token ?? '';
    const noSecret = await revoke(service, { token, client_id: rp.clientId });
    assert.deepEqual([noSecret.status, noSecret.body.error], [401, 'invalid_client']);
    const wrong = await revoke(service, { token, client_id: rp.clientId, client_secret: 'sk_wrong' });
    assert.deepEqual([wrong.status, wrong.body.error], [401, 'invalid_client']);
    const none = await revoke(service, { token });
    assert.deepEqual([none.status, none.body.error], [401, 'invalid_client']);
    const basic = `Basic ${Buffer.from(`${rp.clientId}:${rp.secretKey}`).toString('base64')}`;
    const two = await revoke(service, { token, client_secret: rp.secretKey ?? '' }, { authorization: basic });
    assert.deepEqual([two.status, two.body.error], [400, 'invalid_request']);
    assert.equal((await refresh(service, { refresh_token: token, ...credentials(rp) })).status, 200, 'nothing was revoked');
  });

  it('refuses a request without a token or not a form', async () => {
    const missing = await revoke(service, credentials(rp));
    assert.deepEqual([missing.status, missing.body.error], [400, 'invalid_request']);
    const json = await fetch(`${service.url}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: 'x', ...credentials(rp) }),
    });
    assert.deepEqual([json.status, (await json.json()).error], [400, 'invalid_request']);
  });
});
