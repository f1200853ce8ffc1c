/**
 * Rotating a confidential application's secret key (POST /admin/v1/clients/{id}/secret, the
 * console's button, `clients rotate-secret`): a viewer forging an admin's call, a cross-site
 * page (CSRF), a caller without an admin key and bad input are refused and change nothing; an
 * admin's rotation answers the new secret once, names the operator, and from then on the token
 * endpoint refuses the old secret (no grace: docs/operations.md) and takes the new one, for
 * codes and refresh tokens issued before the rotation too.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CONSOLE_CLIENT_ID } from '../../src/clients/service.js';
import { createClientStore } from '../../src/clients/store.js';
import { consoleCall, operatorSession } from '../support/console-helpers.js';
import { startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import { redeem } from '../support/oidc-helpers.js';
import { type RelyingParty, refresh, relyingParty, signIn, signInForCode } from '../support/oidc-token-helpers.js';

describe('console: rotate an application secret', () => {
  let service: TestService;
  let rp: RelyingParty;
  before(async () => {
    service = await startTestService({ testMode: true });
    rp = await relyingParty(service, { name: 'Shop backend' });
  });
  after(async () => service.close());

  const storedHash = async (clientId: string) => (await createClientStore(service.ctx.db).findWithSecretHash(clientId))?.secretKeyHash;
  const rotations = async () =>
    (await service.ctx.events.list({ type: 'client.updated', limit: 50 })).events.filter((e) => e.detail?.secretKey === 'rotated');

  it('a viewer forging the call, a cross-site page, no key or a bad key: refused and the secret unchanged', async () => {
    const before = await storedHash(rp.clientId);
    const viewer = await operatorSession(service, 'viewer');
    const forged = await consoleCall(service, viewer, 'POST', `/clients/${rp.clientId}/secret`);
    assert.equal(forged.status, 403);
    assert.equal(forged.body.code, 'ERR_FORBIDDEN');
    const admin = await operatorSession(service, 'admin');
    for (const override of [
      { 'x-console-csrf': undefined },
      { 'x-console-csrf': 'x'.repeat(43) },
      { origin: 'https://evil.example' },
      { 'sec-fetch-site': 'cross-site' },
    ]) {
      const answer = await consoleCall(service, admin, 'POST', `/clients/${rp.clientId}/secret`, override);
      assert.equal(answer.status, 403, JSON.stringify(override));
      assert.equal(answer.body.secretKey, undefined);
    }
    for (const headers of [{}, { authorization: 'Bearer adm_nope' }, { authorization: `Bearer ${rp.secretKey}` }] as Record<
      string,
      string
    >[]) {
      const answer = await fetch(`${service.url}/admin/v1/clients/${rp.clientId}/secret`, { method: 'POST', headers });
      assert.equal(answer.status, 401);
      assert.doesNotMatch(await answer.text(), /sk_/);
    }
    assert.equal(await storedHash(rp.clientId), before);
    assert.equal((await rotations()).length, 0);
  });

  it('bad input: a malformed or unknown id, a public client or a built-in one is a 4xx and changes nothing', async () => {
    const admin = await operatorSession(service, 'admin');
    const spa = await relyingParty(service, { name: 'SPA', public: true, redirectUri: 'https://spa.example/cb' });
    const spaHash = await storedHash(spa.clientId);
    const cases: Array<[string, number]> = [
      ['a%20b', 400],
      ['x'.repeat(101), 400],
      ["cli_'--", 400],
      ['cli_unknown', 404],
      [CONSOLE_CLIENT_ID, 404],
      [spa.clientId, 400],
    ];
    for (const [id, status] of cases) {
      const answer = await consoleCall(service, admin, 'POST', `/clients/${id}/secret`);
      assert.equal(answer.status, status, id);
      assert.equal(answer.body.secretKey, undefined, id);
    }
    assert.equal(await storedHash(spa.clientId), spaHash);
    assert.equal((await rotations()).length, 0);
  });

  it("an admin's rotation: the new secret shown once, the event names the operator, the old secret refused at once, the new one taken", async () => {
    const email = uniqueEmail('shopper');
    // Issued before the rotation: a code not yet redeemed and a refresh token.
    const pending = await signInForCode(service, rp, email);
    const earlier = await signIn(service, rp, email, { browser: pending.browser });
    const admin = await operatorSession(service, 'admin');
    const answer = await consoleCall(service, admin, 'POST', `/clients/${rp.clientId}/secret`);
    assert.equal(answer.status, 200);
    assert.equal(answer.body.clientId, rp.clientId);
    const secretKey: string = answer.body.secretKey;
    assert.match(secretKey, /^sk_/);
    assert.notEqual(secretKey, rp.secretKey);
    const events = await rotations();
    assert.equal(events.length, 1);
    assert.equal(events[0]?.actor, `operator:${admin.email}`);
    assert.equal(events[0]?.clientId, rp.clientId);
    assert.doesNotMatch(JSON.stringify(events), new RegExp(secretKey), 'the event never holds the secret');
    // Stored as its keyed hash, never as itself.
    assert.equal(await storedHash(rp.clientId), service.ctx.clients.secretKeyHash(secretKey));

    const code = { code: pending.code, redirect_uri: rp.redirectUri, code_verifier: pending.codeVerifier, client_id: rp.clientId };
    const old = await redeem(service, { ...code, client_secret: rp.secretKey as string });
    assert.equal(old.status, 401);
    assert.equal((old.body as { error: string }).error, 'invalid_client');
    const refreshed = { refresh_token: earlier.tokens.refresh_token as string, client_id: rp.clientId };
    assert.equal((await refresh(service, { ...refreshed, client_secret: rp.secretKey as string })).status, 401);
    assert.equal((await service.ctx.clients.authenticateBackend(rp.clientId, rp.secretKey as string)) === undefined, true);

    const redeemed = await redeem(service, { ...code, client_secret: secretKey });
    assert.equal(redeemed.status, 200, JSON.stringify(redeemed.body));
    assert.equal((await refresh(service, { ...refreshed, client_secret: secretKey })).status, 200);
    const fresh = await signIn(service, { ...rp, secretKey }, email, { browser: pending.browser });
    assert.ok(fresh.tokens.access_token);
  });
});
