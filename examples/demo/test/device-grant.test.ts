/**
 * The device authorization grant (RFC 8628, issue 39) in Chromium: a CLI-style client built on
 * openid-client (a library nobody on this team wrote: `initiateDeviceAuthorization`,
 * `pollDeviceAuthorizationGrant`, with its own DPoP key) starts the grant and polls; a Chromium
 * browser that already signed in at the hosted pages (remembered, through the account center)
 * opens verification_uri_complete: the code is only filled in, the user continues, the session
 * passes the sign-in at once (no mail), the confirmation shows the code to compare, the client
 * and the device as it declared itself, and Allow gives the polling client its tokens. axe-core on
 * the code form and the confirmation, phone and desktop, light and dark, in the four languages.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import type { Page } from 'playwright-core';
import { emailAndCode, watchedPage } from './fixtures.ts';
import { type Stack, startStack } from './harness.ts';
import { accessibleEverywhere } from './visual.ts';

const LANGUAGES = ['en', 'fr', 'de', 'es'] as const;

describe('the device authorization grant with openid-client and Chromium', { timeout: 5 * 60_000 }, () => {
  let stack: Stack;
  let config: oidc.Configuration;
  const violations: string[] = [];
  const email = `device.user.${Date.now().toString(36)}@example.com`;

  before(async () => {
    stack = await startStack();
    const keys = await stack.idp<{ clientId: string }>(
      'clients',
      'create',
      '--name',
      'Terminal Notes',
      '--redirect-uri',
      'http://127.0.0.1/unused',
      '--public',
      '--device-grant',
      'yes',
    );
    // The CLI: discovery names the device authorization endpoint; a public client authenticates by its client_id alone.
    config = await oidc.discovery(new URL(stack.serviceUrl), keys.clientId, undefined, oidc.None(), {
      execute: [oidc.allowInsecureRequests], // loopback over http
    });
  });
  after(async () => {
    await stack?.close();
  });

  /** Axe on the page at `path` (its own query kept) in each language. */
  async function accessibleInEveryLanguage(page: Page, path: string, name: string) {
    for (const language of LANGUAGES) {
      const url = new URL(path, stack.serviceUrl);
      url.searchParams.set('ui_locales', language);
      await page.goto(url.href);
      assert.equal(await page.getAttribute('html', 'lang'), language);
      await accessibleEverywhere(page, `${name} (${language})`);
    }
  }

  it('a signed-in, remembered browser approves the code the CLI shows; the CLI`s polling gets DPoP-bound tokens; no mail is sent', async () => {
    // The user signed in at the hosted pages before, this browser remembered (the account center's sign-in).
    const page = await watchedPage(stack.browser, violations);
    await page.goto(`${stack.serviceUrl}/account`);
    await emailAndCode(stack, page, email, { remember: true });
    await page.waitForURL(`${stack.serviceUrl}/account**`);

    const started = await oidc.initiateDeviceAuthorization(config, { scope: 'openid email offline_access', device_name: 'Work laptop' });
    assert.match(started.user_code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    const dpop = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair());
    // openid-client polls at the interval the service gave (5 s), and past it on slow_down.
    const polling = oidc.pollDeviceAuthorizationGrant(config, started, undefined, { DPoP: dpop });
    const mailsBefore = (await stack.mails(email)).length;

    // The link fills the form in; nothing is approved until the user says so.
    await page.goto(started.verification_uri_complete as string);
    assert.equal(await page.getByLabel('Code').inputValue(), started.user_code);
    await accessibleInEveryLanguage(
      page,
      new URL(started.verification_uri_complete as string).pathname + new URL(started.verification_uri_complete as string).search,
      'device code form',
    );
    await page.goto(started.verification_uri_complete as string);
    await page.getByRole('button', { name: 'Continue' }).click();

    // The session answers the sign-in at once: the confirmation, with the code to compare.
    await page.waitForURL(`${stack.serviceUrl}/device/confirm`);
    await page.getByRole('heading', { name: 'Allow Terminal Notes on a device?' }).waitFor();
    const text = (await page.textContent('main')) ?? '';
    assert.ok(text.includes(started.user_code), 'the code to compare with the device');
    assert.ok(text.includes(email));
    assert.match(text, /Work laptop/);
    assert.match(text, /declared by the device, not verified/);
    assert.match(text, /Keep you signed in/);
    await accessibleInEveryLanguage(page, '/device/confirm', 'device confirmation');
    await page.goto(`${stack.serviceUrl}/device/confirm?ui_locales=en`);
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.getByRole('heading', { name: 'Device connected' }).waitFor();

    const tokens = await polling;
    assert.equal(tokens.token_type?.toLowerCase(), 'dpop');
    assert.ok(tokens.refresh_token, 'offline_access, approved in a remembered browser');
    assert.equal(tokens.claims()?.email, email);
    assert.equal(tokens.claims()?.aud, config.clientMetadata().client_id);

    // No mail: the remembered browser's session was the proof.
    assert.equal((await stack.mails(email)).length, mailsBefore);
    assert.deepEqual(violations, []);
    await page.context().close();
  });
});
