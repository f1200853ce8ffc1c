/**
 * Attacks on the console's APIs, Roles and user roles pages (docs/operations.md, "The operator
 * console"): the pages call /admin/v1/apis, /roles and /users/{id}/roles on the operator's
 * console session, so those calls must hold the console's checks: no session, a call without its
 * per-session token (CSRF), a viewer forging an admin's change, and bad input. Each refusal
 * answers a clear 4xx and writes nothing; an admin's changes go through the same service as the
 * admin API, their events naming the operator.
 * On SQLite, and on PostgreSQL when SERVICE_TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { consoleCall, consoleUser, operatorSession } from '../support/console-helpers.js';
import { startTestService, type TestService } from '../support/helpers.js';

const NOTES = 'https://notes.example.com';

describe('console APIs and roles pages: forged, unauthenticated and malformed calls', () => {
  let service: TestService;
  let admin: Awaited<ReturnType<typeof operatorSession>>;
  let viewer: Awaited<ReturnType<typeof operatorSession>>;
  let userId: string;
  let apiId: string;
  /** Every row the pages' changes could write, and the events, to show that a refusal wrote none. */
  const snapshot = async () => {
    const db = service.ctx.db;
    return {
      apis: await db.selectFrom('apis').selectAll().orderBy('id').execute(),
      permissions: await db.selectFrom('api_permissions').selectAll().orderBy('api_id').orderBy('name').execute(),
      roles: await db.selectFrom('roles').selectAll().orderBy('id').execute(),
      grants: await db.selectFrom('role_permissions').selectAll().orderBy('role_id').orderBy('api_id').orderBy('permission').execute(),
      holders: await db.selectFrom('user_roles').selectAll().orderBy('user_id').orderBy('role_id').execute(),
      events: (await service.ctx.events.list({ limit: 1000 })).events.filter((event) => /^(api|role)\./.test(event.type)).length,
    };
  };
  /** Each change the pages make, with a body that would succeed. */
  const changes = (): Array<[string, string, unknown?]> => [
    ['POST', '/apis', { identifier: 'https://evil.example.com', name: 'Evil', permissions: ['admin'] }],
    ['PATCH', `/apis/${apiId}`, { name: 'Renamed', permissions: ['read:notes', 'write:notes', 'admin'] }],
    ['DELETE', `/apis/${apiId}`],
    ['POST', '/roles', { name: 'evil', permissions: [{ api: NOTES, permission: 'write:notes' }] }],
    ['PATCH', '/roles/reader', { permissions: [{ api: NOTES, permission: 'write:notes' }] }],
    ['DELETE', '/roles/reader'],
    ['POST', `/users/${userId}/roles`, { role: 'writer' }],
    ['DELETE', `/users/${userId}/roles/reader`],
  ];

  before(async () => {
    service = await startTestService({ testMode: true });
    apiId = (await service.ctx.apis.createApi({ identifier: NOTES, name: 'Notes', permissions: ['read:notes', 'write:notes'] }, 'cli')).id;
    await service.ctx.apis.createRole({ name: 'reader', permissions: [{ api: NOTES, permission: 'read:notes' }] }, 'cli');
    await service.ctx.apis.createRole({ name: 'writer', permissions: [{ api: NOTES, permission: 'write:notes' }] }, 'cli');
    userId = (await consoleUser(service)).userId;
    await service.ctx.apis.assignRole(userId, 'reader', 'cli');
    admin = await operatorSession(service, 'admin');
    viewer = await operatorSession(service, 'viewer');
  });
  after(() => service.close());

  it('no operator session: every APIs, roles and user roles call answers 401 and changes nothing', async () => {
    // An operator who signed out: their cookie and its token, both once good, open nothing.
    const ended = await operatorSession(service, 'admin');
    const out = await fetch(`${service.url}/admin/signout`, {
      method: 'POST',
      headers: { cookie: `service_console=${ended.session}`, origin: service.url, 'x-console-csrf': ended.csrfToken },
    });
    assert.equal(out.status, 204);
    const before = await snapshot();
    const reads: Array<[string, string, unknown?]> = [
      ['GET', '/apis'],
      ['GET', `/apis/${apiId}`],
      ['GET', '/roles'],
      ['GET', '/roles/reader'],
      ['GET', `/users/${userId}/roles`],
    ];
    for (const [method, path, body] of [...reads, ...changes()]) {
      for (const [who, override] of [
        [admin, { cookie: undefined }],
        [ended, {}],
      ] as const) {
        const answer = await consoleCall(service, who, method, path, override, body);
        assert.equal(answer.status, 401, `${method} ${path} ${who === ended ? 'ended session' : 'no cookie'}`);
        assert.doesNotMatch(JSON.stringify(answer.body), /notes\.example|reader/, 'nothing read');
      }
    }
    assert.deepEqual(await snapshot(), before);
  });

  it('CSRF missing: a change without the per-session token, with a wrong one, or from another origin is refused and changes nothing', async () => {
    const before = await snapshot();
    const attacks: Record<string, string | undefined>[] = [
      { 'x-console-csrf': undefined },
      { 'x-console-csrf': viewer.csrfToken },
      { origin: 'https://evil.example' },
      { 'sec-fetch-site': 'cross-site' },
    ];
    for (const [method, path, body] of changes())
      for (const override of attacks) {
        const answer = await consoleCall(service, admin, method, path, override, body);
        assert.equal(answer.status, 403, `${method} ${path} ${JSON.stringify(override)}`);
        assert.equal(answer.body.code, 'ERR_FORBIDDEN');
      }
    // Reads need the token too: another site's page cannot list the APIs or a user's roles.
    assert.equal((await consoleCall(service, admin, 'GET', '/apis', { 'x-console-csrf': undefined })).status, 403);
    assert.equal((await consoleCall(service, admin, 'GET', `/users/${userId}/roles`, { 'x-console-csrf': undefined })).status, 403);
    assert.deepEqual(await snapshot(), before);
  });

  it('a viewer-role operator reads the APIs, roles and a user’s roles but every change is refused (403) and changes nothing', async () => {
    const before = await snapshot();
    assert.equal((await consoleCall(service, viewer, 'GET', '/apis')).body.apis[0].identifier, NOTES);
    assert.deepEqual(
      (await consoleCall(service, viewer, 'GET', '/roles')).body.roles.map((role: { name: string }) => role.name),
      ['reader', 'writer'],
    );
    assert.deepEqual(
      (await consoleCall(service, viewer, 'GET', `/users/${userId}/roles`)).body.roles.map((role: { name: string }) => role.name),
      ['reader'],
    );
    for (const [method, path, body] of changes()) {
      const answer = await consoleCall(service, viewer, method, path, {}, body);
      assert.equal(answer.status, 403, `${method} ${path}`);
      assert.equal(answer.body.code, 'ERR_FORBIDDEN');
    }
    assert.deepEqual(await snapshot(), before);
  });

  it('invalid input: the pages’ forms with a bad identifier, permission, grant, role name, role or user answer a clear 4xx and change nothing', async () => {
    const before = await snapshot();
    const refused: Array<[number, string, string, unknown, RegExp?]> = [
      [400, 'POST', '/apis', { identifier: 'http://notes.example.org', name: 'Plain' }, /https URI/],
      [400, 'POST', '/apis', { identifier: 'https://notes.example.org/#x', name: 'Frag' }, /no query, fragment/],
      [400, 'POST', '/apis', { identifier: NOTES, name: 'Twice' }, /exists already/],
      [400, 'POST', '/apis', { identifier: 'https://x.example.com', name: 'X', permissions: ['read notes'] }, /not a scope token/],
      [400, 'POST', '/apis', { identifier: 'https://x.example.com', name: ' ' }, /name is 1 to/],
      [400, 'POST', '/apis', { identifier: 'https://x.example.com', name: 'X', extra: true }],
      [400, 'PATCH', `/apis/${apiId}`, { permissions: ['ok', 'a,b'] }, /not a scope token/],
      [400, 'PATCH', `/apis/${apiId}`, { identifier: 'https://moved.example.com' }],
      [400, 'PATCH', '/apis/a%20b', { name: 'X' }],
      [404, 'PATCH', '/apis/api_unknown', { name: 'X' }, /No API/],
      [404, 'DELETE', '/apis/api_unknown', undefined, /No API/],
      [400, 'POST', '/roles', { name: 'admin', permissions: [{ api: NOTES, permission: 'delete:everything' }] }, /Not a permission/],
      [
        400,
        'POST',
        '/roles',
        { name: 'admin', permissions: [{ api: 'https://other.example.com', permission: 'read:notes' }] },
        /Not a permission/,
      ],
      [400, 'POST', '/roles', { name: 'role_x' }, /may not start with "role_"/],
      [400, 'POST', '/roles', { name: 'has space' }],
      [400, 'POST', '/roles', { name: 'reader' }, /exists already/],
      [400, 'PATCH', '/roles/reader', { permissions: [{ api: NOTES, permission: 'delete:everything' }] }, /Not a permission/],
      [400, 'PATCH', '/roles/reader', { name: 'writer' }, /exists already/],
      [404, 'DELETE', '/roles/nobody', undefined, /No role/],
      [404, 'POST', `/users/${userId}/roles`, { role: 'nobody' }, /No role/],
      [404, 'POST', '/users/usr_unknown/roles', { role: 'writer' }, /No user/],
      [400, 'POST', `/users/${userId}/roles`, { role: '' }],
      [400, 'POST', `/users/${userId}/roles`, {}],
      [404, 'DELETE', `/users/${userId}/roles/writer`, undefined, /does not hold/],
    ];
    for (const [status, method, path, body, message] of refused) {
      const answer = await consoleCall(service, admin, method, path, {}, body);
      assert.equal(answer.status, status, `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(answer.body)}`);
      assert.equal(typeof answer.body.message, 'string');
      if (message) assert.match(answer.body.message, message);
    }
    assert.deepEqual(await snapshot(), before);
  });

  it('an admin operator registers, edits and deletes an API, makes a role, assigns and removes it: the service’s events name the operator', async () => {
    const actor = `operator:${admin.email}`;
    const call = async (status: number, method: string, path: string, body?: unknown) => {
      const answer = await consoleCall(service, admin, method, path, {}, body);
      assert.equal(answer.status, status, `${method} ${path}: ${JSON.stringify(answer.body)}`);
      return answer.body;
    };
    const made = await call(201, 'POST', '/apis', { identifier: 'urn:acme:billing', name: 'Billing', permissions: ['read:invoices'] });
    await call(200, 'PATCH', `/apis/${made.id}`, { name: 'Invoices', permissions: ['read:invoices', 'pay:invoices'] });
    const role = await call(201, 'POST', '/roles', {
      name: 'accountant',
      permissions: [
        { api: 'urn:acme:billing', permission: 'pay:invoices' },
        { api: NOTES, permission: 'read:notes' },
      ],
    });
    await call(200, 'POST', `/users/${userId}/roles`, { role: role.id });
    assert.deepEqual(await service.ctx.apiAuthorization.userPermissions(userId, 'urn:acme:billing'), ['pay:invoices']);
    await call(204, 'DELETE', `/users/${userId}/roles/${role.id}`);
    assert.deepEqual(await service.ctx.apiAuthorization.userPermissions(userId, 'urn:acme:billing'), []);
    await call(204, 'DELETE', `/apis/${made.id}`);
    await call(204, 'DELETE', `/roles/${role.id}`);
    for (const type of ['api.created', 'api.updated', 'api.deleted', 'role.created', 'role.assigned', 'role.unassigned', 'role.deleted']) {
      const { events } = await service.ctx.events.list({ type, limit: 5 });
      assert.equal(events[0]?.actor, actor, type);
    }
    const { events } = await service.ctx.events.list({ type: 'role.assigned', limit: 1 });
    assert.equal(events[0]?.userId, userId);
  });
});
