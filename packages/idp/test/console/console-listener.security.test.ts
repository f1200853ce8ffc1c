/**
 * The operator console on a listener of its own (--console-port; docs/operations.md, "Where it is
 * served"): the public listener must not serve it (a proxy routing everything to the main port
 * would expose it), a session made for the console's origin must not act from the issuer's origin
 * (a page on the public side riding the operator's cookie, which every port of the host receives),
 * and machines' admin keys stay on the main listener. A bad setting stops the start (exit 2).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { CONSOLE_CSP } from '../../src/console/routes.js';
import { ConfigError, loadConfig } from '../../src/index.js';
import { consoleCall, consoleCallback, consoleUser, operatorSession } from '../support/console-helpers.js';
import { runCli, startTestService, type TestService } from '../support/helpers.js';

describe('the operator console on its own listener', () => {
  let service: TestService;
  let consoleUrl: string;
  before(async () => {
    service = await startTestService({ testMode: true, env: { SERVICE_IDP_CONSOLE_PORT: '0' } });
    consoleUrl = service.consoleUrl as string;
  });
  after(() => service.close());

  const disabled = async (userId: string) => (await service.ctx.users.show(userId)).disabledAt !== null;

  it('is served on its own loopback origin, and /admin on the main listener is a 404', async () => {
    assert.match(consoleUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(new URL(consoleUrl).port, new URL(service.url).port);
    for (const path of [
      '/admin',
      '/admin/signin',
      '/admin/callback?code=x&state=y',
      '/admin/session',
      '/admin/console.js',
      '/admin/console.css',
    ]) {
      assert.equal((await fetch(`${service.url}${path}`, { redirect: 'manual' })).status, 404, `main ${path}`);
    }
    assert.equal((await fetch(`${service.url}/admin/signout`, { method: 'POST' })).status, 404);
    const page = await fetch(`${consoleUrl}/admin`, { redirect: 'manual' });
    assert.equal(page.status, 303);
    assert.equal(page.headers.get('location'), '/admin/signin');
    assert.equal((await fetch(`${consoleUrl}/admin/console.js`)).status, 200);
    // The console listener serves the console only.
    assert.equal((await fetch(`${consoleUrl}/.well-known/openid-configuration`)).status, 404);
    assert.equal((await fetch(`${consoleUrl}/authorize`)).status, 404);
  });

  it("signs in through the issuer's hosted sign-in and comes back to the console's URL, its page as strict as before", async () => {
    const user = await consoleUser(service, 'admin');
    const { answer, authorize, session, sessionLine } = await consoleCallback(service, user, ['otp', 'mfa', 'totp']);
    assert.equal(authorize.origin, service.url, 'the sign-in runs at the issuer');
    assert.equal(authorize.searchParams.get('redirect_uri'), `${consoleUrl}/admin/callback`);
    // The issuer's /authorize takes the console client's new redirect URI and opens its hosted sign-in.
    const hosted = await fetch(authorize, { redirect: 'manual' });
    assert.equal(hosted.status, 303);
    assert.match(hosted.headers.get('location') ?? '', /\/signin\?request=/);
    assert.equal(answer.status, 303);
    assert.equal(answer.headers.get('location'), '/admin');
    assert.match(sessionLine ?? '', /; HttpOnly; SameSite=Strict/);
    const cookie = `service_console=${session}`;
    const page = await fetch(`${consoleUrl}/admin`, { headers: { cookie } });
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('content-security-policy'), CONSOLE_CSP);
    assert.match(CONSOLE_CSP, /frame-ancestors 'none'/);
    assert.equal(page.headers.get('x-frame-options'), 'DENY');
    // The browser sends the cookie to every port of the host: the main listener ignores it.
    assert.equal((await fetch(`${service.url}/admin/session`, { headers: { cookie } })).status, 404);
    const main = await fetch(`${service.url}/admin/v1/users`, {
      headers: { cookie, origin: service.url, 'sec-fetch-site': 'same-origin' },
    });
    assert.equal(main.status, 401, 'the main listener takes admin keys only');
    // And its OpenAPI document says so: no admin operation lists the console's session there.
    const document = await (await fetch(`${service.url}/openapi.json`)).json();
    const admin = Object.entries(document.paths as Record<string, Record<string, { security?: unknown }>>).filter(([path]) =>
      path.startsWith('/admin/v1/'),
    );
    assert.ok(admin.length > 10);
    for (const [path, operations] of admin)
      for (const operation of Object.values(operations)) assert.deepEqual(operation.security, [{ adminKey: [] }], path);
  });

  it("CSRF: a console-session call carrying the main listener's Origin is refused and changes nothing", async () => {
    const admin = await operatorSession(service, 'admin');
    const victim = await consoleUser(service);
    const refused = await consoleCall(service, admin, 'POST', `/users/${victim.userId}/disable`, { origin: service.url });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.code, 'ERR_FORBIDDEN');
    assert.equal(await disabled(victim.userId), false);
    const signOut = await fetch(`${consoleUrl}/admin/signout`, {
      method: 'POST',
      headers: { cookie: `service_console=${admin.session}`, origin: service.url, 'x-console-csrf': admin.csrfToken },
    });
    assert.equal(signOut.status, 403, 'nor a sign-out from the main origin');
    const done = await consoleCall(service, admin, 'POST', `/users/${victim.userId}/disable`);
    assert.equal(done.status, 200);
    assert.equal(await disabled(victim.userId), true);
  });

  it("machines' admin keys work on the main listener and are refused on the console's", async () => {
    const { key } = await service.ctx.adminKeys.create('ops', 'cli');
    const authorization = `Bearer ${key}`;
    assert.equal((await fetch(`${service.url}/admin/v1/users`, { headers: { authorization } })).status, 200);
    assert.equal((await fetch(`${service.url}/admin/v1/operators`, { headers: { authorization } })).status, 200);
    const there = await fetch(`${consoleUrl}/admin/v1/users`, { headers: { authorization } });
    assert.equal(there.status, 401);
    assert.match((await there.json()).message, /main listener/);
  });
});

describe('console listener settings', () => {
  const refused = (env: Record<string, string>, flags: Record<string, string> = {}) =>
    assert.throws(() => loadConfig({ port: '8080', ...flags }, env), ConfigError, JSON.stringify(env));

  it('refuses a bad port, URL or combination with a clear message', () => {
    refused({ SERVICE_IDP_CONSOLE_PORT: 'abc' });
    refused({ SERVICE_IDP_CONSOLE_PORT: '70000' });
    refused({ SERVICE_IDP_CONSOLE_PORT: '-1' });
    refused({ SERVICE_IDP_CONSOLE_PORT: '8080' });
    refused({ SERVICE_IDP_CONSOLE_HOST: '127.0.0.1' });
    refused({ SERVICE_IDP_CONSOLE_PORT: '9443', SERVICE_IDP_CONSOLE_URL: 'ftp://console.example' });
    refused({ SERVICE_IDP_CONSOLE_PORT: '9443', SERVICE_IDP_CONSOLE_URL: 'https://console.example/admin' });
    refused({ SERVICE_IDP_CONSOLE_PORT: '9443', SERVICE_IDP_CONSOLE_URL: 'http://127.0.0.1:8080' });
    const production = { NODE_ENV: 'production', SMTP_URL: 'smtp://mail.example', SERVICE_IDP_ISSUER: 'https://id.example' };
    refused({ ...production, SERVICE_IDP_CONSOLE_PORT: '9443' });
    const ok = loadConfig(
      { port: '8080' },
      { ...production, SERVICE_IDP_CONSOLE_PORT: '9443', SERVICE_IDP_CONSOLE_URL: 'https://console.example/' },
    );
    assert.deepEqual(ok.console, { host: '127.0.0.1', port: 9443, url: 'https://console.example' });
    assert.equal(loadConfig({ port: '8080' }, {}).console, undefined);
  });

  it('start exits 2 on a bad --console-port or console URL, naming the setting', async () => {
    const data = mkdtempSync(join(tmpdir(), 'service-idp-console-listener-'));
    try {
      const flag = await runCli(['start', '--port', '0', '--data', data, '--console-port', 'x1']);
      assert.equal(flag.code, 2);
      assert.match(flag.stderr, /invalid console port x1/);
      const url = await runCli(['start', '--port', '0', '--data', data, '--console-port', '0'], {
        SERVICE_IDP_CONSOLE_URL: 'https://console.example/path',
      });
      assert.equal(url.code, 2);
      assert.match(url.stderr, /SERVICE_IDP_CONSOLE_URL must be an origin only/);
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });
});
