/**
 * The hosted pages as people see them, in Chromium (issue 28):
 * - screenshots of the hosted steps (sign-in and its code step for a branded application, the
 *   new-device link's page, the sign-out confirmation and signed-out pages, an error page; phone and desktop) are compared
 *   with the references in test/screenshots/ (visual.ts: pixelmatch, a small tolerance), so an
 *   unintended visual change fails; a second, unbranded application's sign-in too;
 * - the branded application shows its logo, name, accent, terms and privacy links; the second
 *   keeps its own (no logo, its name, the default accent, no links); the new-device page names
 *   the product (set by `settings set product-name`), never the built-in hosted client;
 * - axe-core finds no serious or critical violation on any of those pages, phone and desktop,
 *   light and dark.
 *
 * Rendering is made deterministic: fixed viewports, reduced motion, fonts loaded before a
 * shot, fixed addresses and product name on a fresh service, the resend countdown and the
 * new-device time masked. To accept a change on
 * purpose: `UPDATE_SCREENSHOTS=1` (docs/testing.md).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { authorizeUrl } from './fixtures.ts';
import { type PageServer, type Stack, servePages, startStack } from './harness.ts';
import { accessibleEverywhere as accessible, shoot, VIEWPORTS } from './visual.ts';

const LOGO = new URL('../../../packages/idp/test/support/fixtures/logo-circle.png', import.meta.url).pathname;

describe('the hosted pages look as designed, branded per application, and pass axe-core', { timeout: 3 * 60_000 }, () => {
  let stack: Stack;
  let rp: PageServer;
  let branded: string;
  let plain: string;
  const contexts: BrowserContext[] = [];

  before(async () => {
    stack = await startStack();
    rp = await servePages();
    rp.pages.set('/callback', '<!doctype html><title>callback</title><p>back at the app</p>');
    const create = (name: string) =>
      stack.idp<{ clientId: string }>('clients', 'create', '--name', name, '--redirect-uri', `${rp.origin}/callback`);
    await stack.cli('settings', 'set', 'product-name', 'Acme Accounts');
    ({ clientId: branded } = await create('Acme Wiki'));
    ({ clientId: plain } = await create('Beta Notes'));
    await stack.idp(
      'clients',
      'update',
      branded,
      '--display-name',
      'Acme Wiki',
      '--accent',
      '#c2410c',
      '--logo',
      LOGO,
      '--terms-url',
      'https://wiki.example/terms',
      '--privacy-url',
      'https://wiki.example/privacy',
    );
  });
  after(async () => {
    for (const context of contexts) await context.close();
    await rp?.close();
    await stack?.close();
  });

  async function freshPage(): Promise<Page> {
    const context = await stack.browser.newContext({ viewport: VIEWPORTS.desktop, reducedMotion: 'reduce', colorScheme: 'light' });
    contexts.push(context);
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    return page;
  }

  const accentOf = (page: Page, name: string) =>
    page.getByRole('button', { name, exact: true }).evaluate((button) => getComputedStyle(button).backgroundColor);

  it('a branded sign-in, its code step, the new-device page, signed out and an error page', async () => {
    const email = 'ann@example.com';
    const page = await freshPage();
    await page.goto(authorizeUrl(stack, branded, `${rp.origin}/callback`));
    await page.getByRole('heading', { name: 'Sign in to Acme Wiki' }).waitFor();
    assert.match((await page.locator('.brand-logo').getAttribute('src')) ?? '', /^\/branding\/logos\/[0-9a-f]{64}\.png$/);
    await page.locator('.brand-logo').evaluate((img) => (img as HTMLImageElement).decode());
    assert.equal(await page.locator('.brand').textContent(), 'Acme Wiki');
    assert.equal(await accentOf(page, 'Continue'), 'rgb(194, 65, 12)');
    assert.equal(await page.getByRole('link', { name: 'Terms of service' }).getAttribute('href'), 'https://wiki.example/terms');
    assert.equal(await page.getByRole('link', { name: 'Privacy policy' }).getAttribute('href'), 'https://wiki.example/privacy');
    await shoot(page, 'signin-branded');
    await accessible(page, 'sign-in');

    const seen = (await stack.mails(email)).length;
    await page.getByLabel('Email address').fill(email);
    await page.getByRole('button', { name: 'Continue' }).click();
    const code = page.getByLabel(/6-digit code we emailed/);
    await code.waitFor();
    const otp = await stack.nextMailOtp(email, seen);
    await shoot(page, 'code-branded', [page.locator('#otp-resend')]);
    await accessible(page, 'code step');

    await code.fill(otp);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL(`${rp.origin}/callback?**`);

    const notice = (await stack.mails(email)).find((mail) => /\/devices\/not-me\?t=/.test(mail.text));
    const link = notice?.text.match(/http:\/\/\S+\/devices\/not-me\?t=\S+/)?.[0];
    assert.ok(link, 'the first sign-in mailed a new-device notice');
    await page.goto(link);
    await page.getByRole('heading', { name: 'Device sign-in' }).waitFor();
    // Not the built-in hosted client's name: the device belongs to the hosted sign-in, so the product's.
    assert.match((await page.locator('main').textContent()) ?? '', /signed in to Acme Accounts/);
    assert.doesNotMatch((await page.locator('main').textContent()) ?? '', /Hosted sign-in/);
    await shoot(page, 'new-device', [page.getByText(/UTC/)]);
    await accessible(page, 'new-device link');

    await page.goto(`${stack.serviceUrl}/logout`);
    await page.getByRole('heading', { name: 'Sign out?' }).waitFor();
    assert.equal(await page.locator('.brand').textContent(), 'Acme Accounts', 'the sign-out page speaks for the product');
    await shoot(page, 'logout');
    await accessible(page, 'logout');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'You are signed out' }).waitFor();
    await shoot(page, 'signed-out', [], ['phone']);
    await accessible(page, 'signed out');

    await page.goto(`${stack.serviceUrl}/authorize?client_id=nobody`);
    await page.getByRole('heading', { name: 'Sign-in request refused' }).waitFor();
    assert.equal(await page.locator('.brand').textContent(), 'Acme Accounts', 'an error page speaks for the product');
    await shoot(page, 'error');
    await accessible(page, 'error page');
  });

  it('a second application keeps its own name and look', async () => {
    const page = await freshPage();
    await page.goto(authorizeUrl(stack, plain, `${rp.origin}/callback`));
    await page.getByRole('heading', { name: 'Sign in to Beta Notes' }).waitFor();
    assert.equal(await page.locator('.brand-logo').count(), 0, 'no logo of another application');
    assert.equal(await page.getByText('Acme Wiki').count(), 0, 'no other application’s name');
    assert.equal(await page.locator('.legal').count(), 0, 'no other application’s terms');
    assert.notEqual(await accentOf(page, 'Continue'), 'rgb(194, 65, 12)', 'not the other application’s accent');
    await shoot(page, 'signin-plain', [], ['desktop']);
  });
});
