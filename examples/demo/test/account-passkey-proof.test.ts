/**
 * A passkey as the second factor proven on the account page by its ceremony, in Chromium with
 * its virtual authenticator; the service on http://localhost (a relying party id is a domain).
 * A new user enrolls a passkey as the MFA method at an app whose policy requires one, then opens
 * the account page: new recovery codes and the data download each ask "Use your passkey", whose
 * ceremony (the page's script: options bound to the step, the assertion posted with the step's
 * own form) completes the action. axe at phone and desktop sizes on the step; no CSP violation.
 * Without JavaScript the button is absent and the recovery-code field stays where one is allowed.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  addVirtualAuthenticator,
  authorizationRequest,
  callbackClaims,
  emailAndCode,
  enrollPasskeyMfa,
  type RelyingParty,
  strictPortalSuite,
  watchedPage,
} from './fixtures.ts';
import { type Stack, screenshot } from './harness.ts';
import { assertAccessible, VIEWPORTS } from './visual.ts';

describe('the account page proves a passkey second factor by its ceremony', { timeout: 5 * 60_000 }, () => {
  let stack: Stack;
  let app: RelyingParty;
  const email = `account.pkproof.${Date.now().toString(36)}@example.com`;
  const violations: string[] = [];
  strictPortalSuite((suite) => ({ stack, app } = suite));

  it('regenerates recovery codes and downloads the data with the passkey; axe on the step at both sizes', async () => {
    const page = await watchedPage(stack.browser, violations, { acceptDownloads: true });
    await addVirtualAuthenticator(page);

    // The passkey becomes the second factor at the app's sign-in (its policy requires one).
    const first = await authorizationRequest(app, { login_hint: email });
    await page.goto(first.url.href);
    await emailAndCode(stack, page, email, { remember: true });
    await enrollPasskeyMfa(page);
    assert.deepEqual((await callbackClaims(page, app, first.expected))?.amr, ['otp', 'mfa', 'hwk', 'user']);

    // The account page through the same sign-in (a passkey step on the way, if the session asks for one).
    await page.goto(`${stack.serviceUrl}/account`);
    const heading = page.getByRole('heading', { name: 'Your account', level: 1 });
    await heading.or(page.locator('#passkey-mfa-step:not([hidden])')).first().waitFor();
    if (!(await heading.isVisible())) await page.locator('#passkey-mfa-step button[type=submit]').click();
    await heading.waitFor();

    // New recovery codes: the passkey, never a recovery code (no code field).
    await page.getByRole('button', { name: 'Make new recovery codes' }).click();
    await page.getByRole('heading', { name: 'Confirm it is you to make new recovery codes', level: 1 }).waitFor();
    const usePasskey = page.getByRole('button', { name: 'Use your passkey' });
    await usePasskey.waitFor();
    assert.equal(await page.locator('input[name="code"]').count(), 0);
    for (const size of ['phone', 'desktop'] as const) {
      await page.setViewportSize(VIEWPORTS[size]);
      await assertAccessible(page, `the passkey proof step (${size})`);
    }
    await screenshot(page, 'account-passkey-proof');
    await usePasskey.click();
    await page.getByRole('heading', { name: 'Your new recovery codes', level: 1 }).waitFor();
    assert.equal(await page.locator('[data-recovery-codes] li').count(), 10);

    // The data download: the passkey beside the recovery-code field.
    await page.goto(`${stack.serviceUrl}/account`);
    await page.getByRole('button', { name: 'Download my data (JSON)' }).click();
    await page.getByRole('heading', { name: 'Confirm it is you to download your data', level: 1 }).waitFor();
    await page.getByLabel('Code (or one of your recovery codes)').waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Use your passkey' }).click()]);
    assert.equal(download.suggestedFilename(), 'my-account.json');
    const exported = JSON.parse(readFileSync((await download.path()) as string, 'utf8'));
    assert.equal(exported.account.email, email);
    assert.equal(exported.mfa.method, 'passkey');
    assert.deepEqual(violations, [], 'no CSP violation');

    // Without JavaScript: no passkey button; the recovery-code field stays for the download.
    const plain = await stack.browser.newContext({ javaScriptEnabled: false, storageState: await page.context().storageState() });
    try {
      const noScript = await plain.newPage();
      await noScript.goto(`${stack.serviceUrl}/account`);
      await noScript.getByRole('button', { name: 'Download my data (JSON)' }).click();
      await noScript.getByLabel('Code (or one of your recovery codes)').waitFor();
      assert.equal(await noScript.getByRole('button', { name: 'Use your passkey' }).count(), 0);
    } finally {
      await plain.close();
    }
    await page.context().close();
  });
});
