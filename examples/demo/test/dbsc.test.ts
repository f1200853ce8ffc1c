/**
 * Device Bound Session Credentials end to end in Chromium (issue 27). Debian's Chromium runs
 * DBSC headless with the DeviceBoundSessions feature and its software-keys testing flag, over
 * HTTPS with a certificate it accepts (`--ignore-certificate-errors-spki-list`; plain http does
 * not register): so the service runs in-process behind the TLS front (support/tls-front.ts), its issuer on
 * https://localhost and a clock the test can move. The browser signs in on the hosted pages,
 * registers the session with its own key, and keeps it alive by refreshing; the same cookies
 * copied into another browser context stop working once the short cookie's lifetime is over.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';
import { defaults, loadConfig, type RunningService, startService } from 'service-idp';
import { CHROMIUM, freePort, screenshot } from './harness.ts';
import { authorizeUrl as appAuthorizeUrl, hostedEmailSignIn } from './support/in-process.ts';
import { startTlsFront, type TlsFront } from './support/tls-front.ts';

describe('DBSC for the service session in Chromium', { timeout: 3 * 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'service-dbsc-'));
  let offsetMs = 0;
  let service: RunningService;
  let front: TlsFront;
  let browser: Browser;
  let issuer: string;
  let clientId: string;
  /** The app's callback: a plain page on loopback (the service's redirects go there). */
  let app: import('node:http').Server;
  let REDIRECT: string;

  before(async () => {
    const port = await freePort();
    issuer = `https://localhost:${port}`;
    service = await startService(loadConfig({ port: '0', data: join(dir, 'data'), issuer }, { SERVICE_IDP_LOG_LEVEL: 'warn' }), {
      now: () => Date.now() + offsetMs,
    });
    front = await startTlsFront(port, () => service.ctx.config.port, process.env.DEBUG_DBSC ? (line) => console.log(line) : undefined);
    app = createHttpServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('the app'));
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    REDIRECT = `http://127.0.0.1:${(app.address() as { port: number }).port}/cb`;
    ({ clientId } = await service.ctx.clients.create({ name: 'Bound App', origins: [], redirectUris: [REDIRECT] }));
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--enable-features=DeviceBoundSessions,EnableBoundSessionCredentialsSoftwareKeysForManualTesting', front.chromiumArg],
    });
  });
  after(async () => {
    await browser?.close();
    await front?.close();
    await new Promise((resolve) => app?.close(resolve));
    await service?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const authorizeUrl = (extra: Record<string, string> = {}) => appAuthorizeUrl(issuer, { clientId, redirectUri: REDIRECT }, extra);

  /** Where /authorize with prompt=none sends this context: a code (signed in) or an error. */
  async function silentSignIn(context: BrowserContext): Promise<'code' | string> {
    const page = await context.newPage();
    await page.goto(await authorizeUrl({ prompt: 'none' }));
    await page.waitForURL(`${REDIRECT}?**`);
    const params = new URL(page.url()).searchParams;
    await page.close();
    return params.has('code') ? 'code' : (params.get('error') ?? 'none');
  }

  async function newContext() {
    return browser.newContext();
  }

  it('binds the session to the browser`s key; copied cookies die with the short cookie, the browser refreshes', async () => {
    const context = await newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    const email = `bound.${Date.now().toString(36)}@example.com`;
    await page.goto(await authorizeUrl());
    await hostedEmailSignIn(page, service, email, REDIRECT);

    // Chromium registers on its own after the sign-in's answer: the session row gets its key and a
    // DBSC session id (the page's own key, bound by the same answer, is replaced: DBSC wins).
    const deadline = Date.now() + 15_000;
    let bound: { dbsc_jwk: string | null } | undefined;
    while (Date.now() < deadline) {
      bound = await service.ctx.db.selectFrom('sign_in_sessions').select('dbsc_jwk').where('dbsc_id', 'is not', null).executeTakeFirst();
      if (bound) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.ok(bound?.dbsc_jwk, 'Chromium registered the session with a key of its own');
    assert.equal(JSON.parse(bound.dbsc_jwk).kty, 'EC');
    const cookies = await context.cookies(issuer);
    assert.ok(
      cookies.some((c) => c.name === '__Host-service_session_bound'),
      'the short cookie is set',
    );
    assert.equal(await silentSignIn(context), 'code');
    await screenshot(page, 'dbsc-signed-in');

    // The thief: the very same cookies in another context, which holds no key.
    const thief = await newContext();
    await thief.addCookies(cookies);
    assert.equal(await silentSignIn(thief), 'code', 'within the short lifetime the copy works');
    offsetMs += (defaults.DBSC_COOKIE_TTL_SECONDS + 1) * 1000;
    assert.equal(await silentSignIn(thief), 'login_required', 'after it, the copy is refused');

    // The browser that holds the key: its short cookie gone, it refreshes by proof before the request.
    await context.clearCookies({ name: '__Host-service_session_bound' });
    assert.equal(await silentSignIn(context), 'code', 'the browser refreshed with its key and stays signed in');
    await thief.close();
    await context.close();
  });
});
