/**
 * APIs, roles and assignments (apis/, docs/authorization.md): what the token code reads
 * (ApiAuthorization: findApi, userPermissions, userRoles) after the operator's changes through
 * the admin API, the events each change records, and the limits and refusals of the input.
 * On SQLite, and on PostgreSQL when SERVICE_TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApiSchema, RoleSchema } from '../../src/apis/routes.js';
import { API_PERMISSIONS_MAX, USER_ROLES_MAX } from '../../src/defaults.js';
import { adminApi } from '../support/admin-api.js';
import { startTestService, type TestService, uniqueEmail } from '../support/helpers.js';

describe('APIs, roles and permissions', () => {
  let service: TestService;
  let api: ReturnType<typeof adminApi>;
  let keyId: string;
  const newUser = async () => (await service.ctx.enabledUsers.findOrCreate(uniqueEmail('roles'), Date.now()))?.id as string;
  const eventsOf = async (type: string) => (await service.ctx.events.list({ type, limit: 50 })).events;

  before(async () => {
    service = await startTestService();
    const made = await service.ctx.adminKeys.create('ops', 'cli');
    keyId = made.id;
    api = adminApi(service.url, made.key);
  });
  after(() => service.close());

  it('names the confidential or machine client its resource server introspects as (RFC 7662 4): set, refused, cleared, and gone with the client', async () => {
    const server = await service.ctx.clients.create({ name: 'Orders API', origins: [], redirectUris: ['https://orders.example.com/cb'] });
    const spa = await service.ctx.clients.create({
      name: 'Orders SPA',
      origins: [],
      redirectUris: ['https://orders.example.com/spa'],
      public: true,
    });
    const machine = await service.ctx.clients.create({ name: 'Orders job', origins: [], machine: true });
    assert.equal(
      (await api('POST', '/apis', { identifier: 'urn:acme:m', name: 'M', resourceServerClientId: machine.clientId })).status,
      201,
      'a machine client',
    );
    const made = await api('POST', '/apis', {
      identifier: 'https://orders.example.com',
      name: 'Orders',
      resourceServerClientId: server.clientId,
    });
    assert.equal(made.status, 201);
    assert.equal(made.body.resourceServerClientId, server.clientId);
    assert.equal((await service.ctx.apiAuthorization.findApi('https://orders.example.com'))?.resourceServerClientId, server.clientId);
    for (const [name, clientId] of [
      ['an unknown client', 'cli_unknown'],
      ['a public client (it cannot authenticate to introspect)', spa.clientId],
    ]) {
      const refused = await api('PATCH', `/apis/${made.body.id}`, { resourceServerClientId: clientId });
      assert.equal(refused.status, 400, name);
      assert.match(refused.body.message, /No confidential or machine client/, name);
    }
    const refusedAtCreation = await api('POST', '/apis', { identifier: 'urn:acme:x', name: 'X', resourceServerClientId: spa.clientId });
    assert.equal(refusedAtCreation.status, 400);
    assert.equal(await service.ctx.apiAuthorization.findApi('urn:acme:x'), undefined, 'nothing written');
    assert.equal((await api('GET', `/apis/${made.body.id}`)).body.resourceServerClientId, server.clientId, 'unchanged');

    const cleared = await api('PATCH', `/apis/${made.body.id}`, { resourceServerClientId: null });
    assert.equal(cleared.body.resourceServerClientId, null);
    const [updated] = await eventsOf('api.updated');
    assert.equal(updated?.detail?.resourceServerClientId, '');
    await api('PATCH', `/apis/${made.body.id}`, { resourceServerClientId: server.clientId });
    await service.ctx.clients.delete(server.clientId);
    assert.equal(
      (await api('GET', `/apis/${made.body.id}`)).body.resourceServerClientId,
      null,
      'a deleted client is no API’s resource server',
    );
    assert.equal((await api('DELETE', `/apis/${made.body.id}`)).status, 204);
  });

  it('registers an API, lists, shows, renames it; the token code finds it by its identifier', async () => {
    const made = await api('POST', '/apis', {
      identifier: 'https://notes.example.com',
      name: 'Notes',
      permissions: ['write:notes', 'read:notes', 'read:notes'],
    });
    assert.equal(made.status, 201);
    assert.match(made.body.id, /^api_/);
    assert.deepEqual(made.body.permissions, ['read:notes', 'write:notes'], 'each once, sorted');
    assert.deepEqual(Object.keys(made.body).sort(), Object.keys(ApiSchema.properties).sort());

    assert.deepEqual((await api('GET', `/apis/${made.body.id}`)).body, made.body);
    const listed = await api('GET', '/apis?limit=1000');
    assert.ok(listed.body.apis.some((a: { id: string }) => a.id === made.body.id));

    const found = await service.ctx.apiAuthorization.findApi('https://notes.example.com');
    assert.deepEqual(
      { identifier: found?.identifier, name: found?.name, permissions: found?.permissions },
      { identifier: 'https://notes.example.com', name: 'Notes', permissions: ['read:notes', 'write:notes'] },
    );
    assert.equal(await service.ctx.apiAuthorization.findApi('https://notes.example.com/'), undefined, 'matched as an exact string');

    const renamed = await api('PATCH', `/apis/${made.body.id}`, { name: 'Acme Notes' });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.body.name, 'Acme Notes');
    assert.equal(renamed.body.identifier, 'https://notes.example.com');

    const [created] = await eventsOf('api.created');
    assert.equal(created?.actor, keyId);
    assert.deepEqual(created?.detail, {
      apiId: made.body.id,
      identifier: 'https://notes.example.com',
      permissions: 'read:notes,write:notes',
    });
    const [updated] = await eventsOf('api.updated');
    assert.deepEqual(updated?.detail, { apiId: made.body.id, identifier: 'https://notes.example.com', name: 'Acme Notes' });
  });

  it('gives a user the union of the permissions their roles grant on one API, sorted; userRoles names their roles', async () => {
    const notes = (
      await api('POST', '/apis', { identifier: 'urn:acme:notes', name: 'Notes', permissions: ['read:notes', 'write:notes', 'share:notes'] })
    ).body;
    await api('POST', '/apis', { identifier: 'https://billing.example.com', name: 'Billing', permissions: ['read:invoices'] });
    const reader = await api('POST', '/roles', {
      name: 'notes.reader',
      permissions: [{ api: 'urn:acme:notes', permission: 'read:notes' }],
    });
    assert.equal(reader.status, 201);
    assert.deepEqual(Object.keys(reader.body).sort(), Object.keys(RoleSchema.properties).sort());
    const editor = await api('POST', '/roles', {
      name: 'notes.editor',
      permissions: [
        { api: 'urn:acme:notes', permission: 'write:notes' },
        { api: 'urn:acme:notes', permission: 'read:notes' },
        { api: 'https://billing.example.com', permission: 'read:invoices' },
      ],
    });
    assert.deepEqual(editor.body.permissions, [
      { api: 'https://billing.example.com', permission: 'read:invoices' },
      { api: 'urn:acme:notes', permission: 'read:notes' },
      { api: 'urn:acme:notes', permission: 'write:notes' },
    ]);

    const userId = await newUser();
    assert.deepEqual(await service.ctx.apiAuthorization.userPermissions(userId, 'urn:acme:notes'), []);
    const first = await api('POST', `/users/${userId}/roles`, { role: 'notes.reader' });
    assert.equal(first.status, 200);
    assert.deepEqual(
      first.body.roles.map((r: { name: string }) => r.name),
      ['notes.reader'],
    );
    assert.equal((await api('POST', `/users/${userId}/roles`, { role: editor.body.id })).status, 200, 'by id too');
    assert.equal((await api('POST', `/users/${userId}/roles`, { role: 'notes.editor' })).status, 200, 'holding it already changes nothing');

    const auth = service.ctx.apiAuthorization;
    assert.deepEqual(await auth.userPermissions(userId, 'urn:acme:notes'), ['read:notes', 'write:notes']);
    assert.deepEqual(await auth.userPermissions(userId, 'https://billing.example.com'), ['read:invoices']);
    assert.deepEqual(await auth.userPermissions(userId, 'https://unknown.example.com'), []);
    assert.deepEqual(await auth.userRoles(userId), ['notes.editor', 'notes.reader']);
    assert.deepEqual(
      (await api('GET', `/users/${userId}/roles`)).body.roles.map((r: { name: string }) => r.name),
      ['notes.editor', 'notes.reader'],
    );
    const assigned = (await eventsOf('role.assigned')).filter((e) => e.userId === userId);
    assert.equal(assigned.length, 2, 'one event per assignment made, none for a role held already');
    assert.deepEqual(assigned.at(-1)?.detail, { roleId: reader.body.id, role: 'notes.reader' });

    // Removing a permission from the API takes it from the roles that granted it.
    const narrowed = await api('PATCH', `/apis/${notes.id}`, { permissions: ['read:notes', 'share:notes', 'delete:notes'] });
    assert.deepEqual(narrowed.body.permissions, ['delete:notes', 'read:notes', 'share:notes']);
    assert.deepEqual(await auth.userPermissions(userId, 'urn:acme:notes'), ['read:notes']);
    assert.deepEqual(
      (await api('GET', '/roles/notes.editor')).body.permissions.map((g: { permission: string }) => g.permission),
      ['read:invoices', 'read:notes'],
    );
    const [update] = await eventsOf('api.updated');
    assert.deepEqual(update?.detail, {
      apiId: notes.id,
      identifier: 'urn:acme:notes',
      permissionsAdded: 'delete:notes',
      permissionsRemoved: 'write:notes',
      rolesChanged: 1,
    });

    // Unassigning and renaming.
    assert.equal((await api('DELETE', `/users/${userId}/roles/notes.editor`)).status, 204);
    assert.deepEqual(await auth.userRoles(userId), ['notes.reader']);
    assert.equal((await api('DELETE', `/users/${userId}/roles/notes.editor`)).status, 404, 'not held any more');
    const renamed = await api('PATCH', '/roles/notes.reader', { name: 'notes.viewer' });
    assert.equal(renamed.status, 200);
    assert.deepEqual(await auth.userRoles(userId), ['notes.viewer']);
    assert.deepEqual((await eventsOf('role.updated'))[0]?.detail, {
      roleId: reader.body.id,
      role: 'notes.viewer',
      previousName: 'notes.reader',
    });
    assert.deepEqual((await eventsOf('role.unassigned'))[0]?.userId, userId);
  });

  it("replaces a role's permissions, deletes a role and takes it from every holder", async () => {
    await api('POST', '/apis', { identifier: 'https://tasks.example.com', name: 'Tasks', permissions: ['read:tasks', 'write:tasks'] });
    const role = (
      await api('POST', '/roles', { name: 'tasks', permissions: [{ api: 'https://tasks.example.com', permission: 'read:tasks' }] })
    ).body;
    const [ann, bob] = [await newUser(), await newUser()];
    for (const user of [ann, bob]) await api('POST', `/users/${user}/roles`, { role: 'tasks' });
    const replaced = await api('PATCH', `/roles/${role.id}`, {
      permissions: [{ api: 'https://tasks.example.com', permission: 'write:tasks' }],
    });
    assert.deepEqual(replaced.body.permissions, [{ api: 'https://tasks.example.com', permission: 'write:tasks' }]);
    assert.deepEqual(await service.ctx.apiAuthorization.userPermissions(ann, 'https://tasks.example.com'), ['write:tasks']);

    assert.equal((await api('DELETE', '/roles/tasks')).status, 204);
    assert.deepEqual(await service.ctx.apiAuthorization.userRoles(ann), []);
    assert.deepEqual(await service.ctx.apiAuthorization.userPermissions(bob, 'https://tasks.example.com'), []);
    assert.deepEqual((await eventsOf('role.deleted'))[0]?.detail, { roleId: role.id, role: 'tasks', holders: 2 });
    assert.equal((await api('GET', `/roles/${role.id}`)).status, 404);
  });

  it("deleting a user removes their roles' assignments", async () => {
    await api('POST', '/roles', { name: 'short-lived' });
    const userId = await newUser();
    await api('POST', `/users/${userId}/roles`, { role: 'short-lived' });
    await service.ctx.users.delete(userId, 'cli');
    const left = await service.ctx.db.selectFrom('user_roles').select('role_id').where('user_id', '=', userId).execute();
    assert.deepEqual(left, []);
  });

  it('refuses input the rules forbid with a 400, and changes nothing', async () => {
    const before = (await api('GET', '/apis?limit=1000')).body.apis.length;
    const refusals: Array<[string, unknown]> = [
      ['http, not https', { identifier: 'http://api.example.com', name: 'x' }],
      ['http on a name that only starts like loopback', { identifier: 'http://localhost.evil.example/mcp', name: 'x' }],
      ['http on a private address, not loopback', { identifier: 'http://10.0.0.1/mcp', name: 'x' }],
      ['a relative reference', { identifier: '/notes', name: 'x' }],
      ['a fragment', { identifier: 'https://api.example.com/#x', name: 'x' }],
      ['a query', { identifier: 'https://api.example.com/?v=1', name: 'x' }],
      ['credentials', { identifier: 'https://user:pw@api.example.com', name: 'x' }],
      ['a space', { identifier: 'urn:acme:my notes', name: 'x' }],
      ['not a urn', { identifier: 'urn:x', name: 'x' }],
      ['an empty name', { identifier: 'https://ok.example.com', name: '  ' }],
      ['a permission with a space', { identifier: 'https://ok.example.com', name: 'x', permissions: ['read notes'] }],
      ['a permission with a comma', { identifier: 'https://ok.example.com', name: 'x', permissions: ['read,notes'] }],
      ['a permission with a quote', { identifier: 'https://ok.example.com', name: 'x', permissions: ['read"notes'] }],
      ['a control character', { identifier: 'https://ok.example.com', name: 'x', permissions: ['read\u0000'] }],
      [
        'too many permissions',
        {
          identifier: 'https://ok.example.com',
          name: 'x',
          permissions: Array.from({ length: API_PERMISSIONS_MAX + 1 }, (_, i) => `p${i}`),
        },
      ],
      ['an unknown field', { identifier: 'https://ok.example.com', name: 'x', audience: 'y' }],
    ];
    for (const [what, body] of refusals) {
      const answer = await api('POST', '/apis', body);
      assert.equal(answer.status, 400, what);
      assert.equal(answer.body.code, 'ERR_REQUEST_INVALID', what);
    }
    // http on loopback: a resource server on this machine (an MCP server on localhost).
    const local = await api('POST', '/apis', { identifier: 'http://localhost:8123/mcp', name: 'Local MCP' });
    assert.equal(local.status, 201, JSON.stringify(local.body));
    await api('DELETE', `/apis/${local.body.id}`);
    await api('POST', '/apis', { identifier: 'https://twice.example.com', name: 'Once' });
    const twice = await api('POST', '/apis', { identifier: 'https://twice.example.com', name: 'Twice' });
    assert.equal(twice.status, 400);
    assert.match(twice.body.message, /exists already/);
    assert.equal((await api('GET', '/apis?limit=1000')).body.apis.length, before + 1);

    for (const name of ['has space', 'role_x', '-dash', 'a/b', 'x'.repeat(101)]) {
      const answer = await api('POST', '/roles', { name });
      assert.equal(answer.status, 400, name);
    }
    await api('POST', '/roles', { name: 'unique-role' });
    assert.match((await api('POST', '/roles', { name: 'unique-role' })).body.message, /exists already/);
    await api('POST', '/roles', { name: 'other-role' });
    const clash = await api('PATCH', '/roles/other-role', { name: 'unique-role' });
    assert.equal(clash.status, 400);
    assert.equal((await api('GET', '/roles/other-role')).status, 200, 'not renamed');
  });

  it(`holds at most USER_ROLES_MAX (${USER_ROLES_MAX}) roles per user`, async () => {
    const userId = await newUser();
    for (let i = 0; i < USER_ROLES_MAX; i++) {
      const role = await service.ctx.apis.createRole({ name: `many.${i}` }, 'cli');
      await service.ctx.apis.assignRole(userId, role.id, 'cli');
    }
    await service.ctx.apis.createRole({ name: 'one-too-many' }, 'cli');
    const answer = await api('POST', `/users/${userId}/roles`, { role: 'one-too-many' });
    assert.equal(answer.status, 400);
    assert.equal((await service.ctx.apiAuthorization.userRoles(userId)).length, USER_ROLES_MAX);
  });

  it('pages APIs and roles with cursors', async () => {
    for (let i = 0; i < 3; i++) await api('POST', '/apis', { identifier: `urn:page:api${i}`, name: `Page ${i}` });
    const all = (await api('GET', '/apis?limit=1000')).body.apis;
    const first = await api('GET', '/apis?limit=2');
    assert.equal(first.body.apis.length, 2);
    const second = await api('GET', `/apis?limit=1000&cursor=${first.body.nextCursor}`);
    assert.deepEqual([...first.body.apis, ...second.body.apis], all);
    assert.equal(second.body.nextCursor, null);
    const roles = await api('GET', '/roles?limit=1');
    assert.equal(roles.body.roles.length, 1);
    assert.equal(typeof roles.body.nextCursor, 'string');
  });
});
