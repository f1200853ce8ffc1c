/**
 * OpenID Connect Back-Channel Logout with a relying party nobody on this team wrote (issue 36):
 * two apps on express-openid-connect (src/oidc-app.ts, its `backchannelLogout` option), each
 * registered with its /backchannel-logout route, one Chromium browser signed in to both (the
 * second by SSO). Signing out at one app signs the browser out of the other by back-channel;
 * so does revoking the browser's device at the service (the operator's CLI, as the account
 * center's "sign out" of a device does). The other app's page is reloaded until its session is
 * gone: the logout token travels through the service's outbox, no fixed wait.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import type { RunningOidcApp } from '../src/oidc-app.ts';
import { emailAndCode, startRegisteredOidcApp, watchedPage } from './fixtures.ts';
import { type Stack, startStack } from './harness.ts';

describe('back-channel logout reaches an express-openid-connect app, in a real browser', { timeout: 3 * 60_000 }, () => {
  let stack: Stack;
  let wiki: RunningOidcApp;
  let board: RunningOidcApp;
  let page: Page;
  const violations: string[] = [];
  const run = Date.now().toString(36);
  let email = '';

  before(async () => {
    stack = await startStack();
    wiki = await startRegisteredOidcApp(stack, 'Acme Wiki');
    // Another loopback address: cookies ignore ports, and each app keeps its own session cookie.
    board = await startRegisteredOidcApp(stack, 'Acme Board', { host: '127.0.0.2' });
  });
  after(async () => {
    await wiki?.close();
    await board?.close();
    await stack?.close();
  });

  const signInLink = () => page.getByRole('link', { name: 'Sign in', exact: true });

  /** A new browser (context) and user, signed in at the wiki on the hosted page, then at the board by the service session. */
  async function signedInAtBoth(label: string) {
    page = await watchedPage(stack.browser, violations);
    email = `${label}.${run}@example.com`;
    await page.goto(wiki.url);
    await signInLink().click();
    await emailAndCode(stack, page, email);
    await page.waitForURL(`${wiki.url}/`);
    assert.equal(await page.locator('#who').textContent(), email);
    await page.goto(board.url);
    await signInLink().click();
    await page.waitForURL(`${board.url}/`);
    assert.equal(await page.locator('#who').textContent(), email, 'signed in at the board by SSO');
  }

  /** Reloads `app` until its page offers to sign in again (the logout token arrived), within 15 s. */
  async function signedOutOf(app: RunningOidcApp) {
    const deadline = Date.now() + 15_000;
    for (;;) {
      await page.goto(app.url);
      if (await signInLink().isVisible()) return;
      assert.ok(Date.now() < deadline, `still signed in at ${app.url}`);
    }
  }

  it('signing out at one app signs the browser out of the other', async () => {
    await signedInAtBoth('signout');
    await page.goto(wiki.url);
    await page.getByRole('link', { name: 'Sign out', exact: true }).click();
    await page.waitForURL(`${wiki.url}/`);
    await signInLink().waitFor();
    await signedOutOf(board);
  });

  it('revoking the browser`s device at the service signs it out of both apps', async () => {
    await signedInAtBoth('revoked');
    const { devices } = await stack.idp<{ devices: { id: string; kind: string; removedAt: number | null }[] }>(
      'devices',
      'list',
      '--user',
      email,
    );
    const active = devices.filter((d) => d.kind === 'browser' && d.removedAt === null);
    assert.ok(active.length > 0);
    for (const device of active) await stack.cli('devices', 'revoke', device.id);
    await signedOutOf(board);
    await signedOutOf(wiki);
    assert.deepEqual(violations, [], 'no Content Security Policy violation');
  });
});
