/**
 * Attacks on the APIs, roles and assignments (apis/, docs/authorization.md): what a role grants
 * becomes the `scope` of an access token, so a grant the operator did not mean (a permission
 * the API does not define, one it stopped defining, an API deleted and made again) or a change
 * made without the admin key would hand out access. Each refusal must change nothing.
 * On SQLite, and on PostgreSQL when SERVICE_TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminApi } from '../support/admin-api.js';
import { startTestService, type TestService, uniqueEmail } from '../support/helpers.js';

describe('APIs, roles and permissions: threats', () => {
  let service: TestService;
  let api: ReturnType<typeof adminApi>;
  const newUser = async () => (await service.ctx.enabledUsers.findOrCreate(uniqueEmail('threat'), Date.now()))?.id as string;
  /** Every row the three changes could write, to show that a refusal wrote none. */
  const snapshot = async () => {
    const db = service.ctx.db;
    return {
      apis: await db.selectFrom('apis').selectAll().orderBy('id').execute(),
      permissions: await db.selectFrom('api_permissions').selectAll().orderBy('api_id').orderBy('name').execute(),
      roles: await db.selectFrom('roles').selectAll().orderBy('id').execute(),
      grants: await db.selectFrom('role_permissions').selectAll().orderBy('role_id').orderBy('api_id').orderBy('permission').execute(),
      holders: await db.selectFrom('user_roles').selectAll().orderBy('user_id').orderBy('role_id').execute(),
      events: (await service.ctx.events.list({ limit: 1000 })).events.length,
    };
  };

  before(async () => {
    service = await startTestService();
    api = adminApi(service.url, (await service.ctx.adminKeys.create('ops', 'cli')).key);
    await api('POST', '/apis', { identifier: 'https://notes.example.com', name: 'Notes', permissions: ['read:notes', 'write:notes'] });
    await api('POST', '/apis', { identifier: 'https://billing.example.com', name: 'Billing', permissions: ['read:invoices'] });
    await api('POST', '/roles', { name: 'reader', permissions: [{ api: 'https://notes.example.com', permission: 'read:notes' }] });
  });
  after(() => service.close());

  it('admin routes without the admin key: every APIs, roles and assignments route answers 401 and changes nothing', async () => {
    const userId = await newUser();
    const before = await snapshot();
    const { id } = await service.ctx.apis.getApi('https://notes.example.com');
    const routes: Array<[string, string, unknown?]> = [
      ['GET', '/apis'],
      ['POST', '/apis', { identifier: 'https://evil.example.com', name: 'Evil', permissions: ['admin'] }],
      ['GET', `/apis/${id}`],
      ['PATCH', `/apis/${id}`, { permissions: ['read:notes', 'write:notes', 'admin'] }],
      ['DELETE', `/apis/${id}`],
      ['GET', '/roles'],
      ['POST', '/roles', { name: 'evil', permissions: [{ api: 'https://notes.example.com', permission: 'write:notes' }] }],
      ['GET', '/roles/reader'],
      ['PATCH', '/roles/reader', { permissions: [{ api: 'https://notes.example.com', permission: 'write:notes' }] }],
      ['DELETE', '/roles/reader'],
      ['GET', `/users/${userId}/roles`],
      ['POST', `/users/${userId}/roles`, { role: 'reader' }],
      ['DELETE', `/users/${userId}/roles/reader`],
    ];
    for (const bearer of [undefined, 'admin_not-a-real-key', '']) {
      for (const [method, path, body] of routes) {
        const response = await fetch(`${service.url}/admin/v1${path}`, {
          method,
          headers: {
            ...(bearer === undefined ? {} : { authorization: `Bearer ${bearer}` }),
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        assert.equal(response.status, 401, `${method} ${path} with ${bearer ?? 'no key'}`);
        assert.equal((await response.json()).code, 'ERR_ADMIN_KEY_INVALID');
      }
    }
    assert.deepEqual(await snapshot(), before);
  });

  it('a permission not on the API refused in a role: at creation and at a change, with nothing written', async () => {
    const before = await snapshot();
    const smuggled = [
      [{ api: 'https://notes.example.com', permission: 'admin:notes' }],
      // A permission of another API, named on this one.
      [{ api: 'https://notes.example.com', permission: 'read:invoices' }],
      // An API nobody registered.
      [{ api: 'https://unknown.example.com', permission: 'read:notes' }],
      // One good grant does not carry a bad one.
      [
        { api: 'https://notes.example.com', permission: 'read:notes' },
        { api: 'https://notes.example.com', permission: 'delete:everything' },
      ],
      // The identifier spelled another way is another API.
      [{ api: 'https://notes.example.com/', permission: 'read:notes' }],
    ];
    for (const permissions of smuggled) {
      const made = await api('POST', '/roles', { name: 'smuggler', permissions });
      assert.equal(made.status, 400, JSON.stringify(permissions));
      assert.equal(made.body.code, 'ERR_REQUEST_INVALID');
      assert.match(made.body.message, /Not a permission of a registered API/);
      const changed = await api('PATCH', '/roles/reader', { permissions });
      assert.equal(changed.status, 400, JSON.stringify(permissions));
    }
    await assert.rejects(
      service.ctx.apis.createRole({ name: 'smuggler', permissions: [{ api: 'https://notes.example.com', permission: 'root' }] }, 'cli'),
      { code: 'ERR_REQUEST_INVALID' },
    );
    assert.deepEqual(await snapshot(), before);
  });

  it('an assignment to an unknown user or role is refused with no state change', async () => {
    const userId = await newUser();
    const before = await snapshot();
    const cases: Array<[string, string, number]> = [
      ['usr_doesnotexist0000', 'reader', 404],
      [userId, 'no-such-role', 404],
      [userId, 'role_doesnotexist00', 404],
    ];
    for (const [user, role, status] of cases) {
      const answer = await api('POST', `/users/${user}/roles`, { role });
      assert.equal(answer.status, status, `${user} ${role}`);
      assert.equal(answer.body.code, 'ERR_NOT_FOUND');
    }
    assert.equal((await api('GET', '/users/usr_doesnotexist0000/roles')).status, 404);
    assert.equal((await api('POST', `/users/${userId}/roles`, { role: 'has space' })).status, 400, 'refused by the schema');
    assert.equal((await api('POST', `/users/${userId}/roles`, { role: 'reader', extra: true })).status, 400);
    await assert.rejects(service.ctx.apis.assignRole('usr_doesnotexist0000', 'reader', 'cli'), { code: 'ERR_NOT_FOUND' });
    assert.deepEqual(await snapshot(), before);
  });

  it('deleting an API strips it from roles (so no stale permission is granted), also once an API of that identifier is made again', async () => {
    await api('POST', '/apis', { identifier: 'urn:acme:files', name: 'Files', permissions: ['read:files', 'delete:files'] });
    const role = (
      await api('POST', '/roles', {
        name: 'files.admin',
        permissions: [
          { api: 'urn:acme:files', permission: 'delete:files' },
          { api: 'https://billing.example.com', permission: 'read:invoices' },
        ],
      })
    ).body;
    const userId = await newUser();
    await api('POST', `/users/${userId}/roles`, { role: 'files.admin' });
    const auth = service.ctx.apiAuthorization;
    assert.deepEqual(await auth.userPermissions(userId, 'urn:acme:files'), ['delete:files']);

    const files = await service.ctx.apis.getApi('urn:acme:files');
    assert.equal((await api('DELETE', `/apis/${files.id}`)).status, 204);
    assert.deepEqual(await auth.userPermissions(userId, 'urn:acme:files'), []);
    assert.equal(await auth.findApi('urn:acme:files'), undefined);
    assert.deepEqual((await api('GET', `/roles/${role.id}`)).body.permissions, [
      { api: 'https://billing.example.com', permission: 'read:invoices' },
    ]);
    const rows = await service.ctx.db.selectFrom('role_permissions').select('api_id').where('api_id', '=', files.id).execute();
    assert.deepEqual(rows, [], 'no row left behind');
    assert.deepEqual(await auth.userPermissions(userId, 'https://billing.example.com'), ['read:invoices'], 'the other API is untouched');

    // Made again with the same identifier and permissions: the old grants do not come back.
    await api('POST', '/apis', { identifier: 'urn:acme:files', name: 'Files', permissions: ['read:files', 'delete:files'] });
    assert.deepEqual(await auth.userPermissions(userId, 'urn:acme:files'), []);

    // Removing one permission strips just that one.
    await api('PATCH', `/roles/${role.id}`, {
      permissions: [
        { api: 'urn:acme:files', permission: 'read:files' },
        { api: 'urn:acme:files', permission: 'delete:files' },
      ],
    });
    await api('PATCH', `/apis/${(await service.ctx.apis.getApi('urn:acme:files')).id}`, { permissions: ['read:files'] });
    assert.deepEqual(await auth.userPermissions(userId, 'urn:acme:files'), ['read:files']);
    const [event] = (await service.ctx.events.list({ type: 'api.deleted', limit: 1 })).events;
    assert.deepEqual(event?.detail, { apiId: files.id, identifier: 'urn:acme:files', rolesChanged: 1 });
  });

  it('a role change racing the removal of its permission leaves no stale grant', async () => {
    const made = (await api('POST', '/apis', { identifier: 'urn:acme:race', name: 'Race', permissions: ['a', 'b'] })).body;
    for (let round = 0; round < 10; round++) {
      await api('PATCH', `/apis/${made.id}`, { permissions: ['a', 'b'] });
      await Promise.all([
        api('POST', '/roles', { name: `racer-${round}`, permissions: [{ api: 'urn:acme:race', permission: 'b' }] }),
        api('PATCH', `/apis/${made.id}`, { permissions: ['a'] }),
      ]);
      const stale = await service.ctx.db
        .selectFrom('role_permissions')
        .leftJoin('api_permissions', (join) =>
          join
            .onRef('api_permissions.api_id', '=', 'role_permissions.api_id')
            .onRef('api_permissions.name', '=', 'role_permissions.permission'),
        )
        .select('role_permissions.permission')
        .where('api_permissions.name', 'is', null)
        .execute();
      assert.deepEqual(stale, [], `round ${round}`);
    }
  });
});
