/**
 * Refresh, revocation and RP-initiated logout in a real browser, through openid-client's own
 * functions (issue 14): a relying party nobody on this team wrote asks for offline_access, then
 * rotates its refresh token with refreshTokenGrant, revokes it with tokenRevocation (RFC 7009),
 * and signs the user out with buildEndSessionUrl: with the ID token hint the browser comes
 * straight back with its state; without it the user confirms on the service's page. Either
 * way the service session is over (prompt=none then says login_required).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import type { BrowserContext } from 'playwright-core';
import { authorizationRequest, watchedPage } from './fixtures.ts';
import { type PageServer, type Stack, screenshot, servePages, startStack } from './harness.ts';

describe('refresh, revocation and logout with openid-client in a real browser', { timeout: 5 * 60_000 }, () => {
  let stack: Stack;
  let rpPages: PageServer;
  let context: BrowserContext;
  let config: oidc.Configuration;
  let redirectUri: string;
  let loggedOut: string;
  const email = `tokens.${Date.now().toString(36)}@example.com`;
  const violations: string[] = [];

  before(async () => {
    stack = await startStack();
    rpPages = await servePages();
    redirectUri = `${rpPages.origin}/callback`;
    loggedOut = `${rpPages.origin}/logged-out`;
    rpPages.pages.set('/callback', '<!doctype html><title>callback</title><p>back at the app</p>');
    rpPages.pages.set('/logged-out', '<!doctype html><title>signed out</title><p>signed out of the app</p>');
    const keys = await stack.idp<{ clientId: string; secretKey: string }>(
      'clients',
      'create',
      '--name',
      'Research Portal',
      '--redirect-uri',
      redirectUri,
      '--post-logout-redirect-uri',
      loggedOut,
    );
    config = await oidc.discovery(new URL(stack.serviceUrl), keys.clientId, undefined, oidc.ClientSecretBasic(keys.secretKey), {
      execute: [oidc.allowInsecureRequests], // loopback over http
    });
    context = await stack.browser.newContext();
  });
  after(async () => {
    await rpPages?.close();
    await stack?.close();
  });

  const newPage = () => watchedPage(context, violations);

  /** Signs in on the hosted pages (email code the first time, the remembered device after) and redeems the code. */
  async function signIn(extra: Record<string, string> = {}) {
    const { url, expected } = await authorizationRequest(
      { name: 'Research Portal', clientId: config.clientMetadata().client_id, config, redirectUri },
      { scope: 'openid email offline_access', ...extra },
    );
    const page = await newPage();
    await page.goto(url.href);
    if (!page.url().startsWith(redirectUri)) {
      await page.getByLabel('Email address').fill(email);
      const seen = (await stack.mails(email)).length;
      await page.getByRole('button', { name: 'Continue' }).click();
      const otp = page.getByLabel(/6-digit code we emailed/);
      const next = await Promise.race([
        otp.waitFor().then(() => 'otp' as const),
        page.waitForURL(`${redirectUri}?**`).then(() => 'back' as const),
      ]);
      if (next === 'otp') {
        await otp.fill(await stack.nextMailOtp(email, seen));
        await otp.press('Enter');
      }
    }
    await page.waitForURL(`${redirectUri}?**`);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(page.url()), expected);
    await page.close();
    return tokens;
  }

  /** True while the browser's service session signs it in with no page. */
  async function sessionAlive(): Promise<boolean> {
    const page = await newPage();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: 'openid',
      prompt: 'none',
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
      state: oidc.randomState(),
    });
    await page.goto(url.href);
    await page.waitForURL(`${redirectUri}?**`);
    const alive = new URL(page.url()).searchParams.has('code');
    await page.close();
    return alive;
  }

  it('rotates the refresh token with refreshTokenGrant and revokes it with tokenRevocation', async () => {
    const tokens = await signIn();
    assert.ok(tokens.refresh_token, 'offline_access granted a refresh token');
    assert.equal(tokens.scope, 'openid email offline_access');
    assert.equal(tokens.claims()?.acr, 'urn:service:acr:otp');

    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token);
    assert.ok(refreshed.refresh_token && refreshed.refresh_token !== tokens.refresh_token, 'rotated');
    assert.equal(refreshed.claims()?.sub, tokens.claims()?.sub);
    assert.equal(refreshed.claims()?.auth_time, tokens.claims()?.auth_time);

    await oidc.tokenRevocation(config, refreshed.refresh_token, { token_type_hint: 'refresh_token' });
    await assert.rejects(oidc.refreshTokenGrant(config, refreshed.refresh_token), (error: unknown) => {
      assert.ok(error instanceof oidc.ResponseBodyError);
      assert.equal(error.error, 'invalid_grant');
      return true;
    });
    // Unknown tokens are answered 200 too (RFC 7009 2.2).
    await oidc.tokenRevocation(config, 'rt_never-issued');
  });

  it('signs out at once with buildEndSessionUrl and the ID token hint, back at the registered page with state', async () => {
    assert.ok(await sessionAlive());
    const tokens = await signIn({ prompt: 'login' });
    assert.equal(tokens.claims()?.acr, 'urn:service:acr:device', 'the remembered device signed in');
    const state = oidc.randomState();
    const url = oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token ?? '', post_logout_redirect_uri: loggedOut, state });
    const page = await newPage();
    await page.goto(url.href);
    await page.waitForURL(`${loggedOut}?**`);
    assert.equal(new URL(page.url()).searchParams.get('state'), state);
    await page.close();
    assert.equal(await sessionAlive(), false, 'prompt=none now answers login_required');
  });

  it('asks the user to confirm when the app sends no hint, then returns with state', async () => {
    await signIn();
    assert.ok(await sessionAlive());
    const state = oidc.randomState();
    const page = await newPage();
    await page.goto(oidc.buildEndSessionUrl(config, { post_logout_redirect_uri: loggedOut, state }).href);
    await page.getByRole('heading', { name: 'Sign out?' }).waitFor();
    await screenshot(page, 'oidc-logout-confirm');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${loggedOut}?**`);
    assert.equal(new URL(page.url()).searchParams.get('state'), state);
    await page.close();
    assert.equal(await sessionAlive(), false);
  });

  it('ran without a single Content Security Policy violation', () => {
    assert.deepEqual(violations, []);
  });
});
