/**
 * Attacks on the account center (/account): another site's page makes the user's browser post an
 * account action (CSRF: no token, a wrong one, another session's, a foreign Origin or
 * Sec-Fetch-Site); a user names another user's device or passkey; a session whose sign-in is
 * old does a sensitive action; the page is framed; a planted, forged or altered session cookie;
 * a sign-in finished in another browser (login CSRF). Every refusal changes nothing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ACCOUNT_RECENT_SIGN_IN_SECONDS } from '../../src/defaults.js';
import {
  accountAction,
  accountCallback,
  accountProof,
  accountSession,
  accountSuite,
  accountUser,
  mailedCodes,
  nextMailCode,
} from '../support/account-helpers.js';
import type { TestService } from '../support/helpers.js';

/** A proof's fields as a form carries them: the action is refused before they are looked at. */
const PROOF = { session: 'mfa_unknown', code: '123456' };

describe('account center security', () => {
  let service: TestService;
  const { clock } = accountSuite((started) => {
    service = started;
  });

  const live = async (userId: string) => (await service.ctx.users.devices(userId)).filter((d) => d.removedAt === null).map((d) => d.id);
  const exists = async (email: string) =>
    service.ctx.users.find(email).then(
      () => true,
      () => false,
    );
  const page = (session: string) =>
    fetch(`${service.url}/account`, { headers: { cookie: `service_account=${session}` }, redirect: 'manual' });

  it('signs in through /authorize as the account client; the cookie is HttpOnly, SameSite=Lax (a link from an app on another site opens the page); the page lists this device and is never framed', async () => {
    const user = await accountUser(service, clock, 2);
    const { authorize, sessionLine, session, answer } = await accountCallback(service, user, { now: clock.now });
    assert.equal(answer.status, 303);
    assert.equal(authorize.searchParams.get('client_id'), 'cli_account_center');
    assert.equal(authorize.searchParams.get('prompt'), null, 'the SSO session may open the page');
    assert.match(sessionLine ?? '', /; HttpOnly/);
    assert.match(sessionLine ?? '', /; SameSite=Lax/);
    const shown = await page(session as string);
    assert.equal(shown.status, 200);
    assert.match(shown.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
    assert.equal(shown.headers.get('x-frame-options'), 'DENY');
    const html = await shown.text();
    assert.match(html, /This device/);
    for (const id of user.deviceIds) assert.ok(html.includes(`data-device="${id}"`), id);
    const discovery = await (await fetch(`${service.url}/.well-known/openid-configuration`)).json();
    assert.equal(discovery.account_url, `${service.url}/account`, 'discovery names the account page');
    const fresh = await accountCallback(service, user, { now: clock.now, fresh: true });
    assert.equal(fresh.authorize.searchParams.get('prompt'), 'login', 'a sensitive action re-prompts');
  });

  it('CSRF: every account action without its token, with a wrong or another session’s, or from another origin is refused and changes nothing', async () => {
    const user = await accountUser(service, clock, 2);
    const session = await accountSession(service, user, clock.now);
    const other = await accountSession(service, await accountUser(service, clock), clock.now);
    const attacks: Record<string, string | undefined>[] = [
      { csrf: undefined },
      { csrf: 'x'.repeat(43) },
      { csrf: other.csrfToken },
      { origin: 'https://evil.example' },
      { origin: 'null' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
    ];
    const actions: [string, Record<string, string>][] = [
      ['devices/revoke', { device: user.deviceIds[1] as string }],
      ['devices/revoke-others', {}],
      ['export', PROOF],
      ['delete', { ...PROOF, confirm: user.email }],
      ['signout', {}],
    ];
    for (const [action, fields] of actions)
      for (const override of attacks) {
        const answer = await accountAction(service, session, action, fields, override);
        assert.equal(answer.status, 403, `${action} ${JSON.stringify(override)}`);
        assert.ok(!(await answer.text()).includes(user.email), 'nothing of the account leaks');
      }
    assert.deepEqual((await live(user.userId)).sort(), [...user.deviceIds].sort());
    assert.equal(await exists(user.email), true);
    assert.equal((await page(session.session)).status, 200, 'the session is still there');
  });

  it("another user's device or passkey id: 404, nothing changed", async () => {
    const victim = await accountUser(service, clock, 1);
    const attacker = await accountUser(service, clock, 1);
    const session = await accountSession(service, attacker, clock.now);
    for (const id of [victim.deviceId, 'dev_doesnotexist']) {
      const answer = await accountAction(service, session, 'devices/revoke', { device: id });
      assert.equal(answer.status, 404, id);
    }
    assert.deepEqual(await live(victim.userId), [victim.deviceId]);
    assert.equal((await accountAction(service, session, 'devices/revoke', { device: '../x' })).status, 400);
  });

  it('a stale session: sensitive actions answer 403 asking for a fresh sign-in and change nothing; a fresh one does them', async () => {
    const user = await accountUser(service, clock, 3);
    const stale = await accountSession(service, user, clock.now, ACCOUNT_RECENT_SIGN_IN_SECONDS + 5);
    assert.equal((await page(stale.session)).status, 200, 'reading needs no fresh sign-in');
    for (const [action, fields] of [
      ['devices/revoke', { device: user.deviceIds[1] as string }],
      ['devices/revoke-others', {}],
      ['export', PROOF],
      ['delete', { ...PROOF, confirm: user.email }],
    ] as const) {
      const answer = await accountAction(service, stale, action, fields);
      assert.equal(answer.status, 403, action);
      assert.match(await answer.text(), /sign in again/i);
    }
    assert.equal((await live(user.userId)).length, 3);
    assert.equal(await exists(user.email), true);

    const fresh = await accountSession(service, user, clock.now);
    assert.equal((await accountAction(service, fresh, 'devices/revoke', { device: user.deviceIds[1] as string })).status, 303);
    assert.deepEqual((await live(user.userId)).sort(), [user.deviceIds[0], user.deviceIds[2]].sort());
    assert.equal((await accountAction(service, fresh, 'devices/revoke-others')).status, 303);
    assert.deepEqual(await live(user.userId), [user.deviceId], 'this device stays');
  });

  it('a planted, forged or altered cookie opens nothing; a revoked device or a deleted user ends the session', async () => {
    const user = await accountUser(service, clock, 2);
    const other = await accountUser(service, clock, 1);
    const { session } = await accountSession(service, user, clock.now);
    const [userId, deviceId, ...rest] = session.split('.');
    assert.ok(userId && deviceId);
    for (const forged of [
      'x'.repeat(60),
      [other.userId, deviceId, ...rest].join('.'),
      [userId, other.deviceId, ...rest].join('.'),
      `${session.slice(0, -2)}AA`,
    ]) {
      const answer = await page(forged);
      assert.equal(answer.status, 303, forged);
      assert.equal(answer.headers.get('location'), '/account/signin');
      assert.equal((await fetch(`${service.url}/account/session`, { headers: { cookie: `service_account=${forged}` } })).status, 400);
    }
    // Login CSRF: a callback with another browser's state or login cookie opens no session.
    assert.equal((await accountCallback(service, user, { now: clock.now, state: 'x'.repeat(43) })).session, undefined);
    assert.equal((await accountCallback(service, user, { now: clock.now, loginCookie: 'a.b' })).answer.status, 403);
    assert.equal(
      (await accountCallback(service, { ...user, deviceId: null }, { now: clock.now })).session,
      undefined,
      'bound to what signed in',
    );

    const second = await accountSession(service, { userId: user.userId, deviceId: user.deviceIds[1] as string }, clock.now);
    await service.ctx.users.revokeDevice(user.deviceIds[1] as string, 'cli');
    assert.equal((await page(second.session)).status, 303, "a revoked device's session is over");
    assert.equal((await page(session)).status, 200);
  });

  it("sign out of an app: its refresh tokens end, another app's stay; an app the user never used or the service's own is 404", async () => {
    const user = await accountUser(service, clock, 1);
    const other = await service.ctx.clients.create({ name: 'Other app', origins: ['http://other.test:3000'] });
    await service.ctx.clients.recordSignIn(service.clientId, user.userId);
    await service.ctx.clients.recordSignIn(other.clientId, user.userId);
    const family = (clientId: string) => ({
      id: `jti_${clientId}_${user.userId}`,
      clientId,
      userId: user.userId,
      deviceId: user.deviceId,
      scope: 'openid offline_access',
      amr: ['hwk'],
      authTime: Math.floor(clock.now() / 1000),
    });
    await service.ctx.refreshTokens.issue(family(service.clientId));
    await service.ctx.refreshTokens.issue(family(other.clientId));
    const revoked = async (clientId: string) =>
      (
        await service.ctx.db
          .selectFrom('refresh_token_families')
          .select('revoked_at')
          .where('id', '=', family(clientId).id)
          .executeTakeFirstOrThrow()
      ).revoked_at !== null;
    const session = await accountSession(service, user, clock.now);
    const stranger = await service.ctx.clients.create({ name: 'Never used', origins: ['http://never.test:3000'] });
    for (const client of [stranger.clientId, 'cli_hosted_signin', 'cli_account_center'])
      assert.equal((await accountAction(service, session, 'apps/signout', { client })).status, 404, client);
    assert.equal((await accountAction(service, session, 'apps/signout', { client: service.clientId }, { csrf: undefined })).status, 403);
    assert.equal(await revoked(service.clientId), false);
    assert.equal((await accountAction(service, session, 'apps/signout', { client: service.clientId })).status, 303);
    assert.equal(await revoked(service.clientId), true);
    assert.equal(await revoked(other.clientId), false, "the other app's tokens stay");
    const { events } = await service.ctx.events.list({ userId: user.userId, type: 'account.app_signed_out', limit: 5 });
    assert.equal(events[0]?.clientId, service.clientId);
  });

  it('export (after a fresh proof: the emailed stand-in for a user without a second factor) is the operator’s document as a download; delete needs the typed address and its own proof, then the account and the session are gone', async () => {
    const user = await accountUser(service, clock, 1);
    const session = await accountSession(service, user, clock.now);
    const seen = await mailedCodes(service, user.email);
    const opened = await accountProof(service, session, 'export');
    assert.equal(opened.status, 200);
    const exported = await accountAction(service, session, 'export', {
      session: opened.sessionId,
      code: await nextMailCode(service, user.email, seen),
    });
    assert.equal(exported.status, 200);
    assert.match(exported.headers.get('content-disposition') ?? '', /^attachment; filename="my-account.json"/);
    const body = await exported.json();
    assert.equal(body.account.email, user.email);
    assert.deepEqual(Object.keys(body).sort(), Object.keys(await service.ctx.users.export(user.userId)).sort());

    assert.equal((await accountProof(service, session, 'delete', { confirm: 'someone@else.example' })).status, 400);
    clock.tick();
    const before = await mailedCodes(service, user.email);
    const proof = await accountProof(service, session, 'delete', { confirm: user.email });
    const code = await nextMailCode(service, user.email, before);
    const wrong = await accountAction(service, session, 'delete', { confirm: 'someone@else.example', session: proof.sessionId, code });
    assert.equal(wrong.status, 400);
    assert.equal(await exists(user.email), true);
    const deleted = await accountAction(service, session, 'delete', { confirm: user.email.toUpperCase(), session: proof.sessionId, code });
    assert.equal(deleted.status, 200);
    assert.match(deleted.headers.get('set-cookie') ?? '', /service_account=; Path=\/account; Max-Age=0/);
    assert.equal(await exists(user.email), false);
    assert.equal((await page(session.session)).status, 303, 'the session ends with the account');
  });
});
