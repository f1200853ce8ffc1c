/**
 * Logout that reaches the apps, with relying parties nobody on this team wrote (issue 36): Apache
 * httpd with mod_auth_openidc (support/mod-auth-openidc.ts: a private apache2 -X per app, the
 * code posted back by form_post) beside express-openid-connect apps (src/oidc-app.ts), one
 * Chromium browser signed in to all of them by SSO.
 * - Back-channel: signing out at the wiki (express) signs the browser out of the board (express)
 *   and the intranet (mod_auth_openidc, `<redirect_uri>?logout=backchannel`); so does revoking
 *   the browser's device. The logout tokens travel through the service's outbox: the apps' pages
 *   are reloaded until the session is gone, no fixed wait.
 * - Front-channel: the portal (mod_auth_openidc, `<redirect_uri>?logout=get` with iss and sid)
 *   is framed by the signed-out page when the user signs out at the wiki, and the browser goes
 *   on to the wiki; the signed-out page passes axe and breaks no CSP rule.
 * Skipped, saying why, where apache2 or the module is absent (CI installs them: .ci/browser.sh).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import type { RunningOidcApp } from '../src/oidc-app.ts';
import { emailAndCode, startRegisteredOidcApp, watchedPage } from './fixtures.ts';
import { type Stack, startStack } from './harness.ts';
import { type ApacheApp, modAuthOpenidcMissing, startApacheApp } from './support/mod-auth-openidc.ts';
import { accessibleEverywhere } from './visual.ts';

const missing = modAuthOpenidcMissing();

describe('logout reaches mod_auth_openidc and express-openid-connect apps, in a real browser', {
  skip: missing ?? false,
  timeout: 4 * 60_000,
}, () => {
  let stack: Stack;
  let wiki: RunningOidcApp;
  let board: RunningOidcApp;
  let intranet: ApacheApp;
  let portal: ApacheApp;
  let page: Page;
  const violations: string[] = [];
  const run = Date.now().toString(36);
  let email = '';

  before(async () => {
    stack = await startStack();
    wiki = await startRegisteredOidcApp(stack, 'Acme Wiki');
    // Other loopback addresses: cookies ignore ports, and each app keeps its own session cookie.
    board = await startRegisteredOidcApp(stack, 'Acme Board', { host: '127.0.0.2' });
    intranet = await startApacheApp(stack, 'Acme Intranet', { host: '127.0.0.3', logout: 'backchannel' });
    portal = await startApacheApp(stack, 'Acme Portal', { host: '127.0.0.4', logout: 'frontchannel' });
  });
  after(async () => {
    if (process.env.DEBUG_OIDC) console.log(intranet?.log(), portal?.log());
    await intranet?.close();
    await portal?.close();
    await wiki?.close();
    await board?.close();
    await stack?.close();
  });

  /**
   * The console's refusals but mod_auth_openidc's own: its front-channel page answers
   * `X-Frame-Options: DENY` (OIDCLogoutXFrameOptions' default), so Chromium does not display the
   * frame; the session ended before that answer (checked), and it is the app's header, not our page's policy.
   */
  const ourViolations = () => violations.filter((line) => !/in a frame because it set 'X-Frame-Options' to 'deny'/.test(line));

  const signInLink = () => page.getByRole('link', { name: 'Sign in', exact: true });

  /** A new browser (context) and user, signed in at the wiki on the hosted page. */
  async function signedInAtWiki(label: string) {
    page = await watchedPage(stack.browser, violations);
    email = `${label}.${run}@example.com`;
    await page.goto(wiki.url);
    await signInLink().click();
    await emailAndCode(stack, page, email);
    await page.waitForURL(`${wiki.url}/`);
    assert.equal(await page.locator('#who').textContent(), email);
  }

  async function signInAtBoard() {
    await page.goto(board.url);
    await signInLink().click();
    await page.waitForURL(`${board.url}/`);
    assert.equal(await page.locator('#who').textContent(), email, 'signed in at the board by SSO');
  }

  /** The Apache app's protected page: to the service and back (form_post) by SSO, the user's email shown. */
  async function signInAtApache(app: ApacheApp) {
    await page.goto(app.url);
    await page.waitForURL(app.url);
    assert.equal(await page.locator('#who').textContent(), email, `signed in at ${app.origin} by SSO:\n${app.log()}`);
  }

  /** Whether opening the Apache app's page sends the browser to the service's sign-in (its session is gone, and the service's too). */
  async function apacheSignedOut(app: ApacheApp): Promise<boolean> {
    await page.goto(app.url);
    await page.waitForURL((url) => url.href === app.url || url.href.startsWith(stack.serviceUrl));
    return page.url().startsWith(stack.serviceUrl);
  }

  /** Reloads until `signedOut` holds (a logout token arrived), within 15 s. */
  async function eventually(what: string, signedOut: () => Promise<boolean>) {
    const deadline = Date.now() + 15_000;
    while (!(await signedOut())) assert.ok(Date.now() < deadline, `still signed in at ${what}`);
  }
  const expressSignedOut = (app: RunningOidcApp) => async () => {
    await page.goto(app.url);
    return signInLink().isVisible();
  };

  it('signing out at the wiki signs the browser out of the board and of the mod_auth_openidc intranet, by back-channel', async () => {
    await signedInAtWiki('backchannel');
    await signInAtBoard();
    await signInAtApache(intranet);
    await page.goto(wiki.url);
    await page.getByRole('link', { name: 'Sign out', exact: true }).click();
    await page.waitForURL(`${wiki.url}/`);
    await signInLink().waitFor();
    await eventually(board.url, expressSignedOut(board));
    await eventually(intranet.url, () => apacheSignedOut(intranet));
  });

  it('revoking the browser`s device at the service signs it out of the mod_auth_openidc intranet and both express apps', async () => {
    await signedInAtWiki('revoked');
    await signInAtBoard();
    await signInAtApache(intranet);
    const { devices } = await stack.idp<{ devices: { id: string; kind: string; removedAt: number | null }[] }>(
      'devices',
      'list',
      '--user',
      email,
    );
    const active = devices.filter((d) => d.kind === 'browser' && d.removedAt === null);
    assert.ok(active.length > 0);
    for (const device of active) await stack.cli('devices', 'revoke', device.id);
    await eventually(intranet.url, () => apacheSignedOut(intranet));
    await eventually(board.url, expressSignedOut(board));
    await eventually(wiki.url, expressSignedOut(wiki));
  });

  it('signing out at the wiki frames the mod_auth_openidc portal`s front-channel logout with iss and sid, then goes on to the wiki', async () => {
    await signedInAtWiki('frontchannel');
    await signInAtApache(portal);
    const framed = page.waitForRequest((request) => request.url().startsWith(`${portal.redirectUri}?logout=get`));
    const signedOutPage = page.waitForResponse((response) => response.url().startsWith(`${stack.serviceUrl}/logout?`));
    await page.goto(wiki.url);
    await page.getByRole('link', { name: 'Sign out', exact: true }).click();
    const answer = await signedOutPage;
    assert.equal(answer.status(), 200, 'the signed-out page, not the redirect: the portal is framed first');
    assert.equal((await answer.allHeaders())['content-security-policy']?.match(/frame-src ([^;]*)/)?.[1], portal.origin);
    const frame = new URL((await framed).url());
    assert.equal(frame.searchParams.get('iss'), stack.serviceUrl);
    assert.match(frame.searchParams.get('sid') ?? '', /^sid_/);
    await page.waitForURL(`${wiki.url}/`);
    await signInLink().waitFor();
    assert.ok(await apacheSignedOut(portal), `the portal's session ended:\n${portal.log()}`);
    assert.deepEqual(ourViolations(), [], 'no Content Security Policy violation');
  });

  it('the signed-out page of a sign-out confirmed at the service frames the portal, stays, and passes axe', async () => {
    await signedInAtWiki('confirmed');
    await signInAtApache(portal);
    const framed = page.waitForRequest((request) => request.url().startsWith(`${portal.redirectUri}?logout=get`));
    await page.goto(`${stack.serviceUrl}/logout`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'You are signed out' }).waitFor();
    await framed;
    await page.getByText('Signing you out of the apps you used here…').waitFor();
    await accessibleEverywhere(page, 'signed out, with a front-channel frame');
    assert.ok(page.url().startsWith(`${stack.serviceUrl}/logout`), 'no app to go on to: the page stays');
    assert.ok(await apacheSignedOut(portal), `the portal's session ended:\n${portal.log()}`);
    assert.deepEqual(ourViolations(), [], 'no Content Security Policy violation');
  });
});
