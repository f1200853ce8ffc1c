/**
 * Sign-in with redirects in a real browser (issue 14): openid-client, a relying party nobody on
 * this team wrote, discovers the service and builds the authorization URL (PKCE S256, state,
 * nonce); Chromium completes the hosted pages (email, then the code from the development
 * mailbox); the callback goes through openid-client's authorizationCodeGrant, which checks
 * state, iss (RFC 9207), nonce and the ID token. Then a second app signs in with no typing
 * (SSO), prompt=none in a browser with no session answers login_required, and max_age asks
 * the remembered device to sign in again (no email code).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import type { BrowserContext } from 'playwright-core';
import { authorizationRequest, type RelyingParty, registerRelyingParty, watchedPage } from './fixtures.ts';
import { type PageServer, type Stack, screenshot, servePages, startStack } from './harness.ts';

describe('hosted sign-in with openid-client in a real browser', { timeout: 5 * 60_000 }, () => {
  let stack: Stack;
  let rpPages: PageServer;
  let context: BrowserContext;
  const email = `oidc.${Date.now().toString(36)}@example.com`;
  const apps: RelyingParty[] = [];
  const violations: string[] = [];

  before(async () => {
    stack = await startStack();
    rpPages = await servePages();
    apps.push(await registerRelyingParty(stack, rpPages, 'Research Portal', '/callback'));
    apps.push(await registerRelyingParty(stack, rpPages, 'Second App', '/second/callback', { public: true }));
    context = await stack.browser.newContext();
  });
  after(async () => {
    await rpPages?.close();
    await stack?.close();
  });

  /** A fresh authorization request of app `index`: the URL, and what the callback must match. */
  async function start(index: number, extra: Record<string, string> = {}) {
    const app = apps[index];
    assert.ok(app);
    return { app, ...(await authorizationRequest(app, extra)) };
  }

  const newPage = (into = context) => watchedPage(into, violations);

  it('signs in on the hosted pages and openid-client validates the callback and the ID token', async () => {
    const { app, url, expected } = await start(0, { login_hint: email });
    const page = await newPage();
    await page.goto(url.href);
    await page.getByRole('heading', { name: 'Sign in to Research Portal' }).waitFor();
    assert.equal(await page.getByLabel('Email address').inputValue(), email, 'login_hint fills the address');
    const seen = (await stack.mails(email)).length;
    await page.getByRole('button', { name: 'Continue' }).click();
    const otp = page.getByLabel(/6-digit code we emailed/);
    await otp.waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'otp', 'focus moves to the code field');
    await otp.fill(await stack.nextMailOtp(email, seen));
    await otp.press('Enter');
    await page.waitForURL(`${app.redirectUri}?**`);
    await screenshot(page, 'oidc-hosted-callback');

    const tokens = await oidc.authorizationCodeGrant(app.config, new URL(page.url()), expected);
    const claims = tokens.claims();
    assert.ok(claims);
    assert.equal(claims.email, email);
    assert.equal(claims.nonce, expected.expectedNonce);
    assert.deepEqual(claims.amr, ['otp']);
    assert.equal(typeof claims.auth_time, 'number');
    await page.close();
  });

  it('signs in to a second app with no typing (SSO)', async () => {
    const { app, url, expected } = await start(1);
    const page = await newPage();
    await page.goto(url.href);
    await page.waitForURL(`${app.redirectUri}?**`);
    const tokens = await oidc.authorizationCodeGrant(app.config, new URL(page.url()), expected);
    assert.equal(tokens.claims()?.email, email);
    await page.close();
  });

  it('answers prompt=none with login_required in a browser without a session', async () => {
    const { app, url } = await start(0, { prompt: 'none' });
    const other = await stack.browser.newContext();
    const page = await newPage(other);
    await page.goto(url.href);
    await page.waitForURL(`${app.redirectUri}?**`);
    const params = new URL(page.url()).searchParams;
    assert.equal(params.get('error'), 'login_required');
    assert.equal(params.get('iss'), stack.serviceUrl);
    await other.close();
  });

  it('asks for a fresh sign-in past max_age, which the remembered device answers without an email code', async () => {
    await new Promise((resolve) => setTimeout(resolve, 2100));
    const { app, url, expected } = await start(0, { max_age: '1' });
    const page = await newPage();
    const mailsBefore = (await stack.mails(email)).length;
    await page.goto(url.href);
    await page.getByLabel('Email address').fill(email);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(`${app.redirectUri}?**`);
    const tokens = await oidc.authorizationCodeGrant(app.config, new URL(page.url()), { ...expected, maxAge: 1 });
    const claims = tokens.claims();
    assert.ok(claims && Math.floor(Date.now() / 1000) - Number(claims.auth_time) <= 5, 'a fresh auth_time');
    assert.deepEqual(claims.amr, ['swk']);
    assert.equal((await stack.mails(email)).length, mailsBefore, 'no email code was needed');
    await page.close();
  });

  it('ran without a single Content Security Policy violation', () => {
    assert.deepEqual(violations, []);
  });
});
