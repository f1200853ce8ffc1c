/**
 * The account center (/account) in Chromium: a user signs in at Acme Wiki by redirect, follows its
 * "Your account" link to the service's account page (the SSO session opens it), sees this browser
 * listed as "this device"; a second browser context signs in too and is revoked from the first (its
 * next sign-in asks for the email code again); the data download is the documented JSON; the
 * account is deleted with its typed address and the session ends. The page in French by
 * Accept-Language (translated, `lang="fr"`), and axe-core at desktop and phone sizes.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it, it as test } from 'node:test';
import * as OTPAuth from 'otpauth';
import type { BrowserContext, Page } from 'playwright-core';
import type { RunningOidcApp } from '../src/oidc-app.ts';
import {
  addVirtualAuthenticator,
  type EmailAndCodeLabels,
  emailAndCode as signInAtHostedPage,
  startRegisteredOidcApp,
  watchedPage,
} from './fixtures.ts';
import { SEND_WINDOW_MS, type Stack, screenshot, startStack } from './harness.ts';
import { assertAccessible, VIEWPORTS } from './visual.ts';

/** Over https, the scenarios that use every account cookie run again: the whole tour, and the language carried through the sign-in. */
const OVER_HTTPS = [/^from an app to the account page/, /^in German by ui_locales=de/];

describe('the account center in a real browser', { timeout: 6 * 60_000 }, () => accountScenarios('http'));
// Over https (a TLS front): the account center's __Host- cookies (login, language, session) must
// survive Chromium, which drops a __Host- cookie whose Path is not /.
describe('the account center in a real browser, over https', { timeout: 4 * 60_000 }, () => accountScenarios('https'));

function accountScenarios(scheme: 'http' | 'https') {
  const it = (name: string, run: () => Promise<void>) => {
    if (scheme === 'http' || OVER_HTTPS.some((pattern) => pattern.test(name))) test(name, run);
  };
  let stack: Stack;
  let wiki: RunningOidcApp;
  const contexts: BrowserContext[] = [];
  const violations: string[] = [];
  const run = Date.now().toString(36);

  before(async () => {
    stack = await startStack({ https: scheme === 'https' });
    wiki = await startRegisteredOidcApp(stack, 'Acme Wiki');
  });
  after(async () => {
    for (const context of contexts) await context.close();
    await wiki?.close();
    await stack?.close();
  });

  async function freshPage(options: { locale?: string } = {}): Promise<Page> {
    const page = await watchedPage(stack.browser, violations, { acceptDownloads: true, ...options });
    contexts.push(page.context());
    return page;
  }

  /** The hosted page's address and emailed code, this browser remembered (`labels`: the page in another language). */
  const emailAndCode = (page: Page, email: string, labels?: EmailAndCodeLabels) =>
    signInAtHostedPage(stack, page, email, { remember: true, ...(labels ? { labels } : {}) });
  const noSeriousViolations = assertAccessible;

  it('from an app to the account page: this device, another device revoked, the data as JSON, the account deleted', async () => {
    const email = `account.${run}@example.com`;
    const page = await freshPage();
    await page.goto(wiki.url);
    await page
      .getByRole('button', { name: /sign in/i })
      .or(page.getByRole('link', { name: /sign in/i }))
      .first()
      .click();
    await emailAndCode(page, email);
    await page.locator('#who').waitFor();
    await page.locator('#account').click();
    await page.getByRole('heading', { name: 'Your account', level: 1 }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/account');
    const thisDevice = page.locator('li[data-device]', { hasText: 'This device' });
    assert.equal(await thisDevice.count(), 1);
    assert.match((await thisDevice.textContent()) ?? '', /Chrome/);
    const apps = (await page.getByRole('region', { name: 'Applications' }).textContent()) ?? '';
    assert.match(apps, /Acme Wiki/);
    assert.doesNotMatch(apps, /Hosted sign-in|Operator console/, "the service's own clients are not listed");
    // The activity in words: the sign-in to the app named, never a raw event type.
    const activity = page.getByRole('region', { name: 'Recent activity' });
    await activity.getByText('Signed in to Acme Wiki').first().waitFor();
    const activityText = (await activity.textContent()) ?? '';
    assert.match(activityText, /Browser remembered/);
    assert.match(activityText, /Opened your account page/);
    assert.doesNotMatch(activityText, /sign_in\.|device\.registered|account\.signed_in|user\.created/, 'no raw event type');
    await noSeriousViolations(page, 'account, desktop');
    await page.setViewportSize({ width: 375, height: 740 });
    await noSeriousViolations(page, 'account, phone');
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1), 'fits a phone');
    await screenshot(page, 'account-phone');
    await page.setViewportSize({ width: 1280, height: 800 });

    // A second browser signs in to the account page directly.
    const other = await freshPage();
    await other.goto(`${stack.serviceUrl}/account`);
    await new Promise((resolve) => setTimeout(resolve, SEND_WINDOW_MS)); // one code per address per window
    await emailAndCode(other, email);
    await other.getByRole('heading', { name: 'Your account', level: 1 }).waitFor();
    await page.reload();
    const second = page.locator('li[data-device]:not(:has(em))'); // "this device" is the one marked
    assert.equal(await second.count(), 1);
    await second.getByRole('button', { name: 'Sign out this device' }).click();
    await page.getByRole('heading', { name: 'Your account', level: 1 }).waitFor();
    assert.equal(await page.locator('li[data-device]').count(), 1);
    // The revoked browser's session is over, and its next sign-in asks for the emailed code.
    await other.goto(`${stack.serviceUrl}/account`);
    await other.getByLabel('Email address').waitFor();

    // The data, as the documented JSON, after a fresh proof: this user has no second factor, so a code mailed to the address stands in.
    await new Promise((resolve) => setTimeout(resolve, SEND_WINDOW_MS));
    let seen = (await stack.mails(email)).length;
    await page.getByRole('button', { name: 'Download my data (JSON)' }).click();
    await page.getByRole('heading', { name: 'Confirm it is you to download your data', level: 1 }).waitFor();
    await noSeriousViolations(page, 'proof step, desktop');
    await page.getByLabel('The code').fill(await stack.nextMailOtp(email, seen));
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Confirm' }).click()]);
    assert.equal(download.suggestedFilename(), 'my-account.json');
    const exported = JSON.parse(readFileSync((await download.path()) as string, 'utf8'));
    assert.equal(exported.account.email, email);
    for (const key of ['devices', 'mfa', 'recoveryCodes', 'clientSignIns', 'events']) assert.ok(key in exported, key);

    // Deleted: the address typed, the account gone, the session ended.
    await page.goto(`${stack.serviceUrl}/account`);
    await new Promise((resolve) => setTimeout(resolve, SEND_WINDOW_MS));
    seen = (await stack.mails(email)).length;
    await page.getByLabel('Type your email address to confirm').fill(email);
    await page.getByRole('button', { name: 'Delete my account for good' }).click();
    await page.getByRole('heading', { name: 'Confirm it is you to delete your account', level: 1 }).waitFor();
    await page.getByLabel('The code').fill(await stack.nextMailOtp(email, seen));
    await page.getByRole('button', { name: 'Delete my account for good' }).click();
    await page.getByText('Your account has been deleted.').waitFor();
    await assert.rejects(stack.idp('users', 'show', email));
    await page.goto(`${stack.serviceUrl}/account`);
    await page.getByLabel('Email address').waitFor();
    assert.deepEqual(violations, []);
  });

  it('in French by Accept-Language: translated, lang="fr"', async () => {
    const email = `compte.${run}@example.com`;
    const page = await freshPage({ locale: 'fr-FR' });
    await page.goto(`${stack.serviceUrl}/account`);
    await emailAndCode(page, email, {
      email: 'Adresse e-mail',
      remember: 'Se souvenir de cet appareil',
      go: 'Continuer',
      otp: /code à 6 chiffres/,
    });
    await page.getByRole('heading', { name: 'Votre compte', level: 1 }).waitFor();
    assert.equal(await page.getAttribute('html', 'lang'), 'fr');
    const text = (await page.locator('body').textContent()) ?? '';
    for (const english of ['Devices and passkeys', 'Recent activity', 'Delete my account', 'This device'])
      assert.ok(!text.includes(english), english);
    assert.match(text, /Cet appareil/);
    const activity = (await page.getByRole('region', { name: 'Activité récente' }).textContent()) ?? '';
    assert.match(activity, /Navigateur mémorisé/);
    assert.match(activity, /Page de votre compte ouverte/);
    assert.doesNotMatch(activity, /[a-z_]+\.[a-z_]+ ·/, 'no raw event type');
    await noSeriousViolations(page, 'account, French');
  });
  it('in German by ui_locales=de, carried through the hosted sign-in: translated, lang="de", the second factor form too; axe at phone and desktop sizes', async () => {
    const email = `konto.${run}@example.com`;
    const page = await freshPage();
    await page.goto(`${stack.serviceUrl}/account?ui_locales=de`);
    await emailAndCode(page, email, {
      email: 'E-Mail-Adresse',
      remember: 'Dieses Gerät merken',
      go: 'Weiter',
      otp: /6-stellige Code/,
    });
    await page.getByRole('heading', { name: 'Ihr Konto', level: 1 }).waitFor();
    assert.equal(await page.getAttribute('html', 'lang'), 'de');
    const text = (await page.locator('body').textContent()) ?? '';
    for (const english of ['Devices and passkeys', 'Set up a second factor', 'Rename', 'Device name', 'This device', 'Recent activity'])
      assert.ok(!text.includes(english), english);
    assert.match(text, /Zweiten Faktor einrichten/);
    await noSeriousViolations(page, 'account, German, desktop');
    await page.setViewportSize({ width: 375, height: 740 });
    await noSeriousViolations(page, 'account, German, phone');
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1), 'fits a phone');
  });
  it('a second factor from the page: TOTP enrolled with its key, recovery codes shown once, new ones after the factor proves it; axe at both sizes', async () => {
    const email = `factor.${run}@example.com`;
    const page = await freshPage();
    await page.goto(`${stack.serviceUrl}/account`);
    await emailAndCode(page, email);
    await page.getByRole('heading', { name: 'Your account', level: 1 }).waitFor();
    await page.getByLabel('An authenticator app').check();
    await page.getByRole('button', { name: 'Set up a second factor' }).click();
    await page.getByRole('heading', { name: 'Confirm the new second factor', level: 1 }).waitFor();
    const secret = ((await page.locator('[data-secret]').textContent()) ?? '').trim();
    const totp = (offset = 0) =>
      new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) }).generate({ timestamp: Date.now() + offset * 30_000 });
    for (const [width, height] of [
      [1280, 800],
      [375, 740],
    ] as const) {
      await page.setViewportSize({ width, height });
      await noSeriousViolations(page, `TOTP step ${width}`);
    }
    await page.getByLabel('The code').fill(totp());
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('heading', { name: 'Your new recovery codes', level: 1 }).waitFor();
    assert.equal(await page.locator('[data-recovery-codes] li').count(), 10);
    await noSeriousViolations(page, 'recovery codes, phone');
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.getByRole('link', { name: 'Back to your account' }).click();
    await page.getByRole('button', { name: 'Make new recovery codes' }).click();
    await page.getByRole('heading', { name: 'Confirm it is you to make new recovery codes', level: 1 }).waitFor();
    await page.getByLabel('The code').fill(totp(1)); // the next step: the enrollment's code is spent
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('heading', { name: 'Your new recovery codes', level: 1 }).waitFor();
    await noSeriousViolations(page, 'new recovery codes, desktop');
    assert.deepEqual(violations, []);
  });
}

/**
 * "Add a passkey" on the account page: the service on http://localhost (a relying party id is a
 * domain), a virtual authenticator. The page's one script shows the button, gets the session's
 * registration grant, makes the passkey and reloads: the page lists it and the user is mailed.
 * Without JavaScript the button is absent.
 */
describe('add a passkey from the account page in a real browser', { timeout: 4 * 60_000 }, () => {
  let stack: Stack;
  const violations: string[] = [];
  before(async () => {
    stack = await startStack({ serviceHost: 'localhost' });
  });
  after(async () => {
    await stack?.close();
  });

  it('the button appears with JavaScript only; a passkey made with the virtual authenticator is listed and mailed; axe at both sizes', async () => {
    const email = `account-passkey-${Date.now().toString(36)}@example.com`;
    const page = await watchedPage(stack.browser, violations);
    await addVirtualAuthenticator(page);
    await page.goto(`${stack.serviceUrl}/account`);
    await signInAtHostedPage(stack, page, email, { remember: true });
    // The hosted sign-in offers its own passkey first (this browser can make one): declined, so the account page adds it.
    await page.getByRole('button', { name: 'Not now' }).click();
    await page.waitForURL((url) => url.pathname === '/account');
    const button = page.getByRole('button', { name: 'Add a passkey' });
    await button.waitFor();
    for (const size of ['phone', 'desktop'] as const) {
      await page.setViewportSize(VIEWPORTS[size]);
      await assertAccessible(page, `the account page with Add a passkey (${size})`);
    }
    const devices = page.locator('li[data-device]');
    const before = await devices.count();
    const reloaded = page.waitForEvent('load');
    await button.click();
    await reloaded;
    await page.waitForFunction((n) => document.querySelectorAll('li[data-device]').length === n, before + 1);
    assert.equal(await devices.filter({ hasText: 'Passkey' }).count(), 1, 'the new passkey is listed');
    const mails = await stack.mails(email);
    assert.ok(
      mails.some((m) => m.subject === 'A passkey was added to your account'),
      mails.map((m) => m.subject).join(', '),
    );
    assert.deepEqual(violations, [], 'no CSP violation');

    // The same session without JavaScript: the page works and has no such button.
    const plain = await stack.browser.newContext({ javaScriptEnabled: false, storageState: await page.context().storageState() });
    try {
      const noScript = await plain.newPage();
      await noScript.goto(`${stack.serviceUrl}/account`);
      await noScript.getByRole('heading', { level: 1 }).waitFor();
      assert.equal(await noScript.locator('li[data-device]').count(), before + 1);
      assert.equal(await noScript.getByRole('button', { name: 'Add a passkey' }).count(), 0);
    } finally {
      await plain.close();
    }
    await page.context().close();
  });
});
