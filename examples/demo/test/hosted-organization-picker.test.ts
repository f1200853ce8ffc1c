/**
 * The hosted organization picker in a real browser (issue 38): openid-client asks for scope
 * `organization` without naming one; a user of two organizations signs in and Chromium lands on
 * the picker, which
 * - lists the user's organizations with their roles there, one button each;
 * - has no serious or critical axe-core violation at a phone's size (375×667) and a desktop's, in
 *   English and (its language switcher) in German, and is no wider than the screen;
 * - choosing one: back at the app, whose ID token names that organization and the roles;
 * - an organization that requires MFA (`orgs update --mfa-required yes`), picked from a sign-in
 *   without a second factor: the hosted sign-in again, which sets up an authenticator app, and
 *   only then the code, its ID token's amr and acr saying mfa;
 * and no Content Security Policy violation on the way.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as OTPAuth from 'otpauth';
import type { Page } from 'playwright-core';
import { authorizationRequest, callbackClaims, emailAndCode, type RelyingParty, registerRelyingParty, watchedPage } from './fixtures.ts';
import { type PageServer, type Stack, screenshot, servePages, startStack } from './harness.ts';
import { assertAccessible } from './visual.ts';

const SIZES = { phone: { width: 375, height: 667 }, desktop: { width: 1280, height: 800 } };
const PICKING = { scope: 'openid email organization' };

// Over https too (a TLS front): the picker's binding cookie is a __Host- one there.
for (const scheme of ['http', 'https'] as const)
  describe(`the organization picker, in a real browser, over ${scheme}`, { timeout: 5 * 60_000 }, () => {
    let stack: Stack;
    let rpPages: PageServer;
    let app: RelyingParty;
    let page: Page;
    const violations: string[] = [];
    const run = Date.now().toString(36);
    const email = `picker.${run}@example.com`;
    const orgs: Record<'acme' | 'globex' | 'vault', string> = { acme: '', globex: '', vault: '' };

    before(async () => {
      stack = await startStack({ https: scheme === 'https' });
      rpPages = await servePages();
      app = await registerRelyingParty(stack, rpPages, 'Team Board', '/callback');
      await stack.cli('orgs', 'roles', 'create', 'editor');
      await stack.cli('orgs', 'roles', 'create', 'viewer');
      orgs.acme = (await stack.idp<{ id: string }>('orgs', 'create', '--name', 'Acme Corp')).id;
      orgs.globex = (await stack.idp<{ id: string }>('orgs', 'create', '--name', 'Globex')).id;
      orgs.vault = (await stack.idp<{ id: string }>('orgs', 'create', '--name', 'Vault Bank')).id;
      await stack.cli('orgs', 'update', orgs.vault, '--mfa-required', 'yes');
      page = await watchedPage(stack.browser, violations);
    });
    after(async () => {
      await rpPages?.close();
      await stack?.close();
    });

    /** axe-core at a phone's size and a desktop's, and no sideways scrolling; leaves the page at the desktop size. */
    async function accessibleAtBothSizes(on: Page, name: string) {
      for (const [size, viewport] of Object.entries(SIZES)) {
        await on.setViewportSize(viewport);
        await assertAccessible(on, `${name} (${size})`);
        assert.equal(
          await on.evaluate(() => document.documentElement.scrollWidth > window.innerWidth),
          false,
          `${name} (${size}): wider than the screen`,
        );
      }
    }

    it('a user of two organizations signs in and sees the picker, with their roles, accessibly in English and German', async () => {
      // The account exists once its first sign-in made it (another browser, no organization asked).
      const first = await watchedPage(stack.browser, violations);
      const plain = await authorizationRequest(app);
      await first.goto(plain.url.href);
      await emailAndCode(stack, first, email);
      await first.waitForURL(`${app.redirectUri}?**`);
      await first.context().close();
      await stack.cli('orgs', 'members', 'add', orgs.acme, email, '--role', 'editor');
      await stack.cli('orgs', 'members', 'add', orgs.globex, email, '--role', 'viewer');

      const { url } = await authorizationRequest(app, PICKING);
      await page.goto(url.href);
      await page.getByRole('heading', { name: 'Sign in to Team Board' }).waitFor();
      await emailAndCode(stack, page, email, { remember: true });
      await page.waitForURL(`${stack.serviceUrl}/signin/organization?request=**`);
      await page.getByRole('heading', { name: 'Choose an organization' }).waitFor();
      assert.equal(await page.getAttribute('html', 'lang'), 'en');
      assert.match((await page.textContent('main')) ?? '', /Team Board works for one of your organizations at a time/);
      const acme = page.getByRole('button', { name: /Acme Corp/ });
      assert.match((await acme.textContent()) ?? '', /Your roles: editor/);
      assert.match((await page.getByRole('button', { name: /Globex/ }).textContent()) ?? '', /Your roles: viewer/);
      await screenshot(page, 'hosted-organization-picker');
      await accessibleAtBothSizes(page, 'the organization picker');

      // The page's language switcher: the same picker, in German.
      await page.getByLabel('Language').selectOption('de');
      await page.getByRole('button', { name: 'Change language' }).click();
      await page.getByRole('heading', { name: 'Organisation auswählen' }).waitFor();
      assert.equal(await page.getAttribute('html', 'lang'), 'de');
      assert.match((await page.getByRole('button', { name: /Globex/ }).textContent()) ?? '', /Ihre Rollen: viewer/);
      await screenshot(page, 'hosted-organization-picker-de');
      await accessibleAtBothSizes(page, 'the German organization picker');
      await page.getByLabel('Sprache').selectOption('en');
      await page.getByRole('button', { name: 'Sprache ändern' }).click();
      await page.getByRole('heading', { name: 'Choose an organization' }).waitFor();
    });

    it('choosing one: back at the app, whose ID token names that organization and the roles there', async () => {
      const { url, expected } = await authorizationRequest(app, PICKING);
      await page.goto(url.href);
      // A live session: the picker at once, no sign-in.
      await page.getByRole('heading', { name: 'Choose an organization' }).waitFor();
      await page.getByRole('button', { name: /Globex/ }).click();
      const claims = await callbackClaims(page, app, expected);
      assert.equal(claims.email, email);
      assert.deepEqual([claims.org_id, claims.org_name, claims.org_roles], [orgs.globex, 'Globex', ['viewer']]);
    });

    it('an organization that requires MFA, picked without a second factor: the sign-in sets one up, then the code, amr and acr saying mfa', async () => {
      await stack.cli('orgs', 'members', 'add', orgs.vault, email);
      const { url, expected } = await authorizationRequest(app, PICKING);
      await page.goto(url.href);
      await page.getByRole('heading', { name: 'Choose an organization' }).waitFor();
      assert.match((await page.getByRole('button', { name: /Vault Bank/ }).textContent()) ?? '', /No roles/);
      await page.getByRole('button', { name: /Vault Bank/ }).click();
      // The step-up: the hosted sign-in for that organization, the address filled in; setting up a
      // second factor takes the emailed code first, as a new device's sign-in at a strict app does.
      await page.getByRole('heading', { name: 'Sign in to Team Board' }).waitFor();
      assert.equal(await page.getByLabel('Email address').inputValue(), email);
      await emailAndCode(stack, page, email);
      await page.getByRole('group', { name: /requires a second factor/ }).waitFor();
      await page.getByLabel('An authenticator app').check();
      await page.locator('#enroll-step').getByRole('button', { name: 'Continue' }).click();
      await page.getByRole('img', { name: /QR code/ }).waitFor();
      const secret = (await page.locator('#totp-secret').textContent()) ?? '';
      const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 });
      const code = page.getByLabel('The 6-digit code from your authenticator app');
      await code.fill(totp.generate());
      await code.press('Enter');
      await page.getByRole('heading', { name: 'Save your recovery codes' }).waitFor();
      await page.getByRole('button', { name: 'I have saved them' }).click();
      // The hosted pages may offer a passkey next (the user has none): declined.
      const offer = page.getByRole('button', { name: 'Not now' });
      await Promise.race([offer.waitFor().then(() => offer.click()), page.waitForURL(`${app.redirectUri}?**`)]);
      const claims = await callbackClaims(page, app, expected);
      assert.equal(claims.org_id, orgs.vault);
      assert.ok((claims.amr as string[]).includes('mfa'), `amr ${claims.amr}`);
      assert.equal(claims.acr, 'urn:service:acr:mfa');
    });

    it('met no Content Security Policy violation', () => {
      assert.deepEqual(violations, []);
    });
  });
