/**
 * Cursor pagination of the applications, webhooks, operators and admin-keys lists (GET
 * /admin/v1/clients|webhooks|operators|admin-keys with `limit` and `cursor`, answering
 * `nextCursor`, as the users list does): pages walk every row once, oldest first; a forged or
 * malformed cursor, a page size out of range or an unknown parameter is a 400; a cross-site page
 * (CSRF) or a caller without a key reads nothing; built-in clients never appear, not even by id.
 * On SQLite, and on PostgreSQL when SERVICE_TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CONSOLE_CLIENT_ID, HOSTED_CLIENT_ID } from '../../src/clients/service.js';
import { encodeCursor } from '../../src/storage/pagination.js';
import { consoleCall, operatorSession } from '../support/console-helpers.js';
import { startTestService, type TestService } from '../support/helpers.js';

const LISTS = [
  ['/clients', 'clients'],
  ['/webhooks', 'webhooks'],
  ['/operators', 'operators'],
  ['/admin-keys', 'adminKeys'],
] as const;

describe('admin lists by cursor', () => {
  let service: TestService;
  let adminKey: string;
  before(async () => {
    service = await startTestService({ testMode: true });
    adminKey = (await service.ctx.adminKeys.create('pager', 'cli')).key;
    for (let i = 0; i < 3; i++) {
      await service.ctx.clients.create({ name: `App ${i}`, origins: [`https://app${i}.example`] });
      await service.ctx.webhooks.create({ url: `http://127.0.0.1:9/hook-${i}`, events: ['user.deleted'] }, 'test');
      await service.ctx.operators.add({ email: `op${i}@example.com`, role: 'viewer' }, 'test');
      await service.ctx.adminKeys.create(`key ${i}`, 'test');
    }
  });
  after(() => service.close());

  const get = async (path: string, headers: Record<string, string> = { authorization: `Bearer ${adminKey}` }) => {
    const response = await fetch(`${service.url}/admin/v1${path}`, { headers });
    return { status: response.status, body: await response.json() };
  };
  const ids = (rows: Array<{ id: string }>) => rows.map((row) => row.id);

  it('pages walk every row once, oldest first, and the last page says so with a null nextCursor', async () => {
    for (const [path, field] of LISTS) {
      const whole = await get(`${path}?limit=1000`);
      assert.equal(whole.status, 200, path);
      assert.equal(whole.body.nextCursor, null, path);
      const all = ids(whole.body[field]);
      assert.ok(all.length >= 3, path);
      const seen: string[] = [];
      let cursor: string | null = null;
      for (let page = 0; page <= all.length; page++) {
        const answer = await get(`${path}?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
        assert.equal(answer.status, 200, path);
        assert.ok(answer.body[field].length <= 2, path);
        seen.push(...ids(answer.body[field]));
        cursor = answer.body.nextCursor;
        if (!cursor) break;
      }
      assert.equal(cursor, null, `${path}: the walk ended`);
      assert.deepEqual(seen, all, path);
      // Without a limit: the default page size (50), all of these.
      assert.deepEqual(ids((await get(path)).body[field]), all, path);
    }
    const clients = ids((await get('/clients?limit=1000')).body.clients);
    assert.ok(!clients.includes(CONSOLE_CLIENT_ID) && !clients.includes(HOSTED_CLIENT_ID), 'built-in clients are never listed');
  });

  it('a forged or malformed cursor, a bad page size or an unknown parameter is a 400 and lists nothing', async () => {
    for (const [path, field] of LISTS)
      for (const query of [
        'cursor=not-a-cursor',
        `cursor=${encodeCursor(1, 'x')}=`,
        `cursor=${Buffer.from('[1,"a","b"]').toString('base64url')}`,
        `cursor=${'A'.repeat(201)}`,
        'limit=0',
        'limit=1001',
        'limit=two',
        'offset=10',
        `cursor=${encodeURIComponent('\u0000')}`,
      ]) {
        const answer = await get(`${path}?${query}`);
        assert.equal(answer.status, 400, `${path}?${query}`);
        assert.equal(answer.body.code, 'ERR_REQUEST_INVALID', `${path}?${query}`);
        assert.equal(answer.body[field], undefined);
      }
  });

  it('a viewer reads each list by its session; without its token (CSRF) or without a key, nothing is read', async () => {
    const viewer = await operatorSession(service, 'viewer');
    for (const [path, field] of LISTS) {
      const read = await consoleCall(service, viewer, 'GET', `${path}?limit=1`);
      assert.equal(read.status, 200, path);
      assert.equal(read.body[field].length, 1, path);
      assert.equal(typeof read.body.nextCursor, 'string', path);
      for (const override of [{ 'x-console-csrf': undefined }, { origin: 'https://evil.example' }]) {
        const forged = await consoleCall(service, viewer, 'GET', `${path}?limit=1`, override);
        assert.equal(forged.status, 403, `${path} ${JSON.stringify(override)}`);
        assert.equal(forged.body[field], undefined);
      }
      for (const headers of [{}, { authorization: 'Bearer adm_nope' }] as Record<string, string>[]) {
        const answer = await get(`${path}?limit=1`, headers);
        assert.equal(answer.status, 401, path);
        assert.equal(answer.body[field], undefined);
      }
    }
  });

  it('one application by id: an operator client is shown; a built-in, unknown or malformed id is not', async () => {
    const [first] = (await get('/clients?limit=1')).body.clients;
    const shown = await get(`/clients/${first.id}`);
    assert.equal(shown.status, 200);
    assert.deepEqual(shown.body, first);
    for (const [id, status] of [
      [CONSOLE_CLIENT_ID, 404],
      [HOSTED_CLIENT_ID, 404],
      ['cli_unknown', 404],
      ['a%20b', 400],
    ] as const)
      assert.equal((await get(`/clients/${id}`)).status, status, id);
  });
});
