import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { DEFAULT_BASE_URL, ServiceClient } from '../src/client.ts';
import { ServiceInitializer } from '../src/index.ts';
import { BASE_URL, CLIENT_ROUTE, fakeFetch } from './helpers.ts';

async function listen(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

test('importing the package and the default instance touches no browser global', () => {
  assert.ok(ServiceInitializer instanceof ServiceClient);
  assert.equal(DEFAULT_BASE_URL, 'http://127.0.0.1:8080');
});

test('every operation before init returns NOT_INITIALIZED', async () => {
  const client = new ServiceClient({ fetch: fakeFetch({}).fetch });
  assert.equal((await client.authenticate('ann@example.com')).status, 'NOT_INITIALIZED');
  assert.equal((await client.verifyEmailOtp({ userid: 'ann@example.com', otp: '123456' })).status, 'NOT_INITIALIZED');
  assert.equal((await client.verifyDevice({ userid: 'ann@example.com' })).status, 'NOT_INITIALIZED');
  assert.equal((await client.initiateMfa({ userid: 'ann@example.com', sessionId: 's' })).status, 'NOT_INITIALIZED');
  const mfa = await client.verifyMfa({ userid: 'ann@example.com', otp: '123456' });
  assert.deepEqual([mfa.status, mfa.success], ['NOT_INITIALIZED', false]);
});

test('init sends the key in x-service-key and reports INITIALIZED', async () => {
  const service = fakeFetch(CLIENT_ROUTE);
  const client = new ServiceClient({ fetch: service.fetch });
  const result = await client.init('pk_test', `${BASE_URL}/`);
  assert.deepEqual(result, { status: 'INITIALIZED', message: 'Initialized for Demo', success: true });
  assert.equal(service.calls[0]?.path, '/v1/client');
  assert.equal(service.calls[0]?.headers['x-service-key'], 'pk_test');
});

test('init maps a refused key to INVALID_API_KEY, with or without an error body', async () => {
  const client = new ServiceClient({ fetch: fakeFetch(CLIENT_ROUTE).fetch });
  const result = await client.init('pk_wrong', BASE_URL);
  assert.deepEqual(result, { status: 'INVALID_API_KEY', message: 'Unknown key', success: false });
  const bare = new ServiceClient({ fetch: async () => new Response('nope', { status: 403 }) });
  assert.equal((await bare.init('pk_x', BASE_URL)).status, 'INVALID_API_KEY');
  assert.equal((await client.authenticate('ann@example.com')).status, 'NOT_INITIALIZED');
});

test('init refuses an unknown cryptoVersion and bad options without a request', async () => {
  const service = fakeFetch(CLIENT_ROUTE);
  const client = new ServiceClient({ fetch: service.fetch });
  assert.equal((await client.init('pk_test', BASE_URL, { cryptoVersion: 'v9' })).status, 'INVALID_REQUEST');
  assert.equal((await client.init('pk_test', BASE_URL, { timeoutMs: -1 })).status, 'INVALID_REQUEST');
  assert.equal((await client.init('pk_test', 'ftp://x')).status, 'INVALID_REQUEST');
  assert.equal((await client.init('', BASE_URL)).status, 'INVALID_API_KEY');
  assert.equal(service.calls.length, 0);
});

test('authenticate refuses a malformed email with INVALID_EMAIL and sends nothing', async () => {
  const service = fakeFetch(CLIENT_ROUTE);
  const client = new ServiceClient({ fetch: service.fetch });
  await client.init('pk_test', BASE_URL);
  for (const bad of ['not-an-email', 'a@b', ' @example.com', '', 42 as unknown as string]) {
    const result = await client.authenticate(bad);
    assert.equal(result.status, 'INVALID_EMAIL', String(bad));
    assert.equal(typeof result.message, 'string');
  }
  assert.equal(service.calls.length, 1);
});

test('bad argument types resolve to INVALID_REQUEST, never a rejection', async () => {
  const client = new ServiceClient({ fetch: fakeFetch(CLIENT_ROUTE).fetch });
  await client.init('pk_test', BASE_URL);
  const anyClient = client as unknown as Record<string, (arg?: unknown) => Promise<{ status: string }>>;
  for (const method of ['verifyEmailOtp', 'verifyDevice', 'initiateMfa', 'verifyMfa']) {
    assert.equal((await anyClient[method]!(undefined)).status, 'INVALID_REQUEST', method);
    assert.equal((await anyClient[method]!(null)).status, 'INVALID_REQUEST', method);
  }
  assert.equal((await client.authenticate('ann@example.com', { rememberDevice: 'yes' as unknown as boolean })).status, 'INVALID_REQUEST');
  assert.equal((await client.authenticate('ann@example.com', { code_challenge: 'x' })).status, 'INVALID_REQUEST');
  assert.equal(
    (
      await client.authenticate('ann@example.com', {
        code_challenge: 'E9cVKx4K8Bv4ms42HAbgUfrLk4s96nXMJYk3dKHgm9M',
        code_challenge_method: 'plain',
      })
    ).status,
    'INVALID_REQUEST',
  );
  assert.equal((await client.verifyDevice({ userid: 'ann@example.com', mfaMethod: 'fax' as never })).status, 'INVALID_REQUEST');
});

test('a fetch that throws synchronously still resolves (NETWORK_ERROR)', async () => {
  const client = new ServiceClient({
    fetch: () => {
      throw new Error('boom');
    },
  });
  const result = await client.init('pk_test', BASE_URL);
  assert.equal(result.status, 'NETWORK_ERROR');
});

test('verifyEmailOtp without a pending login is SESSION_EXPIRED, with no request', async () => {
  const service = fakeFetch(CLIENT_ROUTE);
  const client = new ServiceClient({ fetch: service.fetch });
  await client.init('pk_test', BASE_URL);
  const result = await client.verifyEmailOtp({ userid: 'ann@example.com', otp: '123456' });
  assert.equal(result.status, 'SESSION_EXPIRED');
  assert.equal((await client.verifyDevice({ userid: 'ann@example.com' })).status, 'SESSION_EXPIRED');
  assert.equal((await client.verifyMfa({ userid: 'ann@example.com', otp: '123456' })).status, 'SESSION_EXPIRED');
  assert.equal(service.calls.length, 1);
});

test('a service that never answers gives TIMEOUT after timeoutMs', async () => {
  const { server, url } = await listen(() => {
    // never answers
  });
  try {
    const client = new ServiceClient();
    const started = Date.now();
    const result = await client.init('pk_test', url, { timeoutMs: 200 });
    const elapsed = Date.now() - started;
    assert.equal(result.status, 'TIMEOUT');
    assert.equal(result.success, false);
    assert.ok(elapsed >= 180 && elapsed < 5000, `took ${elapsed} ms`);
  } finally {
    await close(server);
  }
});

test('a closed port gives NETWORK_ERROR', async () => {
  const { server, url } = await listen(() => {});
  await close(server);
  const result = await new ServiceClient().init('pk_test', url, { timeoutMs: 2000 });
  assert.equal(result.status, 'NETWORK_ERROR');
});

test('error bodies map through ErrorStatus, passing attemptsRemaining and retryAfter', async () => {
  const { server, url } = await listen((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.url === '/v1/client') return send(200, { clientId: 'client_1', name: 'Demo', issuer: url });
    if (req.url === '/v1/authenticate') return send(200, { status: 'OTP_NEEDED', message: 'Code sent', deviceToken: 'dt_1' });
    if (req.url === '/v1/email-otp/verify') return send(400, { code: 'ERR_OTP_INVALID', message: 'Wrong code', attemptsRemaining: 3 });
    if (req.url === '/v1/devices') return send(429, { code: 'ERR_RATE_LIMITED', message: 'Slow down', retryAfter: 30 });
    if (req.url === '/v1/mfa/initiate') return send(502, '<html>bad gateway</html>');
    send(500, { code: 'ERR_SOMETHING_NEW', message: 'x' });
  });
  try {
    const client = new ServiceClient();
    assert.equal((await client.init('pk_test', url, { timeoutMs: 2000 })).status, 'INITIALIZED');
    assert.equal((await client.authenticate('ann@example.com')).status, 'OTP_NEEDED');
    assert.deepEqual(await client.verifyEmailOtp({ userid: 'ann@example.com', otp: '000000' }), {
      status: 'INVALID_OTP',
      message: 'Wrong code',
      attemptsRemaining: 3,
    });
    assert.deepEqual(await client.verifyDevice({ userid: 'ann@example.com' }), {
      status: 'RATE_LIMITED',
      message: 'Slow down',
      retryAfter: 30,
    });
    assert.equal((await client.initiateMfa({ userid: 'ann@example.com', sessionId: 's' })).status, 'SERVICE_ERROR');
  } finally {
    await close(server);
  }
});

test('a malformed OTP is refused locally as INVALID_OTP, costing no guess', async () => {
  const service = fakeFetch({
    ...CLIENT_ROUTE,
    'POST /v1/authenticate': () => ({ status: 200, body: { status: 'OTP_NEEDED', message: 'sent', deviceToken: 'dt' } }),
  });
  const client = new ServiceClient({ fetch: service.fetch });
  await client.init('pk_test', BASE_URL);
  await client.authenticate('ann@example.com');
  assert.equal((await client.verifyEmailOtp({ userid: 'ann@example.com', otp: '12345' })).status, 'INVALID_OTP');
  assert.equal(service.calls.length, 2);
});

test('a 2xx answer the library does not understand is SERVICE_ERROR', async () => {
  const client = new ServiceClient({
    fetch: fakeFetch({ ...CLIENT_ROUTE, 'POST /v1/authenticate': () => ({ status: 200, body: { status: 'SUCCESS' } }) }).fetch,
  });
  await client.init('pk_test', BASE_URL);
  assert.equal((await client.authenticate('ann@example.com')).status, 'SERVICE_ERROR');
});

test('a refused second authenticate (rate limited) keeps the code already sent: it still verifies', async () => {
  let authenticates = 0;
  const service = fakeFetch({
    ...CLIENT_ROUTE,
    'POST /v1/authenticate': () =>
      ++authenticates === 1
        ? { status: 200, body: { status: 'OTP_NEEDED', message: 'Code sent', deviceToken: 'dt_first' } }
        : { status: 429, body: { code: 'ERR_RATE_LIMITED', message: 'Wait before asking for another code.', retryAfter: 30 } },
    'POST /v1/email-otp/verify': (call) =>
      call.body?.deviceToken === 'dt_first' && call.body?.otp === '123456'
        ? { status: 200, body: { status: 'SUCCESS', message: 'Verified' } }
        : { status: 400, body: { code: 'ERR_SESSION_EXPIRED', message: 'Start again.' } },
  });
  const client = new ServiceClient({ fetch: service.fetch });
  await client.init('pk_test', BASE_URL);
  assert.equal((await client.authenticate('ann@example.com')).status, 'OTP_NEEDED');
  assert.equal((await client.authenticate('ann@example.com')).status, 'RATE_LIMITED');
  const verified = await client.verifyEmailOtp({ userid: 'ann@example.com', otp: '123456' });
  assert.equal(verified.status, 'SUCCESS', JSON.stringify(verified));
  assert.equal(service.calls.at(-1)?.body?.deviceToken, 'dt_first');
});
