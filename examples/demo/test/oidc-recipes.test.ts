/**
 * The relying-party recipes of docs/integrations.md in a real browser (issue 25), beside
 * express-openid-connect (oidc-apps.test.ts): Auth.js (`@auth/express`, src/authjs-app.ts) and passport with
 * openid-client's strategy (src/passport-app.ts), each a confidential client configured from the
 * service's discovery document. For each, in Chromium: the app's sign-in goes to the hosted
 * page, the email code from the mailbox signs the user in, the protected page shows the address
 * (with state and nonce on the authorization request); the app's sign-out goes on to the
 * service's end_session_endpoint with the ID token as hint, the service ends its session (its
 * cookie cleared) and returns the state to the app's registered post-logout redirect URI; the
 * next sign-in asks for the address again (no single sign-on). No Content Security Policy
 * violation on the way. One service stack and one browser for both.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import * as authjs from '../src/authjs-app.ts';
import * as passportApp from '../src/passport-app.ts';
import { freePort, type Stack, screenshot, startStack } from './harness.ts';

interface Recipe {
  name: string;
  callbackUri: (origin: string) => string;
  postLogoutRedirectUri: (origin: string) => string;
  start: (options: { issuer: string; publicOrigin: string; clientId: string; clientSecret: string; port: number }) => Promise<{
    url: string;
    close(): Promise<void>;
  }>;
  /** The app's "Sign in" control: a form button (Auth.js: a CSRF-checked POST) or a link. */
  signIn: (page: Page) => ReturnType<Page['getByRole']>;
}

const RECIPES: Recipe[] = [
  {
    name: 'Acme Forum',
    callbackUri: authjs.callbackUri,
    postLogoutRedirectUri: authjs.postLogoutRedirectUri,
    start: (options) => authjs.startAuthJsApp({ ...options, log: debugLog }),
    signIn: (page) => page.getByRole('button', { name: 'Sign in', exact: true }),
  },
  {
    name: 'Acme Tasks',
    callbackUri: passportApp.callbackUri,
    postLogoutRedirectUri: passportApp.postLogoutRedirectUri,
    start: (options) => passportApp.startPassportApp({ ...options, log: debugLog }),
    signIn: (page) => page.getByRole('link', { name: 'Sign in', exact: true }),
  },
];

function debugLog(line: string) {
  if (process.env.DEBUG_OIDC) console.log(line);
}

describe('the relying-party recipes (Auth.js, passport + openid-client) on the hosted pages, in a real browser', {
  timeout: 4 * 60_000,
}, () => {
  let stack: Stack;
  const apps: Array<{ close(): Promise<void> }> = [];
  const contexts: BrowserContext[] = [];
  const violations: string[] = [];
  const run = Date.now().toString(36);

  before(async () => {
    stack = await startStack();
  });
  after(async () => {
    for (const app of apps) await app.close();
    await stack?.close();
  });

  for (const recipe of RECIPES) {
    it(`${recipe.name}: signs in with the email code, shows the address, and its sign-out ends the service session too`, async () => {
      const port = await freePort();
      const origin = `http://127.0.0.1:${port}`;
      const keys = await stack.idp<{ clientId: string; secretKey: string }>(
        'clients',
        'create',
        '--name',
        recipe.name,
        '--redirect-uri',
        recipe.callbackUri(origin),
        '--post-logout-redirect-uri',
        recipe.postLogoutRedirectUri(origin),
      );
      const app = await recipe.start({
        issuer: stack.serviceUrl,
        publicOrigin: origin,
        clientId: keys.clientId,
        clientSecret: keys.secretKey,
        port,
      });
      apps.push(app);

      const context = await stack.browser.newContext();
      contexts.push(context);
      const page = await context.newPage();
      page.setDefaultTimeout(20_000);
      page.on('console', (message) => {
        if (process.env.DEBUG_OIDC) console.log('page:', message.text());
        if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(`${recipe.name}: ${message.text()}`);
      });
      const serviceSession = async () =>
        (await context.cookies(stack.serviceUrl)).find((cookie) => cookie.name === 'service_session' && cookie.value !== '');

      // Sign in: the library sends the browser to /authorize with PKCE, state and nonce.
      const email = `${recipe.name.split(' ')[1]?.toLowerCase()}.${run}@example.com`;
      await page.goto(origin);
      const [authorize] = await Promise.all([
        page.waitForRequest((request) => request.url().startsWith(`${stack.serviceUrl}/authorize?`)),
        recipe.signIn(page).click(),
      ]);
      const params = new URL(authorize.url()).searchParams;
      assert.equal(params.get('redirect_uri'), recipe.callbackUri(origin));
      assert.equal(params.get('code_challenge_method'), 'S256');
      assert.ok(params.get('state'), 'state on the authorization request');
      assert.ok(params.get('nonce'), 'nonce on the authorization request');
      await page.getByRole('heading', { name: `Sign in to ${recipe.name}` }).waitFor();
      await page.getByLabel('Email address').fill(email);
      await page.getByRole('button', { name: 'Continue' }).click();
      const otp = page.getByLabel(/6-digit code we emailed/);
      await otp.fill(await stack.nextMailOtp(email, 0));
      await otp.press('Enter');

      await page.waitForURL(`${origin}/profile`);
      assert.equal(await page.locator('#who').textContent(), email, 'the protected page shows the address');
      assert.ok(await serviceSession(), 'the service has a session in this browser');
      await screenshot(page, `oidc-recipe-${recipe.name.split(' ')[1]?.toLowerCase()}-profile`);

      // Sign out: the app's session, then the service's at its end_session_endpoint.
      const [ended] = await Promise.all([
        page.waitForResponse((response) => response.url().startsWith(`${stack.serviceUrl}/logout?`)),
        page.getByRole('button', { name: 'Sign out', exact: true }).click(),
      ]);
      const logout = new URL(ended.url()).searchParams;
      assert.ok(logout.get('id_token_hint'), 'the ID token as hint');
      assert.equal(logout.get('post_logout_redirect_uri'), recipe.postLogoutRedirectUri(origin));
      const state = logout.get('state') ?? '';
      assert.ok(state);
      assert.equal(ended.status(), 303, 'the service ended its session without asking');
      assert.equal(ended.headers().location, `${recipe.postLogoutRedirectUri(origin)}?state=${encodeURIComponent(state)}`);
      await page.getByText(`You are signed out of ${recipe.name} and of the identity service.`).waitFor();
      assert.equal(await serviceSession(), undefined, 'the service session cookie is gone');

      await page.goto(`${origin}/profile`);
      assert.notEqual(new URL(page.url()).pathname, '/profile', 'the app session is gone');

      // No single sign-on now: the hosted page asks for the address again.
      await page.goto(origin);
      await recipe.signIn(page).click();
      await page.getByRole('heading', { name: `Sign in to ${recipe.name}` }).waitFor();
      await page.getByLabel('Email address').waitFor();
      assert.ok(page.url().startsWith(`${stack.serviceUrl}/signin?request=`), 'the hosted page asks again');
    });
  }

  it('ran without a Content Security Policy violation', async () => {
    for (const context of contexts) await context.close();
    assert.deepEqual(violations, []);
  });
});
