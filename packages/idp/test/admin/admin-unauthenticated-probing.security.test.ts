/**
 * Attack: an anonymous caller probes the admin API. A path id over 100 characters got the
 * router's own `414 {"error":"Bad Request","code":"FST_ERR_MAX_PARAM_LENGTH",…}` before the key
 * check, so the framework's body leaked and a route's existence showed (an unknown path got
 * 404, a known one 401 or 414). Now every admin path, known or not, answers a missing or bad
 * key with the same 401 before anything else is looked at (path ids, query, body, its media
 * type or size), and every framework refusal, admin or not, is `{ code, message }` with no
 * FST_ code and none of the framework's wording.
 * On SQLite, and on PostgreSQL when SERVICE_TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startTestService, type TestService } from '../support/helpers.js';

const KEY_REFUSED = { code: 'ERR_ADMIN_KEY_INVALID', message: 'A valid admin key is required.' };

describe('admin API: unauthenticated probing and framework errors', () => {
  let service: TestService;
  let key: string;
  before(async () => {
    service = await startTestService();
    key = (await service.ctx.adminKeys.create('ops', 'cli')).key;
  });
  after(() => service.close());

  const send = async (method: string, path: string, init: { headers?: Record<string, string>; body?: string } = {}) => {
    const response = await fetch(service.url + path, {
      method,
      headers: init.headers ?? {},
      ...(init.body !== undefined ? { body: init.body } : {}),
    });
    const text = await response.text();
    return { status: response.status, text, body: text ? JSON.parse(text) : undefined };
  };
  /** The documented shape only: no FST_ code, no framework field or wording. */
  const assertOurShape = (answer: { status: number; text: string; body: any }, what: string) => {
    assert.deepEqual(Object.keys(answer.body).sort(), ['code', 'message'], `${what}: ${answer.text}`);
    assert.doesNotMatch(answer.text, /FST_|statusCode|"error"|content-type is set|max param length|url component/i, what);
  };

  const long = 'a'.repeat(101);
  const longer = 'b'.repeat(5000);
  const probes: Array<[string, string]> = [
    ['GET', `/admin/v1/users/${long}`],
    ['GET', `/admin/v1/users/${longer}`],
    ['POST', `/admin/v1/users/${long}/disable`],
    ['DELETE', `/admin/v1/webhooks/${longer}`],
    ['GET', `/admin/v1/users/${encodeURIComponent('\u0000')}`],
    ['GET', '/admin/v1/users/%E0%A4%A'],
    ['GET', '/admin/v1/users?email=%00'],
    ['GET', '/admin/v1/users?cursor=garbage'],
    ['GET', '/admin/v1/no-such-route'],
    ['GET', `/admin/v1/no-such-route/${long}`],
    ['PUT', '/admin/v1/users'],
    ['GET', '/admin/v1'],
    ['GET', '/admin/v1/'],
  ];

  it('answers every admin path, known or not, too long or malformed, with the same 401 without a key', async () => {
    for (const [method, path] of probes)
      for (const headers of [{}, { authorization: 'Bearer admin_wrong' }, { authorization: `Bearer ${key}x` }]) {
        const answer = await send(method, path, { headers });
        const what = `${method} ${path.slice(0, 60)} ${JSON.stringify(headers)}`;
        assert.equal(answer.status, 401, what);
        assert.deepEqual(answer.body, KEY_REFUSED, what);
      }
  });

  it('with a valid key, answers an over-long or malformed id with 400 and an unknown path with 404, in its own words', async () => {
    const authorization = `Bearer ${key}`;
    for (const [method, path, status] of [
      ['GET', `/admin/v1/users/${long}`, 400],
      ['GET', `/admin/v1/users/${longer}`, 400],
      ['DELETE', `/admin/v1/webhooks/${longer}`, 400],
      ['GET', '/admin/v1/users/%E0%A4%A', 400],
      ['GET', '/admin/v1/no-such-route', 404],
      ['PUT', '/admin/v1/users', 404],
    ] as const) {
      const answer = await send(method, path, { headers: { authorization } });
      assert.equal(answer.status, status, `${method} ${path.slice(0, 60)}`);
      assertOurShape(answer, path.slice(0, 60));
    }
  });

  it('checks the key before the body: garbage, oversize, empty or unparsed bodies without a key get the 401', async () => {
    const bodies: Array<{ headers: Record<string, string>; body?: string }> = [
      { headers: { 'content-type': 'application/json' }, body: '{not json' },
      { headers: { 'content-type': 'application/json' }, body: '' },
      { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'x'.repeat(100_000), origins: [] }) },
      { headers: { 'content-type': 'text/plain' }, body: 'hello' },
      { headers: { 'content-type': 'application/xml' }, body: '<a/>' },
      { headers: { 'content-type': 'application/json' }, body: '{"__proto__":{"admin":true}}' },
      { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 7 }) },
    ];
    for (const [method, path] of [
      ['POST', '/admin/v1/clients'],
      ['PATCH', '/admin/v1/clients/cli_x'],
      ['POST', '/admin/v1/webhooks'],
      ['POST', `/admin/v1/users/${long}/disable`],
    ])
      for (const init of bodies) {
        const answer = await send(method as string, path as string, init);
        const what = `${method} ${path} ${init.headers['content-type']} ${String(init.body).slice(0, 20)}`;
        assert.equal(answer.status, 401, what);
        assert.deepEqual(answer.body, KEY_REFUSED, what);
      }
  });

  it('maps every framework refusal to { code, message } with a key too, and outside the admin API', async () => {
    const authorization = `Bearer ${key}`;
    const cases: Array<[string, string, { headers: Record<string, string>; body?: string }, number]> = [
      ['POST', '/admin/v1/clients', { headers: { authorization, 'content-type': 'application/json' }, body: '{not json' }, 400],
      ['POST', '/admin/v1/clients', { headers: { authorization, 'content-type': 'application/json' }, body: '' }, 400],
      [
        'POST',
        '/admin/v1/clients',
        { headers: { authorization, 'content-type': 'application/json' }, body: `"${'x'.repeat(100_000)}"` },
        413,
      ],
      ['POST', '/admin/v1/clients', { headers: { authorization, 'content-type': 'text/plain' }, body: 'hello' }, 400],
      ['POST', '/admin/v1/clients', { headers: { authorization, 'content-type': 'application/xml' }, body: '<a/>' }, 415],
      ['POST', '/admin/v1/webhooks', { headers: { authorization, 'content-type': 'application/xml' }, body: '<a/>' }, 415],
      ['POST', '/v1/authenticate', { headers: { 'content-type': 'application/json' }, body: '{not json' }, 400],
      ['POST', '/v1/authenticate', { headers: { 'content-type': 'application/xml' }, body: '<a/>' }, 415],
      ['GET', '/v1/client%E0%A4%A', { headers: {} }, 400],
    ];
    for (const [method, path, init, status] of cases) {
      const answer = await send(method, path, init);
      assert.equal(answer.status, status, `${method} ${path} ${answer.text}`);
      assert.equal(answer.body.code, 'ERR_REQUEST_INVALID', path);
      assertOurShape(answer, `${method} ${path}`);
    }
  });

  it("answers the HTTP parser's refusals (a malformed request, headers too large) in the documented shape", async () => {
    const raw = (request: string) =>
      new Promise<string>((resolve, reject) => {
        const { port } = new URL(service.url);
        const socket = connect(Number(port), '127.0.0.1', () => socket.end(request));
        let text = '';
        socket.on('data', (chunk) => {
          text += chunk;
        });
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });
    for (const [request, status] of [
      ['GARBAGE\r\n\r\n', 400],
      [`GET /admin/v1/users HTTP/1.1\r\nHost: x\r\nX-Big: ${'x'.repeat(20_000)}\r\n\r\n`, 431],
    ] as const) {
      const answer = await raw(request);
      assert.match(answer, new RegExp(`^HTTP/1.1 ${status} `), answer.slice(0, 80));
      const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
      assert.equal(body.code, 'ERR_REQUEST_INVALID');
      assert.deepEqual(Object.keys(body).sort(), ['code', 'message']);
    }
  });
});
