/**
 * Attack: a refresh token is stolen (a leaked log, a compromised app server, a public client's
 * storage) and used by the thief alongside the app. Each token works once (rotation, RFC 9700
 * 4.14.2), so one of the two presents a spent token: the whole family is then revoked, the
 * successor the other one got included, and both must sign the user in again. Presented at
 * the same instant (two requests racing), exactly one wins and the reuse still revokes the
 * family. Attack: a token presented by another client (refresh across clients) is refused,
 * and does not cost its owner anything. Runs on SQLite and PostgreSQL (helpers.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sendClock, type TestService, uniqueEmail } from '../support/helpers.js';
import {
  credentials,
  type RelyingParty,
  refresh,
  relyingParty,
  signIn,
  startWithRelyingParties,
  userinfoStatus,
} from '../support/oidc-token-helpers.js';

describe('refresh token reuse and theft', () => {
  let service: TestService;
  const clock = sendClock();
  let rp: RelyingParty;
  let other: RelyingParty;
  let spa: RelyingParty;
  before(async () => {
    ({ service, rp, other, spa } = await startWithRelyingParties(clock.now));
  });
  after(() => service.close());

  it('revokes the whole family when a spent token comes back, the successor and its access token included', async () => {
    clock.tick();
    const { tokens } = await signIn(service, rp, uniqueEmail('reuse'));
    const stolen = tokens.refresh_token ?? '';
    const app = await refresh(service, { refresh_token: stolen, ...credentials(rp) });
    assert.equal(app.status, 200);
    assert.equal(await userinfoStatus(service, app.body.access_token), 200);

    const thief = await refresh(service, { refresh_token: stolen, ...credentials(rp) });
    assert.deepEqual([thief.status, thief.body.error], [400, 'invalid_grant']);
    const successor = await refresh(service, { refresh_token: app.body.refresh_token, ...credentials(rp) });
    assert.deepEqual([successor.status, successor.body.error], [400, 'invalid_grant'], 'the family is gone');
    assert.equal(await userinfoStatus(service, app.body.access_token), 401, 'its live access token too');
    assert.equal(await userinfoStatus(service, tokens.access_token ?? ''), 401);

    const events = await service.ctx.events.list({ type: 'refresh_token.reused', limit: 10 });
    assert.equal(events.events.length, 1, 'the reuse is in the audit trail');
  });

  it('lets exactly one of concurrent uses of a token win, and the others revoke the family', async () => {
    clock.tick();
    const { tokens } = await signIn(service, spa, uniqueEmail('race'));
    const token = tokens.refresh_token ?? '';
    const answers = await Promise.all(Array.from({ length: 4 }, () => refresh(service, { refresh_token: token, client_id: spa.clientId })));
    const winners = answers.filter((a) => a.status === 200);
    assert.equal(winners.length, 1, JSON.stringify(answers.map((a) => a.status)));
    for (const loser of answers.filter((a) => a.status !== 200)) assert.deepEqual([loser.status, loser.body.error], [400, 'invalid_grant']);
    const next = await refresh(service, { refresh_token: winners[0]?.body.refresh_token, client_id: spa.clientId });
    assert.deepEqual([next.status, next.body.error], [400, 'invalid_grant'], 'the winner`s successor was revoked with the family');
  });

  it('refuses a token presented by another client, and the owner keeps using it', async () => {
    clock.tick();
    const { tokens } = await signIn(service, rp, uniqueEmail('cross-client'));
    const token = tokens.refresh_token ?? '';
    const crossed = await refresh(service, { refresh_token: token, ...credentials(other) });
    assert.deepEqual([crossed.status, crossed.body.error], [400, 'invalid_grant']);
    const asPublic = await refresh(service, { refresh_token: token, client_id: spa.clientId });
    assert.deepEqual([asPublic.status, asPublic.body.error], [400, 'invalid_grant']);
    // Naming the owner without its secret is not authentication.
    const noSecret = await refresh(service, { refresh_token: token, client_id: rp.clientId });
    assert.deepEqual([noSecret.status, noSecret.body.error], [401, 'invalid_client']);
    const owner = await refresh(service, { refresh_token: token, ...credentials(rp) });
    assert.equal(owner.status, 200, 'not spent, not revoked');
  });

  it('refuses a public client`s token to another public client naming itself', async () => {
    clock.tick();
    const otherSpa = await relyingParty(service, { name: 'Other SPA', public: true, redirectUri: 'https://spa2.example/cb' });
    const { tokens } = await signIn(service, spa, uniqueEmail('public-cross'));
    const crossed = await refresh(service, { refresh_token: tokens.refresh_token ?? '', client_id: otherSpa.clientId });
    assert.deepEqual([crossed.status, crossed.body.error], [400, 'invalid_grant']);
    assert.equal((await refresh(service, { refresh_token: tokens.refresh_token ?? '', client_id: spa.clientId })).status, 200);
  });

  it('stores only keyed hashes of refresh tokens', async () => {
    clock.tick();
    const { tokens } = await signIn(service, rp, uniqueEmail('at-rest'));
    const rows = await service.ctx.db.selectFrom('refresh_tokens').select('id').execute();
    assert.ok(rows.length > 0);
    for (const row of rows) assert.ok(!row.id.startsWith('rt_') && row.id !== tokens.refresh_token);
  });
});
