/**
 * Attacks on the admin API (/admin/v1): a caller without a valid admin key (none, malformed,
 * guessed, revoked, or a client's own keys) tries to read or change users; a page in a
 * browser tries to reach it with the operator's help (CORS); a stolen database is searched
 * for usable keys; malformed filters, cursors and page sizes try to get past validation or
 * change state. Every refusal must look the same and change nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestService, type TestService, uniqueEmail } from '../support/helpers.js';

describe('admin API security', () => {
  let service: TestService;
  let key: string;
  let keyId: string;
  before(async () => {
    service = await startTestService({ testMode: true });
    const made = await service.ctx.adminKeys.create('ops', 'cli');
    key = made.key;
    keyId = made.id;
  });
  after(() => service.close());

  const call = async (method: string, path: string, options: { key?: string; headers?: Record<string, string>; body?: unknown } = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${service.url}/admin/v1${path}`, {
      method,
      headers,
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
  };

  it('answers every bad key with the same 401 and no hint: none, malformed, guessed, revoked, a client key', async () => {
    const revoked = await service.ctx.adminKeys.create('old', 'cli');
    await service.ctx.adminKeys.revoke(revoked.id, 'cli');
    const bad = [
      {},
      { headers: { authorization: key } },
      { headers: { authorization: `Basic ${Buffer.from(`x:${key}`).toString('base64')}` } },
      { key: `${key}x` },
      { key: key.slice(0, -1) },
      { key: 'admin_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
      { key: revoked.key },
      { key: service.secretKey },
      { key: service.publishableKey },
      { key: 'x'.repeat(5000) },
    ];
    const answers = await Promise.all(bad.map((options) => call('GET', '/users', options)));
    for (const answer of answers) {
      assert.equal(answer.status, 401);
      assert.deepEqual(answer.body, { code: 'ERR_ADMIN_KEY_INVALID', message: 'A valid admin key is required.' });
      assert.equal(answer.headers.get('www-authenticate'), null);
    }
    assert.equal((await call('GET', '/users', { key })).status, 200);
  });

  it('refuses a state change without a valid key and leaves the user as they were', async () => {
    const user = await service.ctx.enabledUsers.findOrCreate(uniqueEmail('target'), Date.now());
    const id = user?.id as string;
    for (const [method, path] of [
      ['POST', `/users/${id}/disable`],
      ['DELETE', `/users/${id}`],
      ['GET', `/users/${id}/export`],
    ])
      assert.equal((await call(method as string, path as string, { key: service.secretKey })).status, 401);
    assert.equal((await service.ctx.users.find(id)).disabledAt, null);
  });

  it('never answers a browser page: no CORS header on a preflight or on a request with an Origin', async () => {
    const preflight = await fetch(`${service.url}/admin/v1/users`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://app.test:3000',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization',
      },
    });
    assert.equal(preflight.headers.get('access-control-allow-origin'), null);
    assert.equal(preflight.headers.get('access-control-allow-headers'), null);
    const fromPage = await call('GET', '/users', { key, headers: { origin: 'http://app.test:3000' } });
    assert.equal(fromPage.headers.get('access-control-allow-origin'), null);
    assert.equal(fromPage.headers.get('access-control-allow-credentials'), null);
  });

  it('stores keys only as keyed hashes, shows each once, and records its last use', async () => {
    const rows = await service.ctx.db.selectFrom('admin_keys').selectAll().execute();
    assert.ok(!JSON.stringify(rows).includes(key), 'the key itself is nowhere in the table');
    const listed = await service.ctx.adminKeys.list();
    assert.ok(!JSON.stringify(listed).includes(key));
    assert.notEqual(listed.find((k) => k.id === keyId)?.lastUsedAt, null, 'the calls above were recorded as a use');
    const answer = await call('GET', '/admin-keys', { key });
    assert.ok(!JSON.stringify(answer.body).includes(key));
  });

  it('refuses malformed filters, cursors, page sizes and ids with a 400 or 404 and changes nothing', async () => {
    const before = await service.ctx.events.list({ limit: 1000 });
    for (const path of [
      '/users?limit=0',
      '/users?limit=1001',
      '/users?limit=-1',
      '/users?limit=abc',
      '/users?cursor=garbage',
      '/users?email=',
      '/users?unknown=1',
      '/events?type=user.exploded',
      // An empty type filtered nothing and listed every event (found by operator-filters' property test).
      '/events?type=',
      '/events?since=yesterday',
      `/events?cursor=${Buffer.from('["1","x"]').toString('base64url')}`,
    ]) {
      const answer = await call('GET', path, { key });
      assert.equal(answer.status, 400, path);
      assert.equal(answer.body.code, 'ERR_REQUEST_INVALID', path);
    }
    for (const [method, path] of [
      ['GET', '/users/usr_nobody'],
      ['POST', '/users/usr_nobody/disable'],
      ['DELETE', '/users/usr_nobody'],
      ['POST', '/devices/dev_nothing/revoke'],
      ['DELETE', '/clients/cli_nothing'],
    ]) {
      const answer = await call(method as string, path as string, { key });
      assert.equal(answer.status, 404, path);
    }
    const wrongTypes = [
      ['POST', '/clients', { name: 7, origins: ['https://x.test'] }],
      ['POST', '/clients', { name: 'X', origins: [] }],
      ['POST', '/clients', { name: 'X', origins: ['javascript:alert(1)'] }],
      ['PATCH', `/clients/${service.clientId}`, { mfaPolicy: 'sometimes' }],
      ['PATCH', `/clients/${service.clientId}`, { mfaPolicy: 'required', extra: true }],
    ] as const;
    for (const [method, path, body] of wrongTypes) {
      const answer = await call(method, path, { key, body });
      assert.equal(answer.status, 400, `${method} ${path} ${JSON.stringify(body)}`);
    }
    assert.equal((await service.ctx.clients.findById(service.clientId))?.mfaPolicy, 'optional');
    const afterwards = await service.ctx.events.list({ limit: 1000 });
    assert.deepEqual(afterwards.events, before.events, 'no event: nothing changed');
  });
});
