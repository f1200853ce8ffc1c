/**
 * The DBSC fallback in Chromium WITHOUT DBSC (issue 27): the hosted page binds the service
 * session to its own non-extractable WebCrypto key at sign-in; once the short cookie's lifetime
 * is over, SSO to a second app passes the renewal interstitial, whose proof of that key renews
 * it; the same cookies copied into a fresh browser context (no key in its IndexedDB) renew
 * nothing and get the sign-in. The service runs in-process on plain http (127.0.0.1 is a secure
 * context for WebCrypto) with a clock the test moves past the short lifetime: no waiting.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type Browser, type BrowserContext, chromium } from 'playwright-core';
import { defaults, loadConfig, type RunningService, startService } from 'service-idp';
import { CHROMIUM, screenshot } from './harness.ts';
import { authorizeUrl, hostedEmailSignIn } from './support/in-process.ts';
import { assertAccessible } from './visual.ts';

describe('session renewal by the hosted page`s key in Chromium without DBSC', { timeout: 3 * 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'service-session-key-'));
  let offsetMs = 0;
  let service: RunningService;
  let browser: Browser;
  /** Two apps' callbacks: plain pages on loopback. */
  let apps: Server;
  let first: { clientId: string; redirectUri: string };
  let second: { clientId: string; redirectUri: string };
  const pastShortCookie = () => {
    offsetMs += (defaults.DBSC_COOKIE_TTL_SECONDS + 1) * 1000;
  };

  before(async () => {
    service = await startService(loadConfig({ port: '0', data: join(dir, 'data') }, { SERVICE_IDP_LOG_LEVEL: 'warn' }), {
      now: () => Date.now() + offsetMs,
    });
    apps = createHttpServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('the app'));
    await new Promise<void>((resolve) => apps.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(apps.address() as { port: number }).port}`;
    const app = async (name: string, path: string) => {
      const redirectUri = `${base}${path}`;
      const { clientId } = await service.ctx.clients.create({ name, origins: [], redirectUris: [redirectUri] });
      return { clientId, redirectUri };
    };
    first = await app('First App', '/first');
    second = await app('Second App', '/second');
    // No DeviceBoundSessions feature: this Chromium is a browser without DBSC.
    browser = await chromium.launch({ executablePath: CHROMIUM });
  });
  after(async () => {
    await browser?.close();
    await new Promise((resolve) => apps?.close(resolve));
    await service?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Goes to `app`'s authorization request in `context`; where it lands: a code, an error, or the sign-in page. */
  async function visit(context: BrowserContext, app: typeof first, extra: Record<string, string> = {}) {
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    const renewals: number[] = [];
    page.on('response', (response) => {
      if (response.url().endsWith('/signin/session/renew')) renewals.push(response.status());
    });
    await page.goto(await authorizeUrl(service.url, app, extra));
    await page.waitForURL((url) => url.href.startsWith(`${app.redirectUri}?`) || url.pathname === '/signin');
    const url = new URL(page.url());
    await page.close();
    const landed = url.pathname === '/signin' ? 'sign-in' : url.searchParams.has('code') ? 'code' : (url.searchParams.get('error') ?? '');
    return { landed, renewals };
  }

  const sessionRow = () => service.ctx.db.selectFrom('sign_in_sessions').select(['dbsc_jwk', 'dbsc_id']).executeTakeFirstOrThrow();

  it('signs in; past the short cookie SSO renews through the page`s key; copied cookies renew nothing', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    await page.goto(await authorizeUrl(service.url, first));
    await hostedEmailSignIn(page, service, `page-key.${Date.now().toString(36)}@example.com`, first.redirectUri);
    await page.close();

    const row = await sessionRow();
    assert.equal(JSON.parse(row.dbsc_jwk ?? '{}').crv, 'P-256', 'the sign-in bound the session to the page`s key');
    assert.equal(row.dbsc_id, null, 'no DBSC here');
    assert.ok((await context.cookies(service.url)).some((c) => c.name === 'service_session_bound' && c.httpOnly));
    assert.deepEqual(await visit(context, second), { landed: 'code', renewals: [] }, 'within the short lifetime: plain SSO');

    pastShortCookie();
    assert.deepEqual(await visit(context, second), { landed: 'code', renewals: [200] }, 'SSO renewed by the key');
    const cookies = await context.cookies(service.url);

    // The thief: the same cookies in a fresh context (no key in its IndexedDB), once the renewed short cookie is over.
    pastShortCookie();
    const thief = await browser.newContext();
    await thief.addCookies(cookies);
    assert.deepEqual(await visit(thief, second, { prompt: 'none' }), { landed: 'login_required', renewals: [200] });
    assert.ok(!(await thief.cookies(service.url)).some((c) => c.name === 'service_session'), 'its copy was dropped');
    assert.equal((await visit(thief, first)).landed, 'sign-in', 'the thief is asked to sign in');

    // The owner is still signed in: the session lives where the key is.
    assert.deepEqual(await visit(context, first), { landed: 'code', renewals: [200] });
    await thief.close();
    await context.close();
  });

  it('the interstitial has no serious axe-core violation and fits a phone', async () => {
    const context = await browser.newContext({ viewport: { width: 360, height: 740 } });
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    await page.goto(await authorizeUrl(service.url, first));
    await hostedEmailSignIn(page, service, `page-key-axe.${Date.now().toString(36)}@example.com`, first.redirectUri);
    pastShortCookie();
    // Its script held back, the interstitial stays on screen.
    await page.route('**/signin/renew.js', (route) => route.abort());
    await page.goto(await authorizeUrl(service.url, second));
    await page.getByRole('heading', { name: 'Checking this browser' }).waitFor();
    await assertAccessible(page, 'the renewal interstitial');
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'no horizontal scrolling');
    await screenshot(page, 'session-key-interstitial');
    await context.close();
  });
});
