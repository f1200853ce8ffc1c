/**
 * Organization invitations (organizations/invitations.ts, account-center/invitation-routes.ts):
 * the mailed, single-use, expiring link joins the invited address after its usual sign-in. Under
 * attack: the link used twice (one after the other, and both at once), by another address,
 * after it expired, after a revocation, and an old link after a resend; the token never kept in
 * clear. Runs on SQLite and, with SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { accountSession, accountSuite, accountUser } from '../support/account-helpers.js';
import type { TestService } from '../support/helpers.js';

describe('organization invitations: single use, one address, a short life', () => {
  let service: TestService;
  const { clock } = accountSuite((started) => {
    service = started;
  });

  async function invite(email: string, roles: string[] = []) {
    const org = await service.ctx.organizations.create({ name: `Acme ${Math.random().toString(36).slice(2, 6)}` }, 'test');
    if ((await service.ctx.organizations.roles()).length === 0) await service.ctx.organizations.createRole({ name: 'editor' }, 'test');
    const made = await service.ctx.invitations.invite(org.id, email, roles, 'test');
    return { org, made, link: await linkMailedTo(email) };
  }
  async function linkMailedTo(email: string) {
    const [mail] = await service.ctx.mailbox.list(1, email);
    const link = mail?.text.match(/https?:\/\/\S+\/account\/invitations\/accept\?token=\S+/)?.[0];
    assert.ok(link, `an invitation link mailed to ${email}`);
    return link as string;
  }
  /** Follows the link: the token moves into the cookie, out of the address bar. */
  async function follow(link: string) {
    const answer = await fetch(link, { redirect: 'manual' });
    assert.equal(answer.status, 303);
    assert.equal(answer.headers.get('location'), '/account/invitations');
    return (answer.headers.get('set-cookie') ?? '').split(';')[0] as string;
  }
  async function signedIn(who: { userId: string; deviceId: string }) {
    return accountSession(service, who, clock.now);
  }
  const accept = (invitation: string, session: { session: string; csrfToken: string }) =>
    fetch(`${service.url}/account/invitations/accept`, {
      method: 'POST',
      headers: {
        cookie: `service_account=${session.session}; ${invitation}`,
        origin: service.url,
        'sec-fetch-site': 'same-origin',
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ csrf: session.csrfToken }),
    });

  it('the invited address signs in and joins with the invitation’s roles; the token is stored only as a hash', async () => {
    const user = await accountUser(service, clock);
    const { org, made, link } = await invite(user.email, ['editor']);
    assert.deepEqual([made.state, made.roles, made.email], ['pending', ['editor'], user.email]);
    const [mail] = await service.ctx.mailbox.list(1, user.email);
    assert.match(mail?.text ?? '', /works once, for 72 hours/, 'the mail states the link’s lifetime (ORGANIZATION_INVITATION_TTL_HOURS)');
    const token = new URL(link).searchParams.get('token') as string;
    const stored = await service.ctx.db
      .selectFrom('organization_invitations')
      .selectAll()
      .where('id', '=', made.id)
      .executeTakeFirstOrThrow();
    assert.ok(!JSON.stringify(stored).includes(token), 'no clear token at rest');

    const cookie = await follow(link);
    const anonymous = await fetch(`${service.url}/account/invitations`, { headers: { cookie }, redirect: 'manual' });
    assert.deepEqual([anonymous.status, anonymous.headers.get('location')], [303, '/account/signin']);
    const session = await signedIn(user);
    const shown = await fetch(`${service.url}/account/invitations`, {
      headers: { cookie: `service_account=${session.session}; ${cookie}` },
    });
    assert.equal(shown.status, 200);
    assert.match(await shown.text(), new RegExp(`${org.name}.*${user.email.replace(/[.+]/g, '\\$&')}`, 's'));
    const joined = await accept(cookie, session);
    assert.equal(joined.status, 200);
    assert.deepEqual((await service.ctx.organizationAccess.membership(user.userId, org.id))?.roles, ['editor']);
    assert.equal((await service.ctx.invitations.list(org.id))[0]?.state, 'accepted');
  });

  it('an invitation accepted twice, or twice at once, joins once; the second is refused with a page', async () => {
    const user = await accountUser(service, clock);
    const { org, link } = await invite(user.email);
    const cookie = await follow(link);
    const session = await signedIn(user);
    const answers = await Promise.all([accept(cookie, session), accept(cookie, session), accept(cookie, session)]);
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 410, 410]);
    assert.equal((await accept(cookie, session)).status, 410);
    const { events } = await service.ctx.events.list({ userId: user.userId, type: 'organization.member_added', limit: 10 });
    assert.equal(events.filter((e) => e.detail?.organizationId === org.id).length, 1);
  });

  it('an invitation used by another address is refused, and stays for the invited one', async () => {
    const invited = await accountUser(service, clock);
    const other = await accountUser(service, clock);
    const { org, link } = await invite(invited.email);
    const cookie = await follow(link);
    const intruder = await signedIn(other);
    const page = await fetch(`${service.url}/account/invitations`, {
      headers: { cookie: `service_account=${intruder.session}; ${cookie}` },
    });
    assert.equal(page.status, 403);
    assert.equal((await accept(cookie, intruder)).status, 403);
    assert.equal(await service.ctx.organizationAccess.membership(other.userId, org.id), undefined);
    assert.equal((await accept(cookie, await signedIn(invited))).status, 200, 'still works for the invited address');
  });

  it('an expired link, a revoked one, and the old link after a resend are refused with nothing changed', async () => {
    const user = await accountUser(service, clock);
    const revoked = await invite(user.email);
    await service.ctx.invitations.revoke(revoked.org.id, revoked.made.id, 'test');
    const session = await signedIn(user);
    assert.equal((await accept(await follow(revoked.link), session)).status, 410);

    const resent = await invite(user.email);
    clock.tick();
    await service.ctx.invitations.resend(resent.org.id, resent.made.id, 'test');
    const fresh = await linkMailedTo(user.email);
    assert.notEqual(fresh, resent.link);
    assert.equal((await accept(await follow(resent.link), session)).status, 410, 'the old link');

    const expired = await invite(user.email);
    const cookie = await follow(expired.link);
    // 73 hours on: the link's 72 are over (a fresh account session, the old one having ended too).
    (clock as { at: number }).at += 73 * 60 * 60 * 1000;
    assert.equal((await accept(cookie, await signedIn(user))).status, 410);
    for (const org of [revoked.org.id, expired.org.id])
      assert.equal(await service.ctx.organizationAccess.membership(user.userId, org), undefined);
    // The resent link expired with the clock too: resent again, it works.
    await service.ctx.invitations.resend(resent.org.id, resent.made.id, 'test');
    assert.equal((await accept(await follow(await linkMailedTo(user.email)), await signedIn(user))).status, 200, 'a new link works');
  });
});
