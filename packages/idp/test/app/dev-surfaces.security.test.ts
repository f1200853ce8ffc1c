/**
 * Attack: reading live codes or operational data from surfaces meant for a developer or an
 * operator. The development inbox (/dev/mail, /dev/sms) shows every live sign-in and MFA code:
 * a remote client that reaches it (directly, through a trusted reverse proxy on the same
 * machine, or by DNS rebinding a page on another name to 127.0.0.1) signs in as anyone; a
 * page that frames it, or a cache that keeps it, leaks the codes. /metrics on the public
 * listener tells anyone the service's traffic and error rates.
 *
 * Rules tested here: the inbox is off unless explicitly enabled (and refused in production),
 * served only to this machine's direct requests, never cached, framed or scripted; /metrics is
 * only on a separate loopback listener and the nginx example routes neither; every answer
 * follows protocol.md's caching rule.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config.js';
import { ConfigError } from '../../src/errors.js';
import { APP_ORIGIN, startTestService, type TestService, uniqueEmail } from '../support/helpers.js';

const EXAMPLE_CONF = fileURLToPath(new URL('../../../../docs/nginx.example.conf', import.meta.url));
const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx', '/usr/local/sbin/nginx'].find((path) => existsSync(path));

/** A GET with headers fetch will not set (Host), over loopback. */
function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('development inbox', () => {
  it('is off unless explicitly enabled', async () => {
    const service = await startTestService({ testMode: true });
    try {
      assert.equal(service.devInboxUrl, undefined);
      for (const path of ['/dev/mail', '/dev/sms']) assert.equal((await get(service.url + path)).status, 404, path);
    } finally {
      await service.close();
    }
  });

  it('is refused in production', () => {
    assert.throws(
      () =>
        loadConfig(
          { port: '0', 'dev-inbox': true },
          { NODE_ENV: 'production', SMTP_URL: 'smtp://127.0.0.1:1', SERVICE_IDP_ISSUER: 'https://id.example' },
        ),
      (error: unknown) => error instanceof ConfigError && /dev-inbox is refused/.test(error.message),
    );
  });

  describe('when enabled, behind a trusted proxy on this machine', () => {
    let service: TestService;
    before(async () => {
      service = await startTestService({ env: { SERVICE_IDP_DEV_INBOX: '1', SERVICE_IDP_TRUST_PROXY: '127.0.0.1' } });
      await service.post('/v1/authenticate', { userid: uniqueEmail('inbox'), cryptoVersion: 'v1' });
    });
    after(() => service.close());

    it('serves a direct request from this machine, never cached, framed, scripted or loading anything', async () => {
      assert.equal(service.devInboxUrl, `${service.url}/dev/mail`);
      const page = await get(`${service.url}/dev/mail`);
      assert.equal(page.status, 200);
      assert.match(page.body, /sign-in code/);
      assert.equal(page.headers['cache-control'], 'no-store');
      const csp = String(page.headers['content-security-policy']);
      assert.match(csp, /(^|; )default-src 'none'(;|$)/);
      assert.match(csp, /(^|; )frame-ancestors 'none'(;|$)/);
      assert.doesNotMatch(csp, /unsafe-inline|script-src/);
      assert.equal(page.headers['x-frame-options'], 'DENY');
      for (const [path, accept] of [
        ['/dev/mail', 'application/json'],
        ['/dev/sms', '*/*'],
      ] as const) {
        const json = await get(service.url + path, { accept });
        assert.equal(json.status, 200, path);
        assert.equal(json.headers['cache-control'], 'no-store', path);
      }
    });

    it('refuses a request a proxy forwarded, whatever the client claims', async () => {
      for (const headers of [
        { 'x-forwarded-for': '203.0.113.7' },
        { 'x-forwarded-for': '127.0.0.1' },
        { forwarded: 'for=127.0.0.1' },
        { 'x-real-ip': '127.0.0.1' },
        { via: '1.1 proxy' },
        { 'x-forwarded-host': 'localhost' },
      ]) {
        for (const path of ['/dev/mail', '/dev/sms']) {
          const r = await get(service.url + path, headers);
          assert.equal(r.status, 404, `${path} ${JSON.stringify(headers)}`);
          assert.doesNotMatch(r.body, /\d{6}/);
        }
      }
    });

    it('refuses a Host that is not a loopback name (DNS rebinding)', async () => {
      const port = new URL(service.url).port;
      for (const host of [`evil.example:${port}`, `127.0.0.1.nip.io:${port}`, `localhost.evil.example:${port}`]) {
        assert.equal((await get(`${service.url}/dev/mail`, { host })).status, 404, host);
      }
      assert.equal((await get(`${service.url}/dev/mail`, { host: `localhost:${port}` })).status, 200);
    });
  });
});

describe('metrics', () => {
  it('are not on the public listener by default', async () => {
    const service = await startTestService();
    try {
      assert.equal(service.metricsUrl, undefined);
      assert.equal((await get(`${service.url}/metrics`)).status, 404);
    } finally {
      await service.close();
    }
  });

  it('are served on a separate loopback listener when configured, never on the public one', async () => {
    const service = await startTestService({ env: { SERVICE_IDP_METRICS_PORT: '0' } });
    try {
      assert.match(service.metricsUrl ?? '', /^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      assert.notEqual(new URL(service.metricsUrl as string).port, new URL(service.url).port);
      assert.equal((await get(`${service.url}/metrics`)).status, 404, 'not on the public listener');
      const email = uniqueEmail('metrics');
      await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1' });
      await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1' }); // 429: a resend too soon
      const r = await get(service.metricsUrl as string);
      assert.equal(r.status, 200);
      assert.match(String(r.headers['content-type']), /^text\/plain; version=0\.0\.4/);
      assert.equal(r.headers['cache-control'], 'no-store');
      assert.match(r.body, /^service_idp_http_requests_total\{method="POST",route="\/v1\/authenticate",status="200"\} 1$/m);
      assert.match(r.body, /^service_idp_http_requests_total\{method="POST",route="\/v1\/authenticate",status="429"\} 1$/m);
      assert.match(r.body, /^# TYPE service_idp_http_requests_total counter$/m);
      assert.doesNotMatch(r.body, new RegExp(email.replace(/[.]/g, '\\.')), 'no addresses in metrics');
      assert.equal((await get(service.metricsUrl?.replace('/metrics', '/dev/mail') as string)).status, 404, 'nothing else there');
    } finally {
      await service.close();
    }
  });
});

describe('nginx example (docs/nginx.example.conf)', () => {
  it('routes neither /metrics nor the development inbox, even to a node that serves them locally', {
    skip: !NGINX && 'nginx not installed',
  }, async () => {
    const service = await startTestService({ env: { SERVICE_IDP_DEV_INBOX: '1', SERVICE_IDP_TRUST_PROXY: '127.0.0.1' } });
    const prefix = mkdtempSync(join(tmpdir(), 'service-idp-nginx-'));
    const nodePort = new URL(service.url).port;
    const probe = await startTestService();
    const port = Number(new URL(probe.url).port); // a free loopback port, released below
    await probe.close();
    const conf = readFileSync(EXAMPLE_CONF, 'utf8')
      .replace(/server 127\.0\.0\.1:808[1-9]/g, `server 127.0.0.1:${nodePort}`)
      .replace('listen 127.0.0.1:8080;', `listen 127.0.0.1:${port};`)
      .replace(
        'http {',
        `http {\n  access_log off;\n${['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${prefix}/${t};`).join('\n')}`,
      );
    writeFileSync(join(prefix, 'nginx.conf'), conf);
    const child = spawn(
      NGINX as string,
      ['-p', prefix, '-c', join(prefix, 'nginx.conf'), '-g', `daemon off; pid ${prefix}/nginx.pid; error_log ${prefix}/error.log;`],
      { stdio: 'ignore' },
    );
    try {
      const proxied = `http://127.0.0.1:${port}`;
      for (let i = 0; ; i++) {
        const ready = await get(`${proxied}/healthz`).catch(() => undefined);
        if (ready?.status === 200) break;
        // 20 s: a loaded two-core machine starts nginx slowly; its own log says why it did not.
        if (i > 400)
          throw new Error(
            `nginx did not start: ${existsSync(join(prefix, 'error.log')) ? readFileSync(join(prefix, 'error.log'), 'utf8').slice(-500) : 'no error log'}`,
          );
        await new Promise((r) => setTimeout(r, 50));
      }
      for (const path of ['/metrics', '/dev/mail', '/dev/sms', '/dev/mail?x=1']) {
        assert.equal((await get(proxied + path, { host: 'localhost' })).status, 404, path);
      }
      assert.equal((await get(`${service.url}/dev/mail`)).status, 200, 'the node itself serves its own machine');
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      rmSync(prefix, { recursive: true, force: true });
      await service.close();
    }
  });
});

describe('caching rule (protocol.md): only the public documents are cacheable, everything else is no-store', () => {
  let service: TestService;
  before(async () => {
    service = await startTestService({ env: { SERVICE_IDP_DEV_INBOX: '1' } });
  });
  after(() => service.close());

  it('holds for every answer, inside and outside /v1, success or failure', async () => {
    const PUBLIC = 'public, max-age=300';
    // The script's own rule (defaults.ts SDK_*): an hour on its protocol-versioned path, revalidated by ETag.
    const SCRIPT = 'public, max-age=3600, stale-while-revalidate=86400';
    const key = { origin: APP_ORIGIN, 'x-service-key': service.publishableKey };
    const json = { 'content-type': 'application/json', ...key };
    const cases: Array<[string, string, RequestInit, string]> = [
      ['GET', '/.well-known/jwks.json', {}, PUBLIC],
      ['GET', '/.well-known/openid-configuration', {}, PUBLIC],
      ['GET', '/sdk/v1/service-web.js', {}, SCRIPT],
      ['GET', '/openapi.json', {}, PUBLIC],
      ['GET', '/admin/v1/users', {}, 'no-store'],
      ['GET', '/healthz', {}, 'no-store'],
      ['GET', '/readyz', {}, 'no-store'],
      ['GET', '/dev/mail', {}, 'no-store'],
      ['GET', '/v1/client', { headers: key }, 'no-store'],
      ['GET', '/v1/client', {}, 'no-store'],
      ['OPTIONS', '/v1/authenticate', { headers: { origin: APP_ORIGIN, 'access-control-request-method': 'POST' } }, 'no-store'],
      ['POST', '/v1/device-challenges', { headers: json, body: '{}' }, 'no-store'],
      [
        'POST',
        '/v1/authenticate',
        { headers: json, body: JSON.stringify({ userid: uniqueEmail('cache'), cryptoVersion: 'v1' }) },
        'no-store',
      ],
      ['POST', '/v1/authenticate', { headers: json, body: '{"userid":"not an address","cryptoVersion":"v1"}' }, 'no-store'],
      ['POST', '/v1/email-otp/verify', { headers: json, body: '{}' }, 'no-store'],
      ['POST', '/v1/devices', { headers: json, body: '{}' }, 'no-store'],
      ['POST', '/v1/mfa/initiate', { headers: json, body: '{}' }, 'no-store'],
      ['POST', '/v1/mfa/verify', { headers: json, body: '{}' }, 'no-store'],
      ['POST', '/v1/delegation', { headers: { 'content-type': 'application/jose' }, body: 'x.y.z' }, 'no-store'],
      [
        'POST',
        '/oauth/token',
        { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=password' },
        'no-store',
      ],
      ['GET', '/oauth/userinfo', {}, 'no-store'],
      ['GET', '/no/such/path', {}, 'no-store'],
      ['DELETE', '/healthz', {}, 'no-store'],
    ];
    for (const [method, path, init, expected] of cases) {
      const r = await fetch(service.url + path, { method, ...init });
      await r.arrayBuffer();
      assert.equal(r.headers.get('cache-control'), expected, `${method} ${path} (${r.status})`);
    }
  });
});
