/**
 * Attacks on the operator console's session (/admin, and its use of /admin/v1): another site's
 * page makes the operator's browser call the admin API (CSRF: no token, a wrong token, a foreign
 * Origin or Sec-Fetch-Site); someone who is not an operator, or signed in without a second
 * factor, finishes the console's sign-in; a sign-in is finished in another browser (login CSRF);
 * a removed operator, a disabled user or a revoked device keeps using a live session; a viewer
 * forges an admin's call; a session outlives its idle limit; the console is framed. Every
 * refusal changes nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CONSOLE_SESSION_IDLE_TIMEOUT_SECONDS } from '../../src/defaults.js';
import { consoleCall, consoleCallback, consoleUser, operatorSession } from '../support/console-helpers.js';
import { startTestService, type TestService } from '../support/helpers.js';

describe('operator console session security', () => {
  let service: TestService;
  let offset = 0;
  before(async () => {
    service = await startTestService({ testMode: true, now: () => Date.now() + offset });
  });
  after(() => service.close());

  const disabled = async (userId: string) => (await service.ctx.users.show(userId)).disabledAt !== null;

  it('CSRF: a console call without its token, with a wrong one, or from another origin is refused and changes nothing', async () => {
    const admin = await operatorSession(service, 'admin');
    const victim = await consoleUser(service);
    const attacks: Record<string, string | undefined>[] = [
      { 'x-console-csrf': undefined },
      { 'x-console-csrf': 'x'.repeat(43) },
      { 'x-console-csrf': (await operatorSession(service, 'admin')).csrfToken },
      { origin: 'https://evil.example' },
      { origin: 'null' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
    ];
    for (const override of attacks) {
      const answer = await consoleCall(service, admin, 'POST', `/users/${victim.userId}/disable`, override);
      assert.equal(answer.status, 403, JSON.stringify(override));
      assert.equal(answer.body.code, 'ERR_FORBIDDEN');
      assert.equal(await disabled(victim.userId), false, JSON.stringify(override));
    }
    // Reads need the token too: another site's page cannot even probe.
    assert.equal((await consoleCall(service, admin, 'GET', '/users', { 'x-console-csrf': undefined })).status, 403);
    const done = await consoleCall(service, admin, 'POST', `/users/${victim.userId}/disable`);
    assert.equal(done.status, 200);
    assert.equal(await disabled(victim.userId), true);
    const { events } = await service.ctx.events.list({ userId: victim.userId, type: 'user.disabled', limit: 5 });
    assert.equal(events[0]?.actor, `operator:${admin.email}`, 'the event names the operator');
  });

  it('the session cookie is HttpOnly and SameSite=Strict; sign-out needs the token and ends the session', async () => {
    const user = await consoleUser(service, 'admin');
    const { sessionLine, session, authorize } = await consoleCallback(service, user, ['otp', 'mfa', 'totp']);
    assert.match(sessionLine ?? '', /; HttpOnly/);
    assert.match(sessionLine ?? '', /; SameSite=Strict/);
    assert.equal(authorize.searchParams.get('prompt'), 'login', 'the console always asks for a fresh sign-in');
    const cookie = `service_console=${session}`;
    const forged = await fetch(`${service.url}/admin/signout`, { method: 'POST', headers: { cookie, origin: service.url } });
    assert.equal(forged.status, 403);
    assert.equal((await fetch(`${service.url}/admin/session`, { headers: { cookie } })).status, 200, 'a forged sign-out ends nothing');
    const { csrfToken } = await (await fetch(`${service.url}/admin/session`, { headers: { cookie } })).json();
    const out = await fetch(`${service.url}/admin/signout`, {
      method: 'POST',
      headers: { cookie, origin: service.url, 'x-console-csrf': csrfToken },
    });
    assert.equal(out.status, 204);
    assert.equal((await fetch(`${service.url}/admin/session`, { headers: { cookie } })).status, 401);
  });

  it("a non-operator's sign-in, or one without a second factor, opens no session and is recorded", async () => {
    const stranger = await consoleUser(service);
    const refused = await consoleCallback(service, stranger, ['otp', 'mfa', 'totp']);
    assert.equal(refused.answer.status, 403);
    assert.equal(refused.session, undefined);
    assert.match(await refused.answer.text(), /not an operator/);
    const { events } = await service.ctx.events.list({ userId: stranger.userId, type: 'operator.refused', limit: 5 });
    assert.equal(events[0]?.detail?.reason, 'not_operator');

    const operator = await consoleUser(service, 'admin');
    for (const amr of [['otp'], ['swk'], ['hwk']]) {
      const single = await consoleCallback(service, operator, amr);
      assert.equal(single.answer.status, 403, amr.join(' '));
      assert.equal(single.session, undefined);
    }
    const noDevice = await consoleCallback(service, { ...operator, deviceId: null }, ['otp', 'mfa', 'totp']);
    assert.equal(noDevice.session, undefined, 'a session is bound to what signed in: none without one');
  });

  it('login CSRF: a callback with another browser’s state or login cookie is refused', async () => {
    const operator = await consoleUser(service, 'admin');
    assert.equal((await consoleCallback(service, operator, ['otp', 'mfa', 'totp'], { state: 'x'.repeat(43) })).answer.status, 403);
    assert.equal((await consoleCallback(service, operator, ['otp', 'mfa', 'totp'], { loginCookie: 'a.b' })).answer.status, 403);
    assert.equal((await consoleCallback(service, operator, ['otp', 'mfa', 'totp'], { loginCookie: '' })).session, undefined);
  });

  it("a removed operator's, a disabled user's or a revoked device's live session stops at the next call", async () => {
    const removed = await operatorSession(service, 'admin');
    assert.equal((await consoleCall(service, removed, 'GET', '/users')).status, 200);
    await service.ctx.operators.remove(removed.email, 'cli');
    const after = await consoleCall(service, removed, 'GET', '/users');
    assert.equal(after.status, 401);
    assert.equal(after.body.code, 'ERR_ADMIN_KEY_INVALID');
    // Added again: the old session stays ended (removing ended it).
    await service.ctx.operators.add({ email: removed.email, role: 'admin' }, 'cli');
    assert.equal((await consoleCall(service, removed, 'GET', '/users')).status, 401);

    const demoted = await operatorSession(service, 'admin');
    await service.ctx.operators.add({ email: demoted.email, role: 'viewer' }, 'cli');
    assert.equal(
      (await consoleCall(service, demoted, 'POST', `/users/${demoted.userId}/disable`)).status,
      403,
      'a role change applies at once',
    );

    const revokedDevice = await operatorSession(service, 'admin');
    await service.ctx.users.revokeDevice(revokedDevice.deviceId, 'cli');
    assert.equal((await consoleCall(service, revokedDevice, 'GET', '/users')).status, 401);

    const disabledUser = await operatorSession(service, 'admin');
    await service.ctx.users.disable(disabledUser.userId, 'cli');
    assert.equal((await consoleCall(service, disabledUser, 'GET', '/users')).status, 401);
  });

  it('a viewer reads but cannot act: every change is refused before it runs', async () => {
    const viewer = await operatorSession(service, 'viewer');
    const victim = await consoleUser(service);
    assert.equal((await consoleCall(service, viewer, 'GET', `/users/${victim.userId}`)).status, 200);
    const forged = [
      ['POST', `/users/${victim.userId}/disable`],
      ['DELETE', `/users/${victim.userId}`],
      ['POST', `/devices/${victim.deviceId}/revoke`],
      ['POST', '/operators', { email: viewer.email, role: 'admin' }],
      ['POST', '/admin-keys', { name: 'mine' }],
      ['POST', '/signing-keys/rotate'],
      ['POST', '/webhooks', { url: 'https://example.com/hook', events: ['all'] }],
    ] as const;
    for (const [method, path, body] of forged) {
      const answer = await consoleCall(service, viewer, method, path, {}, body);
      assert.equal(answer.status, 403, `${method} ${path}`);
      assert.equal(answer.body.code, 'ERR_FORBIDDEN');
    }
    assert.equal(await disabled(victim.userId), false);
    assert.equal((await service.ctx.operators.findByEmail(viewer.email))?.role, 'viewer');
    assert.equal(
      (await service.ctx.adminKeys.list()).some((k) => k.name === 'mine'),
      false,
    );
  });

  it('a session unused for its idle limit is over', async () => {
    const idle = await operatorSession(service, 'admin');
    offset = (CONSOLE_SESSION_IDLE_TIMEOUT_SECONDS + 1) * 1000;
    try {
      assert.equal((await consoleCall(service, idle, 'GET', '/users')).status, 401);
    } finally {
      offset = 0;
    }
  });

  it('framing: the console and its refusal page forbid every frame', async () => {
    const { session } = await operatorSession(service, 'admin');
    const page = await fetch(`${service.url}/admin`, { headers: { cookie: `service_console=${session}` } });
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
    assert.match(page.headers.get('content-security-policy') ?? '', /script-src 'self';/);
    assert.doesNotMatch(page.headers.get('content-security-policy') ?? '', /unsafe-inline|unsafe-eval/);
    assert.equal(page.headers.get('x-frame-options'), 'DENY');
    const refused = await consoleCallback(service, await consoleUser(service), ['otp', 'mfa', 'totp']);
    assert.match(refused.answer.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
    const anonymous = await fetch(`${service.url}/admin`, { redirect: 'manual' });
    assert.equal(anonymous.status, 303);
    assert.equal(anonymous.headers.get('location'), '/admin/signin');
  });
});
