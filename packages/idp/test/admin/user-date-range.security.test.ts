/**
 * Users searched by when they were created (GET /admin/v1/users?createdSince=&createdBefore=,
 * the console's date fields, `users list --created-since/--created-before`): the range is
 * [createdSince, createdBefore), combines with the address filter and the cursor; a bound that
 * is not a time, or a range that is empty by construction, is a 400 naming it; a cross-site
 * page cannot read it through an operator's session (CSRF). On SQLite, and on PostgreSQL when
 * SERVICE_TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { consoleCall, operatorSession } from '../support/console-helpers.js';
import { startTestService, type TestService } from '../support/helpers.js';

describe('users by creation date', () => {
  let service: TestService;
  let adminKey: string;
  const tag = `range${process.pid}x${Date.now()}`;
  const created = [1_000, 2_000, 3_000, 4_000];
  const email = (at: number) => `u${at}.${tag}@example.com`;
  before(async () => {
    service = await startTestService({ testMode: true });
    adminKey = (await service.ctx.adminKeys.create('range', 'cli')).key;
    for (const at of created) await service.ctx.enabledUsers.findOrCreate(email(at), at);
  });
  after(() => service.close());

  const get = async (query: string) => {
    const response = await fetch(`${service.url}/admin/v1/users?${query}`, { headers: { authorization: `Bearer ${adminKey}` } });
    return { status: response.status, body: await response.json() };
  };
  const emails = (body: { users: Array<{ email: string }> }) => body.users.map((u) => u.email);

  it('keeps users created from createdSince on and before createdBefore, with the address filter and cursors', async () => {
    assert.deepEqual(emails((await get(`email=${tag}&createdSince=2000&createdBefore=4000`)).body), [email(2_000), email(3_000)]);
    assert.deepEqual(emails((await get(`email=${tag}&createdSince=3000`)).body), [email(3_000), email(4_000)]);
    assert.deepEqual(emails((await get(`email=${tag}&createdBefore=2000`)).body), [email(1_000)]);
    assert.deepEqual(emails((await get(`email=${tag}&createdSince=4001`)).body), []);
    // Page by page, one user each: the range holds on every page.
    const seen: string[] = [];
    let cursor = '';
    for (let page = 0; page < 5; page++) {
      const answer = await get(`email=${tag}&createdSince=1500&createdBefore=3500&limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(answer.status, 200);
      seen.push(...emails(answer.body));
      if (!answer.body.nextCursor) break;
      cursor = answer.body.nextCursor;
    }
    assert.deepEqual(seen, [email(2_000), email(3_000)]);
  });

  it('bad bounds: not a time, out of range, or an empty range by construction, are a 400 naming the problem', async () => {
    for (const query of [
      'createdSince=-1',
      'createdSince=1.5',
      'createdSince=yesterday',
      'createdBefore=1e20',
      'createdBefore=',
      'createdSince=3000&createdBefore=3000',
      'createdSince=4000&createdBefore=1000',
      'createdAfter=1000',
      `createdSince=1000${encodeURIComponent('\u0000')}`,
    ]) {
      const answer = await get(query);
      assert.equal(answer.status, 400, query);
      assert.equal(answer.body.code, 'ERR_REQUEST_INVALID', query);
      assert.equal(answer.body.users, undefined, query);
    }
    assert.match((await get('createdSince=4000&createdBefore=1000')).body.message, /createdSince must be earlier than createdBefore/);
    await assert.rejects(service.ctx.users.list({ createdSince: 5, createdBefore: 5, limit: 5 }), /earlier/);
  });

  it("a viewer's console reads the range; the same read without the session's token (a cross-site page) is refused", async () => {
    const viewer = await operatorSession(service, 'viewer');
    const path = `/users?email=${tag}&createdSince=2000&createdBefore=3000`;
    const read = await consoleCall(service, viewer, 'GET', path);
    assert.equal(read.status, 200);
    assert.deepEqual(emails(read.body), [email(2_000)]);
    for (const override of [{ 'x-console-csrf': undefined }, { origin: 'https://evil.example' }, { 'sec-fetch-site': 'cross-site' }]) {
      const forged = await consoleCall(service, viewer, 'GET', path, override);
      assert.equal(forged.status, 403, JSON.stringify(override));
      assert.equal(forged.body.users, undefined);
    }
    const anonymous = await fetch(`${service.url}/admin/v1${path}`);
    assert.equal(anonymous.status, 401);
  });
});
