/**
 * Organizations (organizations/): made, renamed and deleted by the operator; members with
 * organization roles from the one template; events for every change; a user deleted leaves
 * every organization. Runs on SQLite and, with SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminApi } from '../support/admin-api.js';
import { startTestService, type TestService, uniqueEmail, verifiedRegistration } from '../support/helpers.js';

describe('organizations: members and organization roles', () => {
  let service: TestService;
  let api: ReturnType<typeof adminApi>;
  const API = 'https://wiki.example.com';
  before(async () => {
    service = await startTestService({ testMode: true });
    api = adminApi(service.url, (await service.ctx.adminKeys.create('ops', 'cli')).key);
    await api('POST', '/apis', { identifier: API, name: 'Wiki', permissions: ['read:pages', 'write:pages', 'admin:space'] });
    await api('POST', '/organization-roles', { name: 'viewer', permissions: [{ api: API, permission: 'read:pages' }] });
    await api('POST', '/organization-roles', {
      name: 'admin',
      permissions: [
        { api: API, permission: 'read:pages' },
        { api: API, permission: 'write:pages' },
        { api: API, permission: 'admin:space' },
      ],
    });
  });
  after(() => service.close());

  const user = async (label: string) => {
    const email = uniqueEmail(label);
    await verifiedRegistration(service, email);
    return { email, id: (await service.ctx.enabledUsers.findByEmail(email))?.id as string };
  };

  it('a user is admin in one organization and viewer in another; each membership carries its own roles and permissions', async () => {
    const acme = (await api('POST', '/organizations', { name: 'Acme', externalId: 'scim-acme' })).body;
    const globex = (await api('POST', '/organizations', { name: 'Globex' })).body;
    assert.match(acme.id, /^org_/);
    assert.deepEqual([acme.name, acme.externalId, acme.mfaRequired], ['Acme', 'scim-acme', false]);
    const ada = await user('ada');
    const added = await api('POST', `/organizations/${acme.id}/members`, { userId: ada.id, roles: ['admin'], externalId: 'scim-ada' });
    assert.equal(added.status, 201);
    assert.deepEqual([added.body.email, added.body.roles, added.body.externalId], [ada.email, ['admin'], 'scim-ada']);
    assert.equal((await api('POST', `/organizations/${globex.id}/members`, { userId: ada.id, roles: ['viewer'] })).status, 201);

    const access = service.ctx.organizationAccess;
    assert.deepEqual((await access.membership(ada.id, acme.id))?.roles, ['admin']);
    assert.deepEqual((await access.membership(ada.id, globex.id))?.roles, ['viewer']);
    assert.deepEqual(await access.memberPermissions(ada.id, acme.id, API), ['admin:space', 'read:pages', 'write:pages']);
    assert.deepEqual(await access.memberPermissions(ada.id, globex.id, API), ['read:pages']);
    assert.deepEqual(
      (await access.organizationsOf(ada.id)).map((o) => o.name),
      ['Acme', 'Globex'],
    );

    // Roles replaced; a permission removed from the API leaves the role's grant.
    const changed = await api('PUT', `/organizations/${globex.id}/members/${ada.id}/roles`, { roles: ['viewer', 'admin'] });
    assert.deepEqual(changed.body.roles, ['admin', 'viewer']);
    const apiId = (await api('GET', '/apis')).body.apis.find((a: { identifier: string }) => a.identifier === API).id;
    await api('PATCH', `/apis/${apiId}`, { permissions: ['read:pages', 'write:pages'] });
    assert.deepEqual(await access.memberPermissions(ada.id, acme.id, API), ['read:pages', 'write:pages']);
    await api('PATCH', `/apis/${apiId}`, { permissions: ['read:pages', 'write:pages', 'admin:space'] });

    const members = await api('GET', `/organizations/${acme.id}/members`);
    assert.deepEqual(
      members.body.members.map((m: { email: string }) => m.email),
      [ada.email],
    );
    const { events } = await service.ctx.events.list({ userId: ada.id, type: 'organization.member_added', limit: 5 });
    assert.equal(events.length, 2);
  });

  it('removing a member, deleting an organization or the user ends the membership; a second add is refused', async () => {
    const org = (await api('POST', '/organizations', { name: 'Initech' })).body;
    const bob = await user('bob');
    await api('POST', `/organizations/${org.id}/members`, { userId: bob.id, roles: ['viewer'] });
    assert.equal((await api('POST', `/organizations/${org.id}/members`, { userId: bob.id })).status, 400, 'member already');
    assert.equal((await api('DELETE', `/organizations/${org.id}/members/${bob.id}`)).status, 204);
    assert.equal(await service.ctx.organizationAccess.membership(bob.id, org.id), undefined);
    assert.equal((await api('DELETE', `/organizations/${org.id}/members/${bob.id}`)).status, 404);

    const carol = await user('carol');
    await api('POST', `/organizations/${org.id}/members`, { userId: carol.id, roles: ['admin'] });
    await service.ctx.users.delete(carol.id, 'test');
    assert.deepEqual((await api('GET', `/organizations/${org.id}/members`)).body.members, []);

    const dave = await user('dave');
    await api('POST', `/organizations/${org.id}/members`, { userId: dave.id, roles: ['admin'] });
    assert.equal((await api('DELETE', `/organizations/${org.id}`)).status, 204);
    assert.equal(await service.ctx.organizationAccess.membership(dave.id, org.id), undefined);
    assert.equal((await api('GET', `/organizations/${org.id}`)).status, 404);
  });

  it('refuses bad input with a 4xx and no change: unknown roles, users, permissions; duplicate names and external ids', async () => {
    const org = (await api('POST', '/organizations', { name: 'Umbrella', externalId: 'scim-umbrella' })).body;
    const erin = await user('erin');
    assert.equal((await api('POST', `/organizations/${org.id}/members`, { userId: erin.id, roles: ['owner'] })).status, 404);
    assert.equal((await api('POST', `/organizations/${org.id}/members`, { userId: 'usr_nope' })).status, 404);
    assert.equal(await service.ctx.organizationAccess.membership(erin.id, org.id), undefined);
    assert.equal((await api('POST', '/organizations', { name: 'Copy', externalId: 'scim-umbrella' })).status, 400);
    assert.equal((await api('POST', '/organizations', { name: '' })).status, 400);
    assert.equal((await api('POST', '/organizations', { name: 'x\u0007' })).status, 400);
    assert.equal((await api('POST', '/organization-roles', { name: 'viewer' })).status, 400, 'name taken');
    const bad = await api('POST', '/organization-roles', { name: 'writer', permissions: [{ api: API, permission: 'delete:everything' }] });
    assert.equal(bad.status, 400);
    assert.ok(!(await api('GET', '/organization-roles')).body.roles.some((r: { name: string }) => r.name === 'writer'));
  });
});
