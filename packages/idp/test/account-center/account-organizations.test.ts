/**
 * The user's organizations in the account center (account-center/organization-routes.ts): created
 * from the page, listed with the roles held, managed by their admin (roles, removal, invitations
 * sent, resent, revoked), left after a confirmation; every change an event with the user as
 * actor. Roles that manage organizations through the admin API. Runs on SQLite and, with
 * SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { accountSession, accountSuite, accountUser } from '../support/account-helpers.js';
import { adminApi } from '../support/admin-api.js';
import type { TestService } from '../support/helpers.js';
import { organizationRoles, orgGet, orgPost } from '../support/organization-account-helpers.js';

describe('organizations in the account center', () => {
  let service: TestService;
  const { clock } = accountSuite(
    (started) => {
      service = started;
    },
    { env: { SERVICE_IDP_ORGANIZATION_SELF_SERVICE: 'on' } },
  );
  const eventsOf = async (type: string, userId: string) =>
    (await service.ctx.events.list({ userId, type, limit: 10 })).events.map((e) => ({ actor: e.actor, detail: e.detail }));

  it('a role manages organizations when the operator says so (admin API), and says so when listed', async () => {
    const api = adminApi(service.url, (await service.ctx.adminKeys.create('ops', 'cli')).key);
    const made = await api('POST', '/organization-roles', { name: 'owner', managesOrganization: true });
    assert.deepEqual([made.status, made.body.managesOrganization], [201, true]);
    const plain = await api('POST', '/organization-roles', { name: 'guest' });
    assert.equal(plain.body.managesOrganization, false);
    const changed = await api('PATCH', '/organization-roles/guest', { managesOrganization: true });
    assert.equal(changed.body.managesOrganization, true);
    assert.equal((await api('PATCH', '/organization-roles/guest', { managesOrganization: 'yes' })).status, 400);
    await api('DELETE', '/organization-roles/guest');
    await api('DELETE', '/organization-roles/owner');
  });

  it('a user creates an organization, invites, manages roles; the invitee joins, sees it, and leaves', async () => {
    await organizationRoles(service);
    const ada = await accountUser(service, clock);
    const adaSession = await accountSession(service, ada, clock.now);
    const account = await (await fetch(`${service.url}/account`, { headers: { cookie: `service_account=${adaSession.session}` } })).text();
    assert.match(account, /Create an organization/);

    const created = await orgPost(service, adaSession, '', [['name', '  Acme Corp ']]);
    assert.equal(created.status, 303);
    const location = created.headers.get('location') as string;
    const orgId = /\/account\/organizations\/(org_[A-Za-z0-9_-]+)\?done=created$/.exec(location)?.[1] as string;
    assert.ok(orgId, location);
    const page = await orgGet(service, adaSession, `/${orgId}?done=created`);
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.match(html, /Manage Acme Corp/);
    assert.match(html, /Your organization is ready/);
    assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'none'|script-src 'self'/);
    assert.deepEqual((await service.ctx.organizationAccess.membership(ada.userId, orgId))?.roles, ['admin']);
    assert.deepEqual(await eventsOf('organization.created', ada.userId), [
      { actor: `user:${ada.userId}`, detail: { organizationId: orgId, name: 'Acme Corp' } },
    ]);

    // The admin invites an address with a role; the mail carries the link.
    const bob = await accountUser(service, clock);
    assert.equal(
      (
        await orgPost(service, adaSession, `/${orgId}/invitations`, [
          ['email', bob.email],
          ['roles', 'member'],
        ])
      ).status,
      303,
    );
    const [invitation] = await service.ctx.invitations.list(orgId);
    assert.deepEqual([invitation?.email, invitation?.roles, invitation?.invitedBy], [bob.email, ['member'], `user:${ada.userId}`]);
    const [mail] = await service.ctx.mailbox.list(1, bob.email);
    assert.match(mail?.text ?? '', /Acme Corp/);
    // Resent: a new link; then the invitee accepts the new one.
    assert.equal(
      (await orgPost(service, adaSession, `/${orgId}/invitations/resend`, [['invitation', invitation?.id as string]])).status,
      303,
    );
    const [again] = await service.ctx.mailbox.list(1, bob.email);
    const link = again?.text.match(/https?:\/\/\S+\/account\/invitations\/accept\?token=\S+/)?.[0] as string;
    const follow = await fetch(link, { redirect: 'manual' });
    const invitationCookie = (follow.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const bobSession = await accountSession(service, bob, clock.now);
    const joined = await fetch(`${service.url}/account/invitations/accept`, {
      method: 'POST',
      headers: {
        cookie: `service_account=${bobSession.session}; ${invitationCookie}`,
        origin: service.url,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ csrf: bobSession.csrfToken }),
    });
    assert.equal(joined.status, 200);
    const bobAccount = await (
      await fetch(`${service.url}/account`, { headers: { cookie: `service_account=${bobSession.session}` } })
    ).text();
    assert.match(bobAccount, /Acme Corp/);
    assert.match(bobAccount, /Your roles: member/);
    assert.doesNotMatch(bobAccount, /Manage Acme Corp/);

    // The admin makes Bob an admin too, then takes it back; each an event naming Ada.
    assert.equal(
      (
        await orgPost(service, adaSession, `/${orgId}/members/roles`, [
          ['member', bob.userId],
          ['roles', 'admin'],
          ['roles', 'member'],
        ])
      ).status,
      303,
    );
    assert.deepEqual((await service.ctx.organizationAccess.membership(bob.userId, orgId))?.roles, ['admin', 'member']);
    assert.equal((await orgGet(service, bobSession, `/${orgId}`)).status, 200, 'Bob manages it now');
    assert.equal(
      (
        await orgPost(service, adaSession, `/${orgId}/members/roles`, [
          ['member', bob.userId],
          ['roles', 'member'],
        ])
      ).status,
      303,
    );
    assert.equal((await orgGet(service, bobSession, `/${orgId}`)).status, 404);
    const changes = await eventsOf('organization.member_roles_changed', bob.userId);
    assert.deepEqual(
      changes.map((c) => [c.actor, c.detail.roles]),
      [
        [`user:${ada.userId}`, 'member'],
        [`user:${ada.userId}`, 'admin,member'],
      ],
    );

    // A second invitation, revoked; its link stops working.
    await orgPost(service, adaSession, `/${orgId}/invitations`, [['email', 'carol@example.com']]);
    const carol = (await service.ctx.invitations.list(orgId)).find((i) => i.email === 'carol@example.com');
    assert.equal((await orgPost(service, adaSession, `/${orgId}/invitations/revoke`, [['invitation', carol?.id as string]])).status, 303);
    assert.equal((await service.ctx.invitations.list(orgId)).find((i) => i.id === carol?.id)?.state, 'revoked');

    // Bob leaves: a confirmation page first, then the POST.
    const confirm = await orgGet(service, bobSession, `/${orgId}/leave`);
    assert.equal(confirm.status, 200);
    assert.match(await confirm.text(), /Leave Acme Corp\?/);
    const left = await orgPost(service, bobSession, `/${orgId}/leave`);
    assert.equal(left.status, 200);
    assert.match(await left.text(), /You left Acme Corp/);
    assert.equal(await service.ctx.organizationAccess.membership(bob.userId, orgId), undefined);
    assert.deepEqual(await eventsOf('organization.member_removed', bob.userId), [
      { actor: `user:${bob.userId}`, detail: { organizationId: orgId, left: 'yes' } },
    ]);
    assert.equal((await orgGet(service, bobSession, `/${orgId}/leave`)).status, 404, 'no longer a member');
  });

  it('the pages speak the user’s language', async () => {
    await organizationRoles(service);
    const user = await accountUser(service, clock);
    const session = await accountSession(service, user, clock.now);
    const org = await service.ctx.organizationSelfService.create(user.userId, 'Équipe');
    for (const [lang, heading] of [
      ['fr', 'Gérer Équipe'],
      ['de', 'Équipe verwalten'],
      ['es', 'Gestionar Équipe'],
    ]) {
      const answer = await fetch(`${service.url}/account/organizations/${org.id}`, {
        headers: { cookie: `service_account=${session.session}`, 'accept-language': lang as string },
      });
      assert.match(await answer.text(), new RegExp(heading as string), lang);
    }
  });
});
