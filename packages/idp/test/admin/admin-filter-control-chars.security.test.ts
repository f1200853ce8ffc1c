/**
 * Attack: an operator's filter that matches more than it says. A NUL reached SQLite's LIKE as
 * the end of the pattern, so `GET /admin/v1/users?email=%00zzz` listed every user while
 * `?email=zzz` listed none (and on PostgreSQL the same text failed the statement). Other control
 * characters (C0, DEL and C1, U+2028/9), lone surrogates, and cursors this service did not make
 * (bad base64url, padding, extra characters, another spelling of the same JSON, huge or negative
 * times, ids with control characters) must each get a 400 `{ code, message }`, on every admin
 * query parameter, through the API and the CLI's service calls alike.
 * On SQLite, and on PostgreSQL when SERVICE_TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ServiceError } from '../../src/errors.js';
import { encodeCursor } from '../../src/storage/pagination.js';
import { startTestService, type TestService } from '../support/helpers.js';

const CONTROLS = ['\u0000', '\u0001', '\t', '\n', '\r', '\u001f', '\u007f', '\u0080', '\u0085', '\u009f', '\u2028', '\u2029'];

describe('admin filters: control characters and malformed cursors', () => {
  let service: TestService;
  let key: string;
  const tag = `ctl${process.pid}x${Date.now()}`;
  before(async () => {
    service = await startTestService();
    key = (await service.ctx.adminKeys.create('ops', 'cli')).key;
    for (const local of ['ann', 'bob', 'cat']) await service.ctx.enabledUsers.findOrCreate(`${local}.${tag}@example.com`, Date.now());
  });
  after(() => service.close());

  const get = async (path: string) => {
    const response = await fetch(`${service.url}/admin/v1${path}`, { headers: { authorization: `Bearer ${key}` } });
    return { status: response.status, body: (await response.json()) as any };
  };
  const assertRefused = (answer: { status: number; body: any }, what: string) => {
    assert.equal(answer.status, 400, what);
    assert.equal(answer.body.code, 'ERR_REQUEST_INVALID', what);
    assert.equal(typeof answer.body.message, 'string', what);
    assert.deepEqual(Object.keys(answer.body).sort(), ['code', 'message'], what);
  };

  it('refuses a NUL in the email filter instead of listing everyone (the issue #21 requests)', async () => {
    assert.equal((await get('/users?limit=1000')).body.users.length >= 3, true);
    assert.deepEqual((await get('/users?email=zzz-no-such-address')).body.users, []);
    for (const query of ['email=%00', 'email=%00zzz-no-such-address', 'email=%40example.com%00zzz', `email=${tag}%00`]) {
      const answer = await get(`/users?${query}`);
      assertRefused(answer, query);
      assert.match(answer.body.message, /"email" contains a control character/);
    }
  });

  it('refuses every control character in every query parameter of the users and events listings', async () => {
    const cursor = encodeCursor(Date.now(), 'usr_x');
    for (const control of CONTROLS) {
      const c = encodeURIComponent(control);
      for (const path of [
        `/users?email=ann${c}`,
        `/users?email=${c}`,
        `/users?cursor=${cursor}${c}`,
        `/users?limit=5${c}`,
        `/events?user=usr_x${c}`,
        `/events?type=user.disabled${c}`,
        `/events?since=1${c}`,
        `/events?cursor=${c}${cursor}`,
        `/events?limit=${c}`,
      ])
        assertRefused(await get(path), JSON.stringify(path));
    }
  });

  it('refuses control characters and lone surrogates in the service calls the CLI makes', async () => {
    const refused = (error: unknown) => error instanceof ServiceError && error.code === 'ERR_REQUEST_INVALID';
    for (const text of [...CONTROLS, '\uD800', 'a\uDC00b', `${tag}\u0000`]) {
      await assert.rejects(service.ctx.users.list({ email: text, limit: 10 }), refused, JSON.stringify(text));
      await assert.rejects(service.ctx.events.list({ userId: text, limit: 10 }), refused, JSON.stringify(text));
    }
    // A surrogate pair is one well-formed character: searched, not refused.
    assert.deepEqual((await service.ctx.users.list({ email: '😀', limit: 10 })).users, []);
  });

  it('refuses every cursor this service did not make, whatever its shape', async () => {
    const b64 = (text: string) => Buffer.from(text).toString('base64url');
    const good = encodeCursor(1_700_000_000_000, 'usr_abc');
    assert.equal((await get(`/users?cursor=${good}`)).status, 200, 'a cursor of ours is taken');
    const malformed = [
      'garbage!',
      `${good}=`,
      `${good}==`,
      `${good}A`,
      `${good}.`,
      ` ${good}`,
      Buffer.from('[1700000000000,"usr_abc"]').toString('base64'),
      b64('[1700000000000, "usr_abc"]'),
      b64(' [1700000000000,"usr_abc"]'),
      b64('[1.7e12,"usr_abc"]'),
      b64('[1700000000000.0,"usr_abc"]'),
      b64('[1700000000000,"usr_\\u0061bc"]'),
      b64('[1e400,"usr_abc"]'),
      b64(`[${'9'.repeat(30)},"usr_abc"]`),
      b64('[9007199254740992,"usr_abc"]'),
      b64('[-1,"usr_abc"]'),
      b64('[1,""]'),
      b64('[1,"usr\\u0000"]'),
      b64('[1,"usr\\u2028"]'),
      b64('[1,"\\ud800"]'),
      b64('["1","usr_abc"]'),
      b64('[1,"usr_abc",3]'),
      b64('{"at":1,"id":"usr_abc"}'),
      b64(`[1,"${'x'.repeat(300)}"]`),
      good.slice(0, -1),
    ];
    for (const cursor of malformed)
      for (const list of ['users', 'events'])
        assertRefused(await get(`/${list}?cursor=${encodeURIComponent(cursor)}`), `${list} ${cursor}`);
  });

  it('refuses page sizes and times that are not whole numbers in range', async () => {
    for (const path of [
      '/users?limit=0',
      '/users?limit=1001',
      '/users?limit=1e3',
      '/users?limit=+5',
      '/users?limit=5.0',
      '/users?limit=0x10',
      '/users?limit=%EF%BC%95',
      '/users?limit=99999999999999999999',
      '/events?since=-1',
      '/events?since=1.5',
      '/events?since=9999999999999999',
      '/events?since=%EF%BC%91',
      '/users?limit=5&limit=6',
    ])
      assertRefused(await get(path), path);
  });
});
