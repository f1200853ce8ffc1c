/**
 * The account center's linked identities (/account, /account/identities/unlink): the page lists
 * the user's own; an unlink without the session token, of another user's identity, or from a
 * sign-in too old changes nothing; the user's own unlink is recorded as identity.unlinked.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ACCOUNT_RECENT_SIGN_IN_SECONDS } from '../../src/defaults.js';
import { createUpstreamStore } from '../../src/factors/upstream/store.js';
import { accountAction, accountSession, accountSuite, accountUser } from '../support/account-helpers.js';
import type { TestService } from '../support/helpers.js';

describe('account center linked identities security', () => {
  let service: TestService;
  const { clock } = accountSuite((started) => {
    service = started;
  });

  const link = (userId: string, subject: string) =>
    createUpstreamStore(service.ctx.db).link({
      connectionId: 'con_google',
      subject,
      userId,
      email: `${subject}@gmail.example`,
      name: 'Ada Upstream',
      linkedAt: clock.now(),
      lastUsedAt: null,
      tokensSealed: null,
    });
  const linked = async (userId: string) => (await service.ctx.upstream.list(userId)).map((i) => i.subject);

  it('lists the own identities with an Unlink form and unlinks one, recorded as identity.unlinked by the user', async () => {
    const user = await accountUser(service, clock);
    await link(user.userId, 'sub-own');
    const who = await accountSession(service, user, clock.now);
    const html = await (await fetch(`${service.url}/account`, { headers: { cookie: `service_account=${who.session}` } })).text();
    assert.ok(html.includes('data-identity="con_google"'));
    assert.match(html, /sub-own@gmail\.example/);
    assert.match(html, /Ada Upstream/);
    assert.match(html, /action="\/account\/identities\/unlink"/);
    const answer = await accountAction(service, who, 'identities/unlink', { connection: 'con_google', subject: 'sub-own' });
    assert.equal(answer.status, 303);
    assert.deepEqual(await linked(user.userId), []);
    const { events } = await service.ctx.events.list({ userId: user.userId, limit: 10 });
    const unlinked = events.find((e) => e.type === 'identity.unlinked');
    assert.equal((unlinked?.detail as { actor?: string } | null)?.actor, `user:${user.userId}`);
  });

  it('refuses an unlink without the session token or from another origin (CSRF): nothing changes', async () => {
    const user = await accountUser(service, clock);
    await link(user.userId, 'sub-csrf');
    const who = await accountSession(service, user, clock.now);
    const fields = { connection: 'con_google', subject: 'sub-csrf' };
    assert.equal((await accountAction(service, who, 'identities/unlink', fields, { csrf: undefined })).status, 403);
    assert.equal((await accountAction(service, who, 'identities/unlink', fields, { csrf: 'forged' })).status, 403);
    assert.equal((await accountAction(service, who, 'identities/unlink', fields, { origin: 'https://evil.example' })).status, 403);
    assert.equal((await accountAction(service, who, 'identities/unlink', fields, { 'sec-fetch-site': 'cross-site' })).status, 403);
    assert.deepEqual(await linked(user.userId), ['sub-csrf']);
  });

  it("answers 404 for another user's identity and changes nothing", async () => {
    const victim = await accountUser(service, clock);
    await link(victim.userId, 'sub-victim');
    const attacker = await accountUser(service, clock);
    const who = await accountSession(service, attacker, clock.now);
    const answer = await accountAction(service, who, 'identities/unlink', { connection: 'con_google', subject: 'sub-victim' });
    assert.equal(answer.status, 404);
    assert.deepEqual(await linked(victim.userId), ['sub-victim']);
    const html = await (await fetch(`${service.url}/account`, { headers: { cookie: `service_account=${who.session}` } })).text();
    assert.ok(!html.includes('sub-victim'), "another user's identity is never shown");
  });

  it('refuses an unlink from a stale sign-in (403, sign in again): nothing changes', async () => {
    const user = await accountUser(service, clock);
    await link(user.userId, 'sub-stale');
    const who = await accountSession(service, user, clock.now, ACCOUNT_RECENT_SIGN_IN_SECONDS + 60);
    const answer = await accountAction(service, who, 'identities/unlink', { connection: 'con_google', subject: 'sub-stale' });
    assert.equal(answer.status, 403);
    assert.match(await answer.text(), /signin\?fresh=1/);
    assert.deepEqual(await linked(user.userId), ['sub-stale']);
  });
});
