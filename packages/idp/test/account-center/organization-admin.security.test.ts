/**
 * Organization admins in the account center (account-center/organization-routes.ts,
 * organizations/self-service.ts). Under attack: an admin of Acme acting on Globex (its id in the
 * path, or Globex's member and invitation ids in the body of Acme's routes); a plain member
 * reaching the admin page or raising their own roles; an admin granting a role that does not
 * exist, or taking their account session to the admin API and the operator console; a POST
 * without the session's token or from another origin; the last admin removed, demoted or
 * leaving (and two last admins leaving at once); the creation limit, and creation while the
 * operator has not offered it. Runs on SQLite and, with SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { accountSession, accountSuite, accountUser } from '../support/account-helpers.js';
import { startTestService, type TestService } from '../support/helpers.js';
import { organizationRoles, orgGet, orgPost, type Session } from '../support/organization-account-helpers.js';

const PER_USER = 2;

describe('organization admins: their organization, and nothing else', () => {
  let service: TestService;
  const { clock } = accountSuite(
    (started) => {
      service = started;
    },
    {
      env: {
        SERVICE_IDP_ORGANIZATION_SELF_SERVICE: 'on',
        SERVICE_IDP_ORGANIZATIONS_PER_USER: String(PER_USER),
        SERVICE_IDP_CONSOLE_PORT: '0',
      },
    },
  );

  /** A signed-in user (their account session) who created an organization, so is its admin. */
  async function adminOf(name: string) {
    await organizationRoles(service);
    const user = await accountUser(service, clock);
    const org = await service.ctx.organizationSelfService.create(user.userId, name);
    return { ...user, org, session: await accountSession(service, user, clock.now) };
  }
  async function memberOf(orgId: string, roles: string[] = ['member']) {
    const user = await accountUser(service, clock);
    await service.ctx.organizations.addMember(orgId, user.userId, roles, 'test');
    return { ...user, session: await accountSession(service, user, clock.now) };
  }
  const state = async (orgId: string) => ({
    members: (await service.ctx.organizations.members(orgId)).map((m) => `${m.userId}:${m.roles.join(',')}`).sort(),
    invitations: (await service.ctx.invitations.list(orgId)).map((i) => `${i.id}:${i.state}:${i.expiresAt}`).sort(),
  });

  /** Every change of the admin page, with the fields it needs. */
  const changes = (target: { member: string; invitation: string }): [string, [string, string][]][] => [
    [
      '/members/roles',
      [
        ['member', target.member],
        ['roles', 'admin'],
      ],
    ],
    ['/members/remove', [['member', target.member]]],
    [
      '/invitations',
      [
        ['email', 'mallory@example.com'],
        ['roles', 'admin'],
      ],
    ],
    ['/invitations/resend', [['invitation', target.invitation]]],
    ['/invitations/revoke', [['invitation', target.invitation]]],
  ];

  it('IDOR: an admin of Acme acting on Globex, by its id in the path or its ids in the body, is refused and changes nothing', async () => {
    const acme = await adminOf('Acme');
    const globex = await adminOf('Globex');
    const globexMember = await memberOf(globex.org.id);
    const globexInvitation = await service.ctx.invitations.invite(globex.org.id, 'guest@example.com', ['member'], 'test');
    const acmeInvitation = await service.ctx.invitations.invite(acme.org.id, 'friend@example.com', ['member'], 'test');
    const before = await state(globex.org.id);
    const acmeBefore = await state(acme.org.id);

    const page = await orgGet(service, acme.session, `/${globex.org.id}`);
    assert.equal(page.status, 404, "Globex's page");
    assert.doesNotMatch(await page.text(), /Globex|guest@example\.com/);
    for (const [path, fields] of changes({ member: globexMember.userId, invitation: globexInvitation.id })) {
      const answer = await orgPost(service, acme.session, `/${globex.org.id}${path}`, fields);
      assert.equal(answer.status, 404, `Globex's ${path}`);
      assert.match(await answer.text(), /no organization you manage/);
    }
    // Acme's own routes naming Globex's member and invitation.
    for (const [path, fields] of changes({ member: globexMember.userId, invitation: globexInvitation.id }).filter(
      ([path]) => path !== '/invitations',
    )) {
      const answer = await orgPost(service, acme.session, `/${acme.org.id}${path}`, fields);
      assert.ok([400, 404].includes(answer.status), `Acme's ${path} on Globex's ids: ${answer.status}`);
    }
    // Globex's admin on Acme's invitation through Globex's own page.
    assert.equal(
      (await orgPost(service, globex.session, `/${globex.org.id}/invitations/revoke`, [['invitation', acmeInvitation.id]])).status,
      400,
    );
    assert.deepEqual(await state(globex.org.id), before, "Globex's members and invitations are as they were");
    assert.deepEqual(await state(acme.org.id), acmeBefore);
    assert.equal(
      await service.ctx.organizationAccess.membership(acme.userId, globex.org.id),
      undefined,
      'Acme’s admin did not join Globex',
    );
    // An organization that does not exist answers the same as one of another's.
    assert.equal((await orgGet(service, acme.session, '/org_doesnotexist')).status, 404);
  });

  it("a plain member reaches no admin page and cannot raise their own roles, in their organization or another's", async () => {
    const acme = await adminOf('Acme Tools');
    const plain = await memberOf(acme.org.id);
    assert.equal((await orgGet(service, plain.session, `/${acme.org.id}`)).status, 404);
    const raise = await orgPost(service, plain.session, `/${acme.org.id}/members/roles`, [
      ['member', plain.userId],
      ['roles', 'admin'],
    ]);
    assert.equal(raise.status, 404);
    assert.deepEqual((await service.ctx.organizationAccess.membership(plain.userId, acme.org.id))?.roles, ['member']);
    const invite = await orgPost(service, plain.session, `/${acme.org.id}/invitations`, [
      ['email', plain.email],
      ['roles', 'admin'],
    ]);
    assert.equal(invite.status, 404, 'nor invite themselves back as admin');
    assert.equal((await service.ctx.invitations.list(acme.org.id)).length, 0);
    const account = await (
      await fetch(`${service.url}/account`, { headers: { cookie: `service_account=${plain.session.session}` } })
    ).text();
    assert.doesNotMatch(account, new RegExp(`/account/organizations/${acme.org.id}"`), 'no Manage link for a plain member');
    assert.match(account, new RegExp(`/account/organizations/${acme.org.id}/leave`));
  });

  it('an organization admin granting a role that does not exist is refused; nothing given, nothing sent', async () => {
    const acme = await adminOf('Acme Labs');
    const member = await memberOf(acme.org.id);
    const mails = (await service.ctx.mailbox.list(100)).length;
    for (const [path, fields] of [
      [
        '/members/roles',
        [
          ['member', member.userId],
          ['roles', 'superuser'],
        ],
      ],
      [
        '/members/roles',
        [
          ['member', member.userId],
          ['roles', (await service.ctx.organizations.roles())[0]?.id as string],
        ],
      ],
      [
        '/invitations',
        [
          ['email', 'new@example.com'],
          ['roles', 'superuser'],
        ],
      ],
    ] as [string, [string, string][]][]) {
      const answer = await orgPost(service, acme.session, `/${acme.org.id}${path}`, fields);
      assert.equal(answer.status, 400, `${path} ${fields[1]?.[1]}`);
      assert.match(await answer.text(), /does not exist/);
    }
    assert.deepEqual((await service.ctx.organizationAccess.membership(member.userId, acme.org.id))?.roles, ['member']);
    assert.equal((await service.ctx.invitations.list(acme.org.id)).length, 0);
    assert.equal((await service.ctx.mailbox.list(100)).length, mails);
  });

  it("an organization admin's account session opens neither the admin API nor the operator console", async () => {
    const acme = await adminOf('Acme Ops');
    const cookie = `service_account=${acme.session.session}`;
    for (const [method, path] of [
      ['GET', '/admin/v1/organizations'],
      ['GET', `/admin/v1/organizations/${acme.org.id}/members`],
      ['POST', '/admin/v1/organization-roles'],
    ] as const) {
      const answer = await fetch(`${service.url}${path}`, {
        method,
        headers: { cookie, 'x-account-csrf': acme.session.csrfToken, 'content-type': 'application/json' },
        ...(method === 'POST' ? { body: JSON.stringify({ name: 'owner', managesOrganization: true }) } : {}),
      });
      assert.equal(answer.status, 401, `${method} ${path}`);
    }
    assert.ok(!(await service.ctx.organizations.roles()).some((r) => r.name === 'owner'));
    const consoleUrl = service.consoleUrl as string;
    const page = await fetch(`${consoleUrl}/admin`, { headers: { cookie }, redirect: 'manual' });
    assert.deepEqual([page.status, page.headers.get('location')], [303, '/admin/signin'], 'the console asks its own sign-in');
    const session = await fetch(`${consoleUrl}/admin/session`, { headers: { cookie } });
    assert.notEqual(session.status, 200);
  });

  it('CSRF: every organization POST without the session token, or from another site, is refused and changes nothing', async () => {
    const acme = await adminOf('Acme CSRF');
    const member = await memberOf(acme.org.id);
    const invitation = await service.ctx.invitations.invite(acme.org.id, 'csrf@example.com', ['member'], 'test');
    const before = await state(acme.org.id);
    const posts: [string, [string, string][]][] = [
      ['', [['name', 'Evil Corp']]],
      [`/${acme.org.id}/leave`, []],
      ...changes({ member: member.userId, invitation: invitation.id }).map(
        ([p, f]) => [`/${acme.org.id}${p}`, f] as [string, [string, string][]],
      ),
    ];
    for (const [path, fields] of posts) {
      const attacks: [string, Promise<Response>][] = [
        ['no token', orgPost(service, acme.session, path, fields, {}, null)],
        ['wrong token', orgPost(service, acme.session, path, fields, {}, 'x'.repeat(43))],
        ['other origin', orgPost(service, acme.session, path, fields, { origin: 'https://evil.example' })],
        ['cross-site', orgPost(service, acme.session, path, fields, { 'sec-fetch-site': 'cross-site' })],
      ];
      for (const [attack, answer] of attacks) assert.equal((await answer).status, 403, `${attack} ${path || '/'}`);
    }
    assert.deepEqual(await state(acme.org.id), before);
    assert.equal((await service.ctx.organizationSelfService.mine(acme.userId)).length, 1, 'no organization made');
  });

  it('the last admin can be neither removed, demoted nor leave; the page says why and nothing changes', async () => {
    const acme = await adminOf('Acme Last');
    const member = await memberOf(acme.org.id);
    const before = await state(acme.org.id);
    for (const [path, fields] of [
      ['/members/remove', [['member', acme.userId]]],
      [
        '/members/roles',
        [
          ['member', acme.userId],
          ['roles', 'member'],
        ],
      ],
      ['/members/roles', [['member', acme.userId]]],
      ['/leave', []],
    ] as [string, [string, string][]][]) {
      const answer = await orgPost(service, acme.session, `/${acme.org.id}${path}`, fields);
      assert.equal(answer.status, 409, path);
      assert.match(await answer.text(), /no admin/);
    }
    assert.deepEqual(await state(acme.org.id), before);
    // A plain member still leaves; a second admin lets the first go.
    assert.equal((await orgPost(service, member.session, `/${acme.org.id}/leave`)).status, 200);
    const second = await memberOf(acme.org.id, ['admin']);
    assert.equal((await orgPost(service, acme.session, `/${acme.org.id}/leave`)).status, 200);
    assert.deepEqual(
      (await service.ctx.organizations.members(acme.org.id)).map((m) => m.userId),
      [second.userId],
    );
  });

  it('two last admins leaving at once: exactly one leaves, the organization keeps an admin', async () => {
    for (let round = 0; round < 3; round++) {
      const acme = await adminOf(`Acme Race ${round}`);
      const other = await memberOf(acme.org.id, ['admin']);
      const answers = await Promise.all([
        orgPost(service, acme.session, `/${acme.org.id}/leave`),
        orgPost(service, other.session, `/${acme.org.id}/leave`),
      ]);
      assert.deepEqual(answers.map((a) => a.status).sort(), [200, 409], `round ${round}`);
      const left = await service.ctx.organizations.members(acme.org.id);
      assert.equal(left.length, 1);
      assert.deepEqual(left[0]?.roles, ['admin']);
    }
  });

  it('an admin removing a co-admin and a co-admin removing them at once: one admin remains', async () => {
    const acme = await adminOf('Acme Mutual');
    const other = await memberOf(acme.org.id, ['admin']);
    const answers = await Promise.all([
      orgPost(service, acme.session, `/${acme.org.id}/members/remove`, [['member', other.userId]]),
      orgPost(service, other.session, `/${acme.org.id}/members/roles`, [
        ['member', acme.userId],
        ['roles', 'member'],
      ]),
    ]);
    assert.ok(answers.some((a) => a.status === 303));
    const admins = (await service.ctx.organizations.members(acme.org.id)).filter((m) => m.roles.includes('admin'));
    assert.equal(admins.length, 1);
  });

  it('self-service creation stops at the per-user limit, with nothing made past it', async () => {
    await organizationRoles(service);
    const user = await accountUser(service, clock);
    const session: Session = await accountSession(service, user, clock.now);
    for (let i = 0; i < PER_USER; i++)
      assert.equal((await orgPost(service, session, '', [['name', `Mine ${i}`]])).status, 303, `creation ${i + 1}`);
    const over = await orgPost(service, session, '', [['name', 'One too many']]);
    assert.equal(over.status, 403);
    assert.match(await over.text(), new RegExp(`created ${PER_USER} organizations`));
    // Several at once past the limit: still the limit.
    const other = await accountUser(service, clock);
    const otherSession = await accountSession(service, other, clock.now);
    await Promise.all(Array.from({ length: PER_USER + 3 }, (_, i) => orgPost(service, otherSession, '', [['name', `Rush ${i}`]])));
    assert.equal((await service.ctx.organizationSelfService.mine(user.userId)).length, PER_USER);
    assert.equal((await service.ctx.organizationSelfService.mine(other.userId)).length, PER_USER);
  });
});

describe('self-service creation while the operator has not offered it', () => {
  it('off (the default): the page offers no creation and a POST is refused with nothing made', async () => {
    const service = await startTestService({ testMode: true });
    try {
      await organizationRoles(service);
      const clock = { now: Date.now, tick: () => {} };
      const user = await accountUser(service, clock);
      const session = await accountSession(service, user, clock.now);
      const account = await (await fetch(`${service.url}/account`, { headers: { cookie: `service_account=${session.session}` } })).text();
      assert.doesNotMatch(account, /Create an organization/);
      const answer = await orgPost(service, session, '', [['name', 'Sneaky']]);
      assert.equal(answer.status, 403);
      assert.match(await answer.text(), /not offered/);
      assert.equal((await service.ctx.organizations.page({ limit: 10 })).items.length, 0);
    } finally {
      await service.close();
    }
  });

  it('on, but no role manages organizations: refused, telling the operator what to create', async () => {
    const service = await startTestService({ testMode: true, env: { SERVICE_IDP_ORGANIZATION_SELF_SERVICE: 'on' } });
    try {
      await service.ctx.organizations.createRole({ name: 'admin' }, 'test'); // named admin, managing nothing
      const clock = { now: Date.now, tick: () => {} };
      const user = await accountUser(service, clock);
      const session = await accountSession(service, user, clock.now);
      const answer = await orgPost(service, session, '', [['name', 'Unmanaged']]);
      assert.equal(answer.status, 503);
      assert.match(await answer.text(), /operator must first create the organization role admin/);
      assert.equal((await service.ctx.organizations.page({ limit: 10 })).items.length, 0);
    } finally {
      await service.close();
    }
  });
});
