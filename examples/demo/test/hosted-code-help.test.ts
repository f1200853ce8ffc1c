/**
 * Help at the hosted code step, in Chromium (issue 28): "Resend the code" is disabled with a
 * visible countdown through the resend spacing (the test service's is SEND_SPACING_SECONDS),
 * then sends a new code; a resend inside the spacing is still refused by the service (the
 * button forced on); "Use another address" goes back to the address; a code pasted with a
 * space signs in. The MFA step's emailed code (a login of an application that requires MFA)
 * has the same "Resend the code": the same countdown, a forced resend inside the spacing
 * refused, a resent code that passes; none beside a recovery code. axe-core finds no serious or
 * critical violation on the branded code step, phone and desktop, light and dark, nor on the
 * MFA code step with its resend.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { authorizeUrl, demoSignUpWithEmailMfa, emailAndCode } from './fixtures.ts';
import { type PageServer, SEND_SPACING_SECONDS, SEND_WINDOW_MS, type Stack, servePages, startStack } from './harness.ts';
import { assertAccessible, VIEWPORTS } from './visual.ts';

const LOGO = new URL('../../../packages/idp/test/support/fixtures/logo-circle.png', import.meta.url).pathname;

describe('the hosted code step helps when a code does not come', { timeout: 3 * 60_000 }, () => {
  let stack: Stack;
  let rp: PageServer;
  let clientId: string;
  let strictId: string;
  before(async () => {
    stack = await startStack();
    rp = await servePages();
    rp.pages.set('/callback', '<!doctype html><title>callback</title><p>back at the app</p>');
    ({ clientId } = await stack.idp<{ clientId: string }>(
      'clients',
      'create',
      '--name',
      'Acme Wiki',
      '--redirect-uri',
      `${rp.origin}/callback`,
    ));
    await stack.idp('clients', 'update', clientId, '--display-name', 'Acme Wiki', '--accent', '#c2410c', '--logo', LOGO);
    ({ clientId: strictId } = await stack.idp<{ clientId: string }>(
      'clients',
      'create',
      '--name',
      'strict-portal',
      '--redirect-uri',
      `${rp.origin}/callback`,
    ));
    await stack.cli('clients', 'update', strictId, '--mfa-policy', 'required', '--display-name', 'Strict Portal');
  });
  after(async () => {
    await rp?.close();
    await stack?.close();
  });

  async function codeStep(email: string, viewport: keyof typeof VIEWPORTS = 'desktop', scheme: 'light' | 'dark' = 'light') {
    const context = await stack.browser.newContext({ viewport: VIEWPORTS[viewport], colorScheme: scheme });
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    await page.goto(authorizeUrl(stack, clientId, `${rp.origin}/callback`, { login_hint: email }));
    await page.getByRole('heading', { name: 'Sign in to Acme Wiki' }).waitFor();
    const seen = (await stack.mails(email)).length;
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByLabel(/6-digit code we emailed/).waitFor();
    return { page, seen, close: () => context.close() };
  }

  const resend = (page: Page) => page.locator('#otp-resend');

  /** Forces a disabled resend button on and clicks it: the service refuses inside the spacing, and the page says so. */
  async function forceResendInsideSpacing(page: Page, id: string) {
    await page.evaluate((buttonId) => {
      const button = document.getElementById(buttonId) as HTMLButtonElement;
      button.disabled = false;
      button.click();
    }, id);
    await page
      .locator('#status')
      .filter({ hasText: /wait|Try again/i })
      .waitFor();
  }

  it('counts down, resends a new code, refuses one inside the spacing, and takes a pasted code with a space', async () => {
    const email = `help.${Date.now().toString(36)}@example.com`;
    const { page, seen, close } = await codeStep(email);
    await stack.nextMailOtp(email, seen);
    // The application's brand: its logo (served by content hash), name and accent on the primary button.
    assert.match((await page.locator('.brand-logo').getAttribute('src')) ?? '', /^\/branding\/logos\/[0-9a-f]{64}\.png$/);
    assert.equal(await page.locator('.brand-logo').evaluate((img) => (img as HTMLImageElement).naturalWidth), 64);
    assert.equal(await page.locator('.brand').textContent(), 'Acme Wiki');
    const fill = await page.getByRole('button', { name: 'Verify' }).evaluate((button) => getComputedStyle(button).backgroundColor);
    assert.equal(fill, 'rgb(194, 65, 12)');
    assert.equal(await resend(page).isDisabled(), true, 'disabled at first');
    assert.match((await resend(page).textContent()) ?? '', /^Resend the code in \d+ seconds?$/);
    await page.getByText("Didn't get it? Look in your spam folder").waitFor();
    // Enabled once the spacing has passed.
    await page.waitForFunction(() => !(document.getElementById('otp-resend') as HTMLButtonElement).disabled, undefined, {
      timeout: (SEND_SPACING_SECONDS + 3) * 1000,
    });
    assert.equal(await resend(page).textContent(), 'Resend the code');
    await resend(page).click();
    await page.getByText('A new code is on its way.').waitFor();
    const newCode = await stack.nextMailOtp(email, seen + 1);
    assert.equal((await stack.mails(email)).length, seen + 2, 'a second code was mailed');
    assert.equal(await resend(page).isDisabled(), true, 'disabled again after a resend');

    await page.getByLabel(/6-digit code we emailed/).fill(`${newCode.slice(0, 3)} ${newCode.slice(3)}`);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL(`${rp.origin}/callback?**`).catch(async (error) => {
      throw new Error(
        `${error}; status: ${await page.locator('#status').textContent()}; visible: ${await page.locator('main form:not([hidden])').first().getAttribute('id')}`,
      );
    });
    await close();
  });

  it('a resend forced inside the spacing is refused by the service; "Use another address" goes back to the address', async () => {
    const email = `other.${Date.now().toString(36)}@example.com`;
    const { page, seen, close } = await codeStep(email);
    await stack.nextMailOtp(email, seen);
    // Forced on inside the spacing: the service refuses, and no mail goes out.
    await forceResendInsideSpacing(page, 'otp-resend');
    assert.equal((await stack.mails(email)).length, seen + 1, 'no second code inside the spacing');

    await page.getByRole('button', { name: 'Use another address' }).click();
    const field = page.getByLabel('Email address');
    await field.waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'email');
    assert.equal(await page.locator('#otp-step').isHidden(), true);
    await close();
  });

  /** Waits until the countdown of `button` has run out (the service's spacing has passed). */
  const enabled = (page: Page, button: string) =>
    page.waitForFunction((id) => !(document.getElementById(id) as HTMLButtonElement).disabled, button, {
      timeout: (SEND_SPACING_SECONDS + 3) * 1000,
    });

  it('the emailed second factor can be resent too: same countdown, and a resend inside the spacing is refused', async () => {
    const email = `mfa.${Date.now().toString(36)}@example.com`;
    const context = await stack.browser.newContext({ viewport: VIEWPORTS.desktop });
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    const mfaResend = page.locator('#mfa-resend');
    const code = page.getByLabel('The 6-digit code we sent by email');
    // Email as the second factor is chosen at the demo (the hosted pages never offer it: after the
    // emailed code it would prove the same mailbox). This browser then signs in once at a lenient
    // app, which asks no second mailed code and remembers the browser's key.
    await demoSignUpWithEmailMfa(stack, page, email);
    await new Promise((resolve) => setTimeout(resolve, SEND_WINDOW_MS)); // past the sign-in code's resend spacing
    await page.goto(authorizeUrl(stack, clientId, `${rp.origin}/callback`, { login_hint: email }));
    await emailAndCode(stack, page, email);
    await page.waitForURL(`${rp.origin}/callback?**`);

    // A later sign-in of the strict app on this remembered browser (its key registered before): the MFA code by email, resent after the countdown.
    await page.goto(authorizeUrl(stack, strictId, `${rp.origin}/callback`, { login_hint: email, prompt: 'login' }));
    const seen = (await stack.mails(email)).length;
    await page.getByRole('button', { name: 'Continue' }).click();
    await code.waitFor();
    await stack.nextMailOtp(email, seen);
    assert.equal(await mfaResend.isDisabled(), true, 'disabled at first');
    assert.match((await mfaResend.textContent()) ?? '', /^Resend the code in \d+ seconds?$/);
    await assertAccessible(page, 'MFA email code step');
    // Forced on inside the spacing: the service refuses, and no mail goes out.
    await forceResendInsideSpacing(page, 'mfa-resend');
    assert.equal((await stack.mails(email)).length, seen + 1, 'no second MFA code inside the spacing');
    await enabled(page, 'mfa-resend');
    assert.equal(await mfaResend.textContent(), 'Resend the code');
    await mfaResend.click();
    await page.getByText('A new code is on its way.').waitFor();
    const again = await stack.nextMailOtp(email, seen + 1);
    assert.equal(await mfaResend.isDisabled(), true, 'disabled again after a resend');
    await page.getByRole('button', { name: 'Use a recovery code instead' }).click();
    assert.equal(await mfaResend.isHidden(), true, 'no resend for a recovery code');
    await page.getByRole('button', { name: 'Use the 6-digit code instead' }).click();
    await code.fill(again);
    await code.press('Enter');
    await page.waitForURL(`${rp.origin}/callback?**`);
    await context.close();
  });

  for (const viewport of ['phone', 'desktop'] as const)
    for (const scheme of ['light', 'dark'] as const)
      it(`the branded code step has no serious axe-core violation (${viewport}, ${scheme})`, async () => {
        const email = `axe.${viewport}.${scheme}.${Date.now().toString(36)}@example.com`;
        const { page, close } = await codeStep(email, viewport, scheme);
        await assertAccessible(page, `code step ${viewport} ${scheme}`);
        await close();
      });
});
