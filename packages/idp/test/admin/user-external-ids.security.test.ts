/**
 * External ids on users (issue 38: the model ready for SCIM): an operator sets, finds by and
 * clears the id a provisioning system knows a user by. The threats: one id on two users (a
 * provisioning system's update landing on the wrong person), a malformed id, an unknown user, a
 * viewer operator changing it. Runs on SQLite and, with SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminApi } from '../support/admin-api.js';
import { consoleCall, operatorSession } from '../support/console-helpers.js';
import { startTestService, type TestService, uniqueEmail } from '../support/helpers.js';

describe('external ids on users', () => {
  let service: TestService;
  let api: ReturnType<typeof adminApi>;
  const newUser = async () => (await service.ctx.enabledUsers.findOrCreate(uniqueEmail(), Date.now()))?.id as string;
  const externalIdOf = async (id: string) => (await api('GET', `/users/${id}`)).body.externalId;

  before(async () => {
    service = await startTestService({ testMode: true });
    api = adminApi(service.url, (await service.ctx.adminKeys.create('ops', 'cli')).key);
  });
  after(() => service.close());

  it('sets, shows, finds by and clears a user’s external id, each change an event', async () => {
    const id = await newUser();
    assert.equal(await externalIdOf(id), null, 'none at first');
    const set = await api('PATCH', `/users/${id}`, { externalId: 'okta|00u1abc' });
    assert.equal(set.status, 200);
    assert.equal(set.body.externalId, 'okta|00u1abc');
    assert.equal(await externalIdOf(id), 'okta|00u1abc');
    const found = await api('GET', `/users?externalId=${encodeURIComponent('okta|00u1abc')}`);
    assert.deepEqual(
      found.body.users.map((u: { id: string }) => u.id),
      [id],
    );
    assert.deepEqual((await api('GET', '/users?externalId=okta')).body.users, [], 'exact, not a substring');
    const cleared = await api('PATCH', `/users/${id}`, { externalId: null });
    assert.equal(cleared.body.externalId, null);
    assert.deepEqual((await api('GET', `/users?externalId=${encodeURIComponent('okta|00u1abc')}`)).body.users, []);
    const { events } = await service.ctx.events.list({ type: 'user.updated', userId: id, limit: 10 });
    assert.deepEqual(
      events.map((e) => e.detail?.externalId),
      ['none', 'okta|00u1abc'],
    );
  });

  it('one external id on two users: the second is refused with a 400 and keeps what it had', async () => {
    const [first, second] = [await newUser(), await newUser()];
    assert.equal((await api('PATCH', `/users/${first}`, { externalId: 'ext-shared' })).status, 200);
    assert.equal((await api('PATCH', `/users/${second}`, { externalId: 'ext-second' })).status, 200);
    const taken = await api('PATCH', `/users/${second}`, { externalId: 'ext-shared' });
    assert.equal(taken.status, 400);
    assert.equal(taken.body.code, 'ERR_REQUEST_INVALID');
    assert.match(taken.body.message, /Another user has this external id/);
    assert.equal(await externalIdOf(second), 'ext-second');
    // Two at once: one wins, the other is refused; never both.
    const [a, b] = [await newUser(), await newUser()];
    const raced = await Promise.all([a, b].map((id) => api('PATCH', `/users/${id}`, { externalId: 'ext-raced' })));
    assert.deepEqual(raced.map((r) => r.status).sort(), [200, 400]);
    assert.equal((await api('GET', '/users?externalId=ext-raced')).body.users.length, 1);
  });

  it('a malformed external id, an unknown field or user, and a viewer operator change nothing', async () => {
    const id = await newUser();
    await api('PATCH', `/users/${id}`, { externalId: 'kept' });
    for (const body of [
      { externalId: '' },
      { externalId: 'has space' },
      { externalId: 'x'.repeat(201) },
      { externalId: 7 },
      {},
      { email: 'x@y.z' },
    ]) {
      const answer = await api('PATCH', `/users/${id}`, body);
      assert.equal(answer.status, 400, JSON.stringify(body));
    }
    assert.equal((await api('PATCH', `/users/${id}`, { externalId: 'tab\tinside' })).status, 400);
    assert.equal((await api('PATCH', '/users/usr_nobody', { externalId: 'x' })).status, 404);
    const viewer = await operatorSession(service, 'viewer');
    const refused = await consoleCall(service, viewer, 'PATCH', `/users/${id}`, {}, { externalId: 'by-viewer' });
    assert.equal(refused.status, 403);
    assert.equal(await externalIdOf(id), 'kept');
  });
});
