/**
 * Sign-in with redirects through a relying party nobody on this team wrote, in a real browser
 * (issue 14): the demo's SDK-free app (src/oidc-app.ts) runs `express-openid-connect`,
 * configured only with the service's issuer URL (its discovery document does the rest), a
 * confidential client, the authorization code flow. Chromium signs in on the hosted pages:
 * - the email code, SSO once the app's own session is gone, and the app's /logout ending the
 *   service session too (idpLogout: the end_session_endpoint, back to a registered post-logout
 *   redirect URI), so the next sign-in asks for the address again;
 * - for an app that requires MFA: SMS enrollment (code from the outbox) and, on a fresh sign-in
 *   (prompt=login), SMS verification; TOTP enrollment with the QR code drawn on the page (the
 *   matrix checked against the encoder, the key also as text) and TOTP verification, the codes
 *   from `otpauth`; each enrollment shows its ten recovery codes before going back to the app
 *   (by keyboard), and one of them later passes the MFA step;
 * - the hosted page refuses to be framed by another site (clickjacking), and a cross-site form
 *   posted to /signin/complete (login CSRF) is refused while the real sign-in still finishes;
 * - and not one Content Security Policy violation on the way.
 */
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import * as OTPAuth from 'otpauth';
import type { BrowserContext, Page } from 'playwright-core';
import { encode } from 'uqr';
import { postLogoutRedirectUri, type RunningOidcApp } from '../src/oidc-app.ts';
import { emailAndCode, startRegisteredOidcApp, watchedPage } from './fixtures.ts';
import { type Stack, screenshot, startStack } from './harness.ts';

describe('an SDK-free app with express-openid-connect on the hosted pages, in a real browser', { timeout: 5 * 60_000 }, () => {
  let stack: Stack;
  /** Acme Wiki: MFA optional. */
  let wiki: RunningOidcApp;
  /** The same middleware for a client whose policy requires MFA. */
  let strict: RunningOidcApp;
  /** The same middleware asking for response_mode=form_post: its callback takes a POST. */
  let formWiki: RunningOidcApp;
  const contexts: BrowserContext[] = [];
  const violations: string[] = [];
  const run = Date.now().toString(36);

  before(async () => {
    stack = await startStack();
    wiki = await startRegisteredOidcApp(stack, 'Acme Wiki');
    strict = await startRegisteredOidcApp(stack, 'Strict Wiki', { mfaPolicy: 'required' });
    formWiki = await startRegisteredOidcApp(stack, 'Form Wiki', { responseMode: 'form_post' });
  });
  after(async () => {
    await formWiki?.close();
    await wiki?.close();
    await strict?.close();
    await stack?.close();
  });

  /** A page in a browser context of its own (a device of its own). */
  async function freshPage(): Promise<Page> {
    const page = await watchedPage(stack.browser, violations);
    contexts.push(page.context());
    return page;
  }

  /**
   * The step after an MFA enrollment: the ten recovery codes as a list, focus on the step's
   * heading; by keyboard alone, Tab reaches "I have saved them" and Enter continues to the app.
   */
  async function savedRecoveryCodes(page: Page): Promise<string[]> {
    await page.getByRole('heading', { name: 'Save your recovery codes' }).waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'codes-title', 'focus is on the step');
    const codes = await page.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem').allTextContents();
    assert.equal(codes.length, 10);
    for (const code of codes) assert.match(code, /^[0-9A-HJKMNP-TV-Z]{5}-[0-9A-HJKMNP-TV-Z]{5}$/);
    assert.equal(new Set(codes).size, 10);
    await screenshot(page, 'oidc-hosted-recovery-codes');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'I have saved them');
    await page.keyboard.press('Enter');
    return codes;
  }

  const claim = async (page: Page, name: string) => JSON.parse((await page.locator(`[data-claim="${name}"]`).textContent()) ?? 'null');

  it('signs in through the hosted pages, SSO signs in again with no typing, and the app`s /logout ends the service session too', async () => {
    const email = `wiki.${run}@example.com`;
    const page = await freshPage();
    await page.goto(wiki.url);
    await page.getByRole('link', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Sign in to Acme Wiki' }).waitFor();
    assert.ok(page.url().startsWith(`${stack.serviceUrl}/signin?request=`), 'the middleware sent the browser to the hosted page');
    await emailAndCode(stack, page, email);
    await page.waitForURL(`${wiki.url}/`);
    assert.equal(await page.locator('#who').textContent(), email);

    await page.goto(`${wiki.url}/profile`);
    assert.equal(await claim(page, 'email'), email);
    assert.equal(await claim(page, 'email_verified'), true);
    assert.deepEqual(await claim(page, 'amr'), ['otp']);
    await screenshot(page, 'oidc-express-profile');

    // The app's own session gone (its cookie expired, say): the service session answers (SSO).
    await page.context().clearCookies({ name: 'appSession' });
    await page.goto(wiki.url);
    const mails = (await stack.mails(email)).length;
    await page.getByRole('link', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${wiki.url}/`);
    assert.equal(await page.locator('#who').textContent(), email, 'signed in again by the service session');
    assert.equal((await stack.mails(email)).length, mails, 'no email code');

    // The middleware's /logout (idpLogout: true) ends the app's session, then sends the browser to
    // the discovered end_session_endpoint with the ID token as hint: the service session ends and
    // the browser comes back to the app's registered post-logout redirect URI.
    const [ended] = await Promise.all([
      page.waitForResponse((response) => response.url().startsWith(`${stack.serviceUrl}/logout?`)),
      page.getByRole('link', { name: 'Sign out', exact: true }).click(),
    ]);
    assert.equal(ended.status(), 303);
    assert.equal(ended.headers().location, postLogoutRedirectUri(wiki.url));
    assert.ok(new URL(ended.url()).searchParams.get('id_token_hint'), 'the middleware sent the ID token as hint');
    await page.waitForURL(`${wiki.url}/`);
    await page.getByRole('link', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Sign in to Acme Wiki' }).waitFor();
    await page.getByLabel('Email address').waitFor();
    assert.ok(
      page.url().startsWith(`${stack.serviceUrl}/signin?request=`),
      'no single sign-on after the logout: the hosted page asks again',
    );
  });

  it('response_mode=form_post: the code reaches the app in a posted form, from the hosted page and from single sign-on, never in a URL', async () => {
    const email = `form.${run}@example.com`;
    const page = await freshPage();
    const callbacks: Array<{ method: string; url: string }> = [];
    page.on('request', (request) => {
      if (request.url().startsWith(`${formWiki.url}/callback`)) callbacks.push({ method: request.method(), url: request.url() });
    });
    const urls: string[] = [];
    page.on('framenavigated', (frame) => urls.push(frame.url()));
    await page.goto(formWiki.url);
    await page.getByRole('link', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Sign in to Form Wiki' }).waitFor();
    await emailAndCode(stack, page, email);
    await page.waitForURL(`${formWiki.url}/`);
    assert.equal(await page.locator('#who').textContent(), email);

    // Single sign-on: the service answers /authorize with its auto-submitting page.
    await page.context().clearCookies({ name: 'appSession' });
    await page.goto(formWiki.url);
    await page.getByRole('link', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${formWiki.url}/`);
    assert.equal(await page.locator('#who').textContent(), email, 'signed in again by the service session');

    assert.deepEqual(
      callbacks.map((c) => c.method),
      ['POST', 'POST'],
      'both codes were posted to the callback',
    );
    assert.deepEqual(
      urls.filter((url) => /[?&]code=/.test(url)),
      [],
      'no page the browser showed had the code in its URL',
    );
  });

  it('SMS: an app that requires MFA enrolls the user on the hosted pages, then a fresh sign-in asks for the SMS code', async () => {
    const email = `sms.${run}@example.com`;
    const phone = `+1415555${String(randomInt(10_000)).padStart(4, '0')}`;
    const page = await freshPage();
    await page.goto(`${strict.url}/login`);
    await page.getByRole('heading', { name: 'Sign in to Strict Wiki' }).waitFor();
    await emailAndCode(stack, page, email);

    await page.getByRole('group', { name: /Strict Wiki requires a second factor/ }).waitFor();
    await page.getByLabel('A code by SMS').check();
    await page.getByLabel(/Mobile number/).fill(phone);
    let seen = (await stack.smses(phone)).length;
    await page.getByRole('button', { name: 'Continue' }).click();
    let code = page.getByLabel('The 6-digit code we sent by SMS');
    await code.fill(await stack.nextSmsOtp(phone, seen));
    await code.press('Enter');
    await savedRecoveryCodes(page);
    await page.waitForURL(`${strict.url}/`);
    await page.goto(`${strict.url}/profile`);
    assert.deepEqual(await claim(page, 'amr'), ['otp', 'mfa', 'sms']);

    // A fresh sign-in (prompt=login): the remembered device, then the SMS code.
    seen = (await stack.smses(phone)).length;
    await page.getByRole('link', { name: /Confirm it's you/ }).click();
    await page.getByRole('heading', { name: 'Sign in to Strict Wiki' }).waitFor();
    assert.equal(await page.getByLabel('Email address').inputValue(), email, 'login_hint fills the address');
    await page.getByRole('button', { name: 'Continue' }).click();
    code = page.getByLabel('The 6-digit code we sent by SMS');
    await code.fill(await stack.nextSmsOtp(phone, seen));
    await code.press('Enter');
    await page.waitForURL(`${strict.url}/profile`);
    assert.deepEqual(await claim(page, 'amr'), ['swk', 'mfa', 'sms']);
  });

  it('TOTP: enrollment shows a QR code drawn on the page and the key as text; a fresh sign-in asks for the TOTP code', async () => {
    const email = `totp.${run}@example.com`;
    const page = await freshPage();
    await page.goto(`${strict.url}/login`);
    await emailAndCode(stack, page, email);
    await page.getByLabel('An authenticator app').check();
    await page.getByRole('button', { name: 'Continue' }).click();

    const qr = page.getByRole('img', { name: /QR code/ });
    await qr.waitFor();
    const secret = (await page.locator('#totp-secret').textContent()) ?? '';
    const uri = (await page.getByRole('link', { name: /open it in your authenticator/ }).getAttribute('href')) ?? '';
    assert.match(secret, /^[A-Z2-7]{16,}$/, 'the key is shown as text');
    assert.equal(new URL(uri).searchParams.get('secret'), secret);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'mfa-code', 'focus is on the code field');
    // The drawn modules are exactly the QR code of the otpauth URI (uqr's matrix, quiet zone 2).
    const expected = encode(uri, { ecc: 'M', border: 2 });
    let modules = '';
    expected.data.forEach((row, y) => {
      row.forEach((dark, x) => {
        if (dark) modules += `M${x} ${y}h1v1h-1z`;
      });
    });
    assert.equal(await qr.locator('path').getAttribute('d'), modules);
    assert.equal(await qr.getAttribute('viewBox'), `0 0 ${expected.size} ${expected.size}`);
    await screenshot(page, 'oidc-hosted-totp-qr');

    const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 });
    const code = page.getByLabel('The 6-digit code from your authenticator app');
    await code.fill(totp.generate());
    await code.press('Enter');
    const recoveryCodes = await savedRecoveryCodes(page);
    await page.waitForURL(`${strict.url}/`);

    await page.goto(`${strict.url}/login/fresh`);
    await page.getByRole('button', { name: 'Continue' }).click();
    // A step never passes twice (RFC 6238 5.2): the next step's code, within the ±1 step window.
    await code.fill(totp.generate({ timestamp: Date.now() + 30_000 }));
    await code.press('Enter');
    await page.waitForURL(`${strict.url}/profile`);
    assert.deepEqual(await claim(page, 'amr'), ['swk', 'mfa', 'totp']);

    // The authenticator is lost: one of the codes shown at enrollment passes the MFA step once.
    await page.goto(`${strict.url}/login/fresh`);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('button', { name: 'Use a recovery code instead' }).click();
    const recovery = page.getByLabel(/One of your recovery codes/);
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'mfa-code', 'focus is on the field');
    await recovery.fill(recoveryCodes[3] ?? '');
    await recovery.press('Enter');
    await page.waitForURL(`${strict.url}/profile`);
    assert.deepEqual(await claim(page, 'amr'), ['swk', 'mfa', 'recovery_code']);
  });

  it('is never framed by another site, and a cross-site form cannot finish a sign-in', async () => {
    const page = await freshPage();
    await page.goto(`${wiki.url}/login`);
    await page.getByRole('heading', { name: 'Sign in to Acme Wiki' }).waitFor();
    const signIn = page.url();
    const requestId = new URL(signIn).searchParams.get('request') ?? '';

    // Clickjacking: another site frames the live hosted page; Chromium refuses to show it.
    const attacker = await freshPage();
    stack.foreign.pages.set('/frame', `<!doctype html><title>frame</title><iframe src="${signIn}" width="600" height="600"></iframe>`);
    await attacker.goto(`${stack.foreign.origin}/frame`);
    const frame = attacker.frames()[1];
    assert.ok(frame);
    await frame.waitForLoadState();
    if (process.env.DEBUG_OIDC) console.log('framed:', frame.url());
    assert.equal(await frame.locator('#email-step').count(), 0, 'the hosted page did not render in the frame');

    // Login CSRF: a JSON-shaped text/plain form from another site, in the victim's browser.
    // name=value makes {"request":…,"code":…,"codeVerifier":"xxx=xxx"}: the classic JSON CSRF.
    const field = JSON.stringify({ request: requestId, code: 'ac_forged', codeVerifier: 'x'.repeat(43) }).slice(0, -2);
    stack.foreign.pages.set(
      '/csrf',
      `<!doctype html><title>csrf</title><form method="post" enctype="text/plain" action="${stack.serviceUrl}/signin/complete"><input type="hidden" name='${field}' value='xxx"}'><button>Win a prize</button></form>`,
    );
    const victim = await page.context().newPage();
    await victim.goto(`${stack.foreign.origin}/csrf`);
    const [refused] = await Promise.all([
      victim.waitForResponse(`${stack.serviceUrl}/signin/complete`),
      victim.getByRole('button').click(),
    ]);
    assert.ok(refused.status() >= 400 && refused.status() < 500, `refused with ${refused.status()}`);
    await victim.close();

    // The real sign-in in the same browser is unharmed.
    await emailAndCode(stack, page, `framed.${run}@example.com`);
    await page.waitForURL(`${wiki.url}/`);
    violations.splice(0, violations.length, ...violations.filter((line) => !/frame-ancestors|X-Frame-Options/i.test(line)));
  });

  it('ran without a Content Security Policy violation (beyond the refused frame)', async () => {
    for (const context of contexts) await context.close();
    assert.deepEqual(violations, []);
  });
});
