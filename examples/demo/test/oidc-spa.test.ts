/**
 * A single-page app on its own origin signs in with oidc-client-ts (a public client, PKCE, no
 * backend and no relay; issue 36): the library reads discovery, takes the hosted sign-in, redeems
 * the code at the token endpoint from the page, loads userinfo, renews silently with its refresh
 * token, and signs out with token revocation and RP-initiated logout. Every call to the service
 * crosses origins (token/cors.ts). Then a page on an origin the app never registered cannot
 * spend the app's refresh token (its answer unreadable), and after the sign-out the refresh
 * token is dead and the service's session over.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { emailAndCode, inPage, watchedPage } from './fixtures.ts';
import { type PageServer, type Stack, screenshot, servePages, startStack } from './harness.ts';

/** oidc-client-ts's own browser build (a global `oidc`), as a page would load it from its bundle. */
const OIDC_CLIENT_TS = readFileSync(
  join(dirname(createRequire(import.meta.url).resolve('oidc-client-ts')), '../browser/oidc-client-ts.min.js'),
  'utf8',
);

/** The app: its page handles the callback, shows who is signed in, and has the three buttons. */
function spaPage(authority: string, clientId: string, origin: string): string {
  const settings = {
    authority,
    client_id: clientId,
    redirect_uri: `${origin}/spa`,
    post_logout_redirect_uri: `${origin}/spa`,
    scope: 'openid email offline_access',
    loadUserInfo: true,
    automaticSilentRenew: false,
    revokeTokensOnSignout: true,
    revokeTokenTypes: ['access_token', 'refresh_token'],
  };
  return `<!doctype html><html lang="en"><title>Acme SPA</title>
<main><h1>Acme SPA</h1><p id="who">nobody</p><p id="status"></p>
<button id="in">Sign in</button> <button id="renew">Renew</button> <button id="out">Sign out</button></main>
<script>${OIDC_CLIENT_TS}</script>
<script>
const manager = new oidc.UserManager({ ...${JSON.stringify(settings)}, userStore: new oidc.WebStorageStateStore({ store: localStorage }) });
window.manager = manager;
const show = (user) => {
  document.getElementById('who').textContent = user ? user.profile.email : 'nobody';
  window.tokens = user ? { access: user.access_token, refresh: user.refresh_token } : undefined;
};
const status = (text) => { document.getElementById('status').textContent = text; };
document.getElementById('in').onclick = () => manager.signinRedirect().catch((e) => status('sign-in failed: ' + e.message));
document.getElementById('renew').onclick = () => manager.signinSilent().then((user) => { show(user); status('renewed'); }, (e) => status('renew failed: ' + e.message));
document.getElementById('out').onclick = () => manager.signoutRedirect().catch((e) => status('sign-out failed: ' + e.message));
(async () => {
  const query = new URLSearchParams(location.search);
  if (query.has('code') || query.has('error')) {
    try { await manager.signinRedirectCallback(); status('signed in'); }
    catch (e) { status('callback failed: ' + e.message); }
    history.replaceState(null, '', '/spa');
  } else if (query.has('state')) {
    await manager.signoutRedirectCallback().catch(() => undefined);
    status('signed out');
    history.replaceState(null, '', '/spa');
  }
  show(await manager.getUser());
  document.body.dataset.ready = '1';
})();
</script></html>`;
}

describe('a single-page app with oidc-client-ts on its own origin, in a real browser', { timeout: 4 * 60_000 }, () => {
  let stack: Stack;
  let spa: PageServer;
  let context: BrowserContext;
  let page: Page;
  const violations: string[] = [];
  const email = `spa.${Date.now().toString(36)}@example.com`;

  before(async () => {
    stack = await startStack();
    spa = await servePages();
    const keys = await stack.idp<{ clientId: string; secretKey?: string }>(
      'clients',
      'create',
      '--name',
      'Acme SPA',
      '--public',
      '--origin',
      spa.origin,
      '--redirect-uri',
      `${spa.origin}/spa`,
      '--post-logout-redirect-uri',
      `${spa.origin}/spa`,
    );
    assert.equal(keys.secretKey, undefined, 'a public client has no secret');
    spa.pages.set('/spa', spaPage(stack.serviceUrl, keys.clientId, spa.origin));
    context = await stack.browser.newContext();
    page = await watchedPage(context, violations);
  });
  after(async () => {
    await spa?.close();
    await stack?.close();
  });

  const ready = async () => {
    await page.waitForSelector('body[data-ready="1"]');
  };

  it('signs in: discovery, the hosted sign-in, the code redeemed from the page, userinfo loaded', async () => {
    await page.goto(`${spa.origin}/spa`);
    await ready();
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${stack.serviceUrl}/**`);
    await emailAndCode(stack, page, email);
    await page.waitForURL(`${spa.origin}/spa`);
    await ready();
    assert.equal(await page.locator('#status').textContent(), 'signed in');
    assert.equal(await page.locator('#who').textContent(), email);
    await screenshot(page, 'oidc-spa-signed-in');
  });

  it('renews silently with its refresh token (rotated), from the page', async () => {
    const before = await inPage<{ access: string; refresh: string }>(page, 'return window.tokens');
    assert.ok(before.refresh, 'offline_access gave the page a refresh token');
    await page.getByRole('button', { name: 'Renew' }).click();
    await page.locator('#status', { hasText: /renew/ }).waitFor();
    assert.equal(await page.locator('#status').textContent(), 'renewed');
    const renewed = await inPage<{ access: string; refresh: string }>(page, 'return window.tokens');
    assert.notEqual(renewed.access, before.access);
    assert.notEqual(renewed.refresh, before.refresh, 'the refresh token rotates');
  });

  it("a page on an origin the app never registered cannot spend the app's refresh token", async () => {
    const { refresh } = await inPage<{ refresh: string }>(page, 'return window.tokens');
    const clientId = await inPage<string>(page, 'return manager.settings.client_id');
    const thief = await watchedPage(context, []);
    stack.foreign.pages.set('/steal', '<!doctype html><title>steal</title>');
    await thief.goto(`${stack.foreign.origin}/steal`);
    const outcome = await inPage<string>(
      thief,
      `return fetch(${JSON.stringify(`${stack.serviceUrl}/oauth/token`)}, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: ${JSON.stringify(refresh)}, client_id: ${JSON.stringify(clientId)} }) })
        .then((r) => 'read ' + r.status, (e) => 'blocked')`,
    );
    assert.equal(outcome, 'blocked', 'the browser gives the thief no answer');
    await thief.close();
    // Unspent: the app still renews with it.
    await page.getByRole('button', { name: 'Renew' }).click();
    await page.locator('#status', { hasText: 'renewed' }).waitFor();
  });

  it('signs out: the tokens revoked from the page, the service session ended, back at the app', async () => {
    const { refresh } = await inPage<{ refresh: string }>(page, 'return window.tokens');
    // The page is at /spa already: waiting for the URL (or for ready) could pass on this very
    // document, before the sign-out navigates away. A mark on it tells the new document apart.
    await page.evaluate(() => {
      (window as unknown as { beforeSignOut: boolean }).beforeSignOut = true;
    });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForFunction(
      () => !(window as unknown as { beforeSignOut?: boolean }).beforeSignOut && document.body?.dataset.ready === '1',
      undefined,
      {
        timeout: 60_000,
      },
    );
    assert.equal(new URL(page.url()).origin + new URL(page.url()).pathname, `${spa.origin}/spa`);
    assert.equal(await page.locator('#who').textContent(), 'nobody');
    const clientId = await inPage<string>(page, 'return manager.settings.client_id');
    const again = await fetch(`${stack.serviceUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refresh, client_id: clientId }),
    });
    assert.equal(again.status, 400, 'the revoked refresh token is dead');
    // The service's session is over: signing in again asks for the address.
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Email address').waitFor();
    await screenshot(page, 'oidc-spa-after-sign-out');
    assert.deepEqual(violations, []);
  });
});
