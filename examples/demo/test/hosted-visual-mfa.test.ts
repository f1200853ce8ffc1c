/**
 * The hosted second-factor pages as people see them, in Chromium (issue 28), for a branded
 * application that requires MFA:
 * - screenshots of the MFA choice, the authenticator app's setup (QR code and key masked), the
 *   recovery codes (the codes masked), the passkey offer, and a login's authenticator-code step
 *   and passkey prompt are compared with the references in test/screenshots/ (visual.ts: pixelmatch, a small
 *   tolerance), phone and desktop where the layouts differ;
 * - axe-core finds no serious or critical violation on each of them, phone and desktop, light
 *   and dark.
 * The sign-in and code steps before them are hosted-visual.test.ts's. To accept a change on
 * purpose: `UPDATE_SCREENSHOTS=1` (docs/testing.md).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as OTPAuth from 'otpauth';
import { addVirtualAuthenticator, authorizeUrl, emailAndCode, enrollPasskeyMfa } from './fixtures.ts';
import { type PageServer, type Stack, servePages, startStack } from './harness.ts';
import { accessibleEverywhere, shoot, VIEWPORTS } from './visual.ts';

const LOGO = new URL('../../../packages/idp/test/support/fixtures/logo-circle.png', import.meta.url).pathname;

describe('the hosted MFA pages look as designed and pass axe-core', { timeout: 4 * 60_000 }, () => {
  let stack: Stack;
  let rp: PageServer;
  let clientId: string;
  const callback = () => `${rp.origin}/callback`;

  before(async () => {
    // A host name, not an IP address: the passkey offer needs one.
    stack = await startStack({ serviceHost: 'localhost' });
    rp = await servePages();
    rp.pages.set('/callback', '<!doctype html><title>callback</title><p>back at the app</p>');
    await stack.cli('settings', 'set', 'product-name', 'Acme Accounts');
    ({ clientId } = await stack.idp<{ clientId: string }>('clients', 'create', '--name', 'strict-wiki', '--redirect-uri', callback()));
    await stack.cli(
      'clients',
      'update',
      clientId,
      '--mfa-policy',
      'required',
      '--display-name',
      'Acme Wiki',
      '--accent',
      '#c2410c',
      '--logo',
      LOGO,
    );
  });
  after(async () => {
    await rp?.close();
    await stack?.close();
  });

  it('the MFA choice, the authenticator setup, the recovery codes, the passkey offer and the MFA code step', async () => {
    const email = 'mia@example.com';
    const context = await stack.browser.newContext({ viewport: VIEWPORTS.desktop, reducedMotion: 'reduce', colorScheme: 'light' });
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    // A user-verifying platform authenticator: the choice lists the passkey, and the page offers one after.
    await addVirtualAuthenticator(page);
    await page.goto(authorizeUrl(stack, clientId, callback(), { login_hint: email }));
    await page.getByRole('heading', { name: 'Sign in to Acme Wiki' }).waitFor();
    await page.locator('.brand-logo').evaluate((img) => (img as HTMLImageElement).decode());
    await emailAndCode(stack, page, email);

    await page.getByRole('group', { name: /Acme Wiki requires a second factor/ }).waitFor();
    // Not email: after the emailed code it would prove the same mailbox (one mailbox is one factor).
    assert.equal(await page.getByRole('radio').count(), 3, 'SMS, authenticator app and passkey');
    await shoot(page, 'mfa-choice');
    await accessibleEverywhere(page, 'MFA choice');

    await page.getByLabel('An authenticator app').check();
    await page.locator('#enroll-step').getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('img', { name: /QR code/ }).waitFor();
    const secret = (await page.locator('#totp-secret').textContent()) ?? '';
    // The QR code and the key change with every enrollment: masked.
    await shoot(page, 'mfa-totp-setup', [page.locator('#totp-qr'), page.locator('#totp-secret')], ['phone']);
    await accessibleEverywhere(page, 'authenticator setup');

    const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 });
    const code = page.getByLabel('The 6-digit code from your authenticator app');
    await code.fill(totp.generate());
    await code.press('Enter');
    await page.getByRole('heading', { name: 'Save your recovery codes' }).waitFor();
    assert.equal(await page.locator('#recovery-codes li').count(), 10);
    await shoot(page, 'recovery-codes', [page.locator('#recovery-codes')]);
    await accessibleEverywhere(page, 'recovery codes');

    await page.getByRole('button', { name: 'I have saved them' }).click();
    await page.getByRole('heading', { name: 'Sign in faster next time with a passkey' }).waitFor();
    await shoot(page, 'passkey-offer', [], ['phone']);
    await accessibleEverywhere(page, 'passkey offer');
    await page.getByRole('button', { name: 'Not now' }).click();
    await page.waitForURL(`${callback()}?**`);

    // A fresh sign-in on this remembered browser: the authenticator app's code.
    await page.goto(authorizeUrl(stack, clientId, callback(), { login_hint: email, prompt: 'login' }));
    await page.getByRole('button', { name: 'Continue' }).click();
    await code.waitFor();
    assert.equal(await page.getByRole('button', { name: 'Use a recovery code instead' }).isVisible(), true);
    await shoot(page, 'mfa-totp');
    await accessibleEverywhere(page, 'MFA code step');
    // The step works as shot: the next step's code passes it (a step never passes twice).
    await code.fill(totp.generate({ timestamp: Date.now() + 30_000 }));
    await code.press('Enter');
    await page.getByRole('button', { name: 'Not now' }).click(); // still no passkey: offered again
    await page.waitForURL(`${callback()}?**`);
    await context.close();
  });

  it('the passkey prompt of a login whose second factor is a passkey', async () => {
    const email = 'pia@example.com';
    const context = await stack.browser.newContext({ viewport: VIEWPORTS.desktop, reducedMotion: 'reduce', colorScheme: 'light' });
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    const { cdp, authenticatorId } = await addVirtualAuthenticator(page);
    await page.goto(authorizeUrl(stack, clientId, callback(), { login_hint: email }));
    await emailAndCode(stack, page, email);
    await enrollPasskeyMfa(page);
    await page.waitForURL(`${callback()}?**`);

    // The authenticator answers nothing by itself: the email field's passkey autofill stays unanswered.
    await cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId, enabled: false });
    await page.goto(authorizeUrl(stack, clientId, callback(), { login_hint: email, prompt: 'login' }));
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('button', { name: 'Use my passkey' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Use a recovery code instead' }).isVisible(), true);
    await shoot(page, 'mfa-passkey', [], ['phone']);
    await accessibleEverywhere(page, 'passkey MFA prompt');
    await context.close();
  });
});
