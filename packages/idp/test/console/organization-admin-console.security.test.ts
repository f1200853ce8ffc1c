/**
 * An organization admin reaching the operator console (issue 38, docs/security.md): a member who
 * holds the strongest organization role in Acme, but is no operator, tries the console's sign-in
 * and the admin API behind it with what their sign-in gave them (the ID token and access token
 * naming Acme, the service's session cookie), on Acme's own routes and on another organization's.
 * Each is refused and nothing changes. Runs on SQLite and, with SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { memberOf, startWithOrganizations } from '../organizations/organization-helpers.js';
import { NOTES } from '../support/api-helpers.js';
import { consoleBase, consoleCallback } from '../support/console-helpers.js';
import { type TestService, uniqueEmail } from '../support/helpers.js';
import { type RelyingParty, signIn } from '../support/oidc-token-helpers.js';

describe('an organization admin reaching the operator console', () => {
  let service: TestService;
  let rp: RelyingParty;
  before(async () => {
    ({ service, rp } = await startWithOrganizations());
  });
  after(() => service.close());

  it('an organization admin who is no operator: the console opens no session, and their tokens and session reach no admin route of their organization or another; nothing changes', async () => {
    const email = uniqueEmail('acme-admin');
    const { userId, orgId: acme } = await memberOf(service, email, 'Acme', ['editor']);
    const globex = (await service.ctx.organizations.create({ name: 'Globex' }, 'test')).id;
    const { tokens, browser } = await signIn(service, rp, email, {
      scope: 'openid email write:notes',
      extra: { organization: acme, resource: NOTES },
    });
    const sessionCookie = browser.jar.header();
    assert.match(sessionCookie, /service_session=/, 'the member holds a live session of the service');

    const calls: Array<[string, string, unknown?]> = [
      ['GET', '/organizations'],
      ['GET', `/organizations/${acme}/members`],
      ['PUT', `/organizations/${acme}/members/${userId}/roles`, { roles: ['editor', 'viewer'] }],
      ['POST', `/organizations/${acme}/invitations`, { email: uniqueEmail('friend'), roles: ['editor'] }],
      ['POST', `/organizations/${acme}/domains`, { domain: 'acme.example' }],
      ['POST', `/organizations/${globex}/members`, { userId, roles: ['editor'] }],
      ['DELETE', `/organizations/${globex}`],
      ['POST', '/organization-roles', { name: 'owner' }],
    ];
    const credentials: Record<string, Record<string, string>> = {
      'access token': { authorization: `Bearer ${tokens.access_token}` },
      'ID token': { authorization: `Bearer ${tokens.id_token}` },
      'service session cookie': { cookie: sessionCookie, origin: consoleBase(service), 'sec-fetch-site': 'same-origin' },
    };
    for (const [name, headers] of Object.entries(credentials))
      for (const [method, path, body] of calls) {
        const answer = await fetch(`${consoleBase(service)}/admin/v1${path}`, {
          method,
          headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
          ...(body ? { body: JSON.stringify(body) } : {}),
        });
        assert.equal(answer.status, 401, `${name}: ${method} ${path}`);
      }
    // The console's own page answers as to anyone signed out: no console session, whatever the service's cookie.
    assert.equal((await fetch(`${consoleBase(service)}/admin/session`, { headers: { cookie: sessionCookie } })).status, 401);

    // Its sign-in, finished with a second factor from the member's own browser: refused, recorded, no session.
    const device = (await service.ctx.users.show(userId)).devices.find((item) => item.removedAt === null);
    assert.ok(device, 'the member signed in from a remembered browser');
    const refused = await consoleCallback(service, { userId, deviceId: device.id }, ['otp', 'mfa', 'totp']);
    assert.equal(refused.answer.status, 403);
    assert.equal(refused.session, undefined);
    assert.match(await refused.answer.text(), /not an operator/);
    const { events } = await service.ctx.events.list({ userId, type: 'operator.refused', limit: 5 });
    assert.equal(events[0]?.detail?.reason, 'not_operator');

    // Nothing changed: the member's roles, Globex, the template, no invitation or domain claim.
    assert.deepEqual((await service.ctx.organizationAccess.membership(userId, acme))?.roles, ['editor']);
    assert.equal(await service.ctx.organizationAccess.membership(userId, globex), undefined);
    assert.equal((await service.ctx.organizations.get(globex)).name, 'Globex');
    assert.deepEqual((await service.ctx.organizations.roles()).map((role) => role.name).sort(), ['editor', 'viewer']);
    assert.deepEqual(await service.ctx.invitations.list(acme), []);
    assert.deepEqual(await service.ctx.organizationDomains.list(acme), []);
  });
});
