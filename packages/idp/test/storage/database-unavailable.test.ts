/**
 * PostgreSQL going away under a running node: a TCP proxy between the service and the
 * database cuts every connection and refuses new ones (a restart or a crash), or accepts
 * and never answers (a network black hole). Requests must fail fast with 503
 * ERR_UNAVAILABLE, /readyz must say so, the process must stay up, and once the database is
 * reachable again the node must serve without a restart.
 */
import assert from 'node:assert/strict';
import { createServer, connect as netConnect, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { DB_CONNECT_TIMEOUT_MS } from '../../src/defaults.js';
import { startTestService, TEST_DATABASE_URL, type TestService, uniqueEmail } from '../support/helpers.js';

/** Forwards 127.0.0.1:port to the database; `cut`, `blackhole` and `restore` simulate outages. */
async function startProxy(target: URL) {
  const sockets = new Set<Socket>();
  let mode: 'forward' | 'blackhole' = 'forward';
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server: Server = createServer((client) => {
    track(client);
    if (mode === 'blackhole') return;
    const upstream = netConnect(Number(target.port || 5432), target.hostname);
    track(upstream);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.pipe(upstream).pipe(client);
  });
  const listen = () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  let port = 0;
  await listen();
  port = (server.address() as { port: number }).port;
  const dropAll = () => {
    for (const socket of sockets) socket.destroy();
  };
  return {
    url: Object.assign(new URL(target.href), { port: String(port), hostname: '127.0.0.1' }).toString(),
    /** Drops every connection and stops listening: connects are refused. */
    async cut() {
      dropAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    /** Listening again, but connections are accepted and never answered. */
    async blackhole() {
      mode = 'blackhole';
      await listen();
    },
    async restore() {
      dropAll();
      mode = 'forward';
      if (!server.listening) await listen();
    },
    async close() {
      dropAll();
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('PostgreSQL unreachable', { skip: !TEST_DATABASE_URL && 'needs SERVICE_TEST_DATABASE_URL' }, () => {
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  let service: TestService;
  before(async () => {
    proxy = await startProxy(new URL(TEST_DATABASE_URL as string));
    service = await startTestService({ testMode: true, databaseUrl: proxy.url });
  });
  after(async () => {
    await proxy.restore();
    await service.close();
    await proxy.close();
  });

  const authenticate = async () => {
    const started = Date.now();
    const response = await service.post('/v1/authenticate', { userid: uniqueEmail(), cryptoVersion: 'v1' });
    return { ...response, ms: Date.now() - started };
  };
  const ready = async () => (await fetch(`${service.url}/readyz`)).status;
  const token = async () =>
    fetch(service.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: 'x',
        client_id: service.clientId,
        client_secret: service.secretKey,
      }),
    });

  it('serves while the database answers', async () => {
    assert.equal((await authenticate()).body.status, 'OTP_NEEDED');
    assert.equal(await ready(), 200);
  });

  it('answers 503 ERR_UNAVAILABLE at once when connections drop and are refused', async () => {
    await proxy.cut();
    const result = await authenticate();
    assert.equal(result.status, 503);
    assert.equal(result.body.code, 'ERR_UNAVAILABLE');
    assert.equal(result.headers.get('retry-after'), '1');
    assert.ok(result.ms < 1000, `took ${result.ms} ms`);
    const tokenResponse = await token();
    assert.equal(tokenResponse.status, 503);
    assert.equal((await tokenResponse.json()).code, 'ERR_UNAVAILABLE');
    assert.equal(await ready(), 503);
    assert.equal((await fetch(`${service.url}/healthz`)).status, 200, 'the process itself is alive');
  });

  it('answers 503 within the connect timeout when the database does not answer at all', async () => {
    await proxy.blackhole();
    const result = await authenticate();
    assert.equal(result.status, 503);
    assert.equal(result.body.code, 'ERR_UNAVAILABLE');
    assert.ok(result.ms >= DB_CONNECT_TIMEOUT_MS - 100 && result.ms < DB_CONNECT_TIMEOUT_MS + 1500, `took ${result.ms} ms`);
  });

  it('recovers by itself once the database is back', async () => {
    await proxy.restore();
    assert.equal(await ready(), 200);
    assert.equal((await authenticate()).body.status, 'OTP_NEEDED');
    // A code minted after the outage is exchanged normally: the whole flow works again.
    const email = uniqueEmail();
    const a = await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1' });
    const v = await service.post('/v1/email-otp/verify', { userid: email, deviceToken: a.body.deviceToken, otp: a.body.code });
    assert.equal(v.status, 200);
  });
});
