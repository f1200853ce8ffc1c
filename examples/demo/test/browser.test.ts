/**
 * The demo and the browser library in a real browser (Debian chromium through playwright-core),
 * against the built service-idp on loopback. No test mode: every code is read from the
 * development mailbox or SMS outbox. Each scenario saves a screenshot under test-results/browser/.
 *
 * The scenarios share one service and run in order. The service sends at most one code per
 * address and purpose per resend spacing (the harness sets it to SEND_SPACING_SECONDS), so the
 * two that need a second code for an address run last, waiting out what is left of that window.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as OTPAuth from 'otpauth';
import type { BrowserContext, Page } from 'playwright-core';
import { plainPage, SEND_WINDOW_MS, type Stack, screenshot, stalledServer, startStack } from './harness.ts';

const TIMEOUT = { timeout: 90_000 };

describe('demo in a real browser', { timeout: 8 * 60_000 }, () => {
  let stack: Stack;
  const run = Date.now().toString(36);
  const ann = `ann.${run}@example.com`; // email OTP, remembered device, delegation
  const bob = `bob.${run}@example.com`; // TOTP enrollment
  const cat = `cat.${run}@example.com`; // MFA by email with remember-me
  const lastSend = new Map<string, number>();
  let annContext: BrowserContext;
  let annPage: Page;
  let catContext: BrowserContext;
  let catPage: Page;
  let catRecoveryCodes: string[] = [];

  before(async () => {
    stack = await startStack();
  });
  after(async () => {
    await stack?.close();
  });

  /** Waits out the per-address send window of the last code sent to `email`. */
  async function sendWindow(email: string) {
    const wait = (lastSend.get(email) ?? 0) + SEND_WINDOW_MS - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }

  async function openDemo(context: BrowserContext): Promise<Page> {
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    page.on('pageerror', (error) => console.log(`page error: ${error.message}`));
    await page.goto(stack.demoUrl);
    await page.waitForSelector('#app[data-ready="true"]');
    return page;
  }

  async function submitEmail(page: Page, email: string) {
    await page.fill('#email', email);
    await page.click('#email-step button[type=submit]');
  }

  const status = (page: Page) => page.getAttribute('#app', 'data-status');

  async function signedIn(page: Page, email: string) {
    await page.waitForURL(`${stack.demoUrl}/account`);
    await page.waitForSelector('#account[data-state="ready"]');
    assert.equal(await page.textContent('#who'), email);
    assert.equal(await page.textContent('dd[data-claim="email"]'), email);
  }

  /** The enrollment's "save these recovery codes" step: reads the codes shown, then continues to the account. */
  async function saveRecoveryCodes(page: Page, shot?: string): Promise<string[]> {
    await page.waitForSelector('#recovery-step:not([hidden])');
    if (shot) await screenshot(page, shot);
    const codes = await page.$$eval('#recovery-codes li', (items) => items.map((li) => li.textContent ?? ''));
    assert.equal(codes.length, 10);
    for (const code of codes) assert.match(code, /^[0-9A-HJKMNP-TV-Z]{5}-[0-9A-HJKMNP-TV-Z]{5}$/);
    await page.click('#recovery-step button[type=submit]');
    return codes;
  }

  async function signOut(page: Page) {
    await page.click('#sign-out');
    await page.waitForURL(`${stack.demoUrl}/`);
    await page.waitForSelector('#app[data-ready="true"]');
  }

  /** New device up to the MFA choice: email, OTP from the mailbox, verify. */
  async function registerUpToMethod(page: Page, email: string) {
    const seen = (await stack.mails(email)).length;
    await submitEmail(page, email);
    await page.waitForSelector('#otp-step:not([hidden])');
    assert.equal(await status(page), 'OTP_NEEDED');
    lastSend.set(email, Date.now());
    await page.fill('#otp', await stack.nextMailOtp(email, seen));
    await page.click('#otp-step button[type=submit]');
    await page.waitForSelector('#method-step:not([hidden])');
  }

  it('new device: email OTP from the mailbox, PKCE, backend session cookie', TIMEOUT, async () => {
    annContext = await stack.browser.newContext();
    annPage = await openDemo(annContext);
    const authenticate = annPage.waitForRequest((r) => r.url() === `${stack.serviceUrl}/v1/authenticate` && r.method() === 'POST');
    const login = annPage.waitForRequest((r) => r.url() === `${stack.demoUrl}/api/login`);
    await registerUpToMethod(annPage, ann);
    const sent = (await authenticate).postDataJSON();
    assert.equal(sent.codeChallengeMethod, 'S256');
    assert.match(sent.codeChallenge, /^[A-Za-z0-9_-]{43}$/);

    await annPage.check('#method-step input[value=none]');
    await annPage.click('#method-step button[type=submit]');
    const posted = (await login).postDataJSON();
    assert.equal(posted.userid, ann);
    assert.match(posted.code_verifier, /^[A-Za-z0-9._~-]{43,128}$/);
    await signedIn(annPage, ann);
    assert.equal(await annPage.getAttribute('#mfa-method', 'data-method'), 'none');

    const cookie = (await annContext.cookies()).find((c) => c.name === 'demo_session');
    assert.ok(cookie, 'session cookie set');
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Lax');
    assert.equal(await annPage.evaluate(() => document.cookie), '', 'the session cookie is not readable by scripts');
    assert.equal(await annPage.isVisible('#new-device'), true, 'the new-device banner is shown');
    await annPage.waitForSelector('#devices[data-state="SUCCESS"] li[data-current="true"]');
    await screenshot(annPage, '01-new-device-signed-in');
  });

  it('the same browser signs in again without an OTP (device key kept in IndexedDB)', TIMEOUT, async () => {
    await signOut(annPage);
    const seen = (await stack.mails(ann)).length;
    await submitEmail(annPage, ann);
    await signedIn(annPage, ann);
    assert.equal((await stack.mails(ann)).length, seen, 'no mail sent');
    const storage = await annPage.evaluate(async () => ({
      databases: (await indexedDB.databases()).map((d) => d.name),
      localStorage: localStorage.length,
    }));
    assert.ok(storage.databases.includes('service-web'), `IndexedDB databases: ${storage.databases}`);
    assert.equal(storage.localStorage, 0, 'nothing in localStorage');
    // The amr of a remembered device's login: the device key (swk).
    assert.match((await annPage.textContent('dd[data-claim="amr"]')) ?? '', /swk/);
    assert.equal(await annPage.isVisible('#new-device'), false, 'no new-device banner for a remembered device');
    await screenshot(annPage, '02-remembered-device-signed-in');
  });

  it('MFA by email, part 1: a new user registers with email as the second step', TIMEOUT, async () => {
    catContext = await stack.browser.newContext();
    catPage = await openDemo(catContext);
    await registerUpToMethod(catPage, cat);
    await catPage.check('#method-step input[value=email]');
    await catPage.click('#method-step button[type=submit]');
    catRecoveryCodes = await saveRecoveryCodes(catPage, '03a-recovery-codes-at-enrollment');
    await signedIn(catPage, cat);
    assert.equal(await catPage.getAttribute('#mfa-method', 'data-method'), 'email');
    await signOut(catPage);
  });

  it('TOTP enrollment: QR code and secret shown, code from an independent generator', TIMEOUT, async () => {
    const context = await stack.browser.newContext();
    const page = await openDemo(context);
    await registerUpToMethod(page, bob);
    await page.check('#method-step input[value=totp]');
    await page.click('#method-step button[type=submit]');
    await page.waitForSelector('#finalize-step:not([hidden]) #totp-setup:not([hidden])');
    assert.equal(await status(page), 'FINALIZE_REGISTRATION_NEEDED');
    await page.waitForFunction(() => (document.querySelector('#totp-qr') as HTMLImageElement | null)?.src.startsWith('data:image/svg+xml'));
    assert.ok(await page.evaluate(() => (document.querySelector('#totp-qr') as HTMLImageElement).naturalWidth > 0), 'the QR code renders');
    const secret = ((await page.textContent('#totp-secret')) ?? '').trim();
    assert.match(secret, /^[A-Z2-7]{16,}=*$/);
    await screenshot(page, '03-totp-enrollment-qr');

    const code = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate();
    await page.fill('#finalize-otp', code);
    await page.click('#finalize-step button[type=submit]');
    await saveRecoveryCodes(page);
    await signedIn(page, bob);
    assert.equal(await page.getAttribute('#mfa-method', 'data-method'), 'totp');
    assert.match((await page.textContent('dd[data-claim="amr"]')) ?? '', /totp/);
    await screenshot(page, '04-totp-enrolled-signed-in');
    await context.close();
  });

  it('MFA change through delegation on the signed-in page (SMS code from the outbox)', TIMEOUT, async () => {
    const phone = '+14155550123';
    await annPage.check('#change-form input[value=sms]');
    await annPage.fill('#change-phone', '+1 (415) 555-0123');
    const seen = (await stack.smses(phone)).length;
    await annPage.click('#change-form button[type=submit]');
    await annPage.waitForSelector('#confirm-form:not([hidden])');
    await annPage.fill('#change-otp', await stack.nextSmsOtp(phone, seen));
    await annPage.click('#confirm-form button[type=submit]');
    await annPage.waitForSelector('#account[data-state="changed"]');
    assert.equal(await annPage.getAttribute('#mfa-method', 'data-method'), 'sms');
    assert.match((await annPage.textContent('#message')) ?? '', /Text message/);
    await screenshot(annPage, '05-delegation-mfa-changed');
  });

  it('a second MFA change asks for the current factor first (SMS), then the new method (email)', TIMEOUT, async () => {
    const phone = '+14155550123';
    await annPage.check('#change-form input[value=email]');
    const smsSeen = (await stack.smses(phone)).length;
    await annPage.click('#change-form button[type=submit]');
    await annPage.waitForSelector('#confirm-form:not([hidden])');
    assert.match((await annPage.textContent('#change-sent')) ?? '', /First confirm it is you: .* by SMS/);
    const mailSeen = (await stack.mails(ann)).length;
    await annPage.fill('#change-otp', await stack.nextSmsOtp(phone, smsSeen));
    await annPage.click('#confirm-form button[type=submit]');
    await annPage.waitForFunction(() => /sent a code to your email/.test(document.querySelector('#change-sent')?.textContent ?? ''));
    await annPage.fill('#change-otp', await stack.nextMailOtp(ann, mailSeen));
    await annPage.click('#confirm-form button[type=submit]');
    await annPage.waitForSelector('#account[data-state="changed"]');
    assert.equal(await annPage.getAttribute('#mfa-method', 'data-method'), 'email');
  });

  it('the <script> build works on a plain HTML page (ServiceWeb global, init succeeds)', TIMEOUT, async () => {
    stack.registered.pages.set(
      '/plain.html',
      plainPage(
        stack.serviceUrl,
        'Plain page with the script tag',
        `const init = await ServiceWeb.ServiceInitializer.init(${JSON.stringify(stack.client.publishableKey)}, ${JSON.stringify(stack.serviceUrl)});
         const pkce = await ServiceWeb.createPkcePair();
         return { global: Object.keys(ServiceWeb).sort(), init, challenge: pkce.codeChallenge.length };`,
      ),
    );
    const context = await stack.browser.newContext();
    const page = await context.newPage();
    await page.goto(`${stack.registered.origin}/plain.html`);
    const result = (await (await page.waitForFunction(() => (window as any).__result)).jsonValue()) as any;
    assert.deepEqual(result.global, [
      'MfaMethod',
      'ServiceClient',
      'ServiceInitializer',
      'Status',
      'createPkcePair',
      'pkceChallengeFromVerifier',
      // The send challenge's solver and device management are scripts of their own (service-web/challenge, service-web/devices).
    ]);
    assert.equal(result.init.status, 'INITIALIZED', JSON.stringify(result));
    assert.equal(result.init.success, true);
    assert.equal(result.challenge, 43);
    await screenshot(page, '06-script-tag-plain-page');
    await context.close();
  });

  it('a page on an origin the client did not register is refused by CORS', TIMEOUT, async () => {
    stack.foreign.pages.set(
      '/foreign.html',
      plainPage(
        stack.serviceUrl,
        'Page on an unregistered origin',
        `return { init: await ServiceWeb.ServiceInitializer.init(${JSON.stringify(stack.client.publishableKey)}, ${JSON.stringify(stack.serviceUrl)}) };`,
      ),
    );
    const context = await stack.browser.newContext();
    const page = await context.newPage();
    const logs: string[] = [];
    page.on('console', (m) => logs.push(m.text()));
    await page.goto(`${stack.foreign.origin}/foreign.html`);
    const result = (await (await page.waitForFunction(() => (window as any).__result)).jsonValue()) as any;
    assert.equal(result.init.success, false);
    assert.equal(result.init.status, 'NETWORK_ERROR', JSON.stringify(result));
    assert.ok(
      logs.some((line) => /CORS/.test(line)),
      `the browser blocked the request for CORS: ${logs.join(' | ')}`,
    );
    await page.evaluate((lines) => {
      const p = document.createElement('p');
      p.textContent = `Browser console: ${lines.join(' | ')}`;
      document.body.append(p);
    }, logs);
    await screenshot(page, '07-cors-refused');
    await context.close();
  });

  it('timeoutMs is honoured against a stalled server', TIMEOUT, async () => {
    const stalled = await stalledServer();
    try {
      stack.registered.pages.set(
        '/stalled.html',
        plainPage(
          stack.serviceUrl,
          'init against a server that never answers',
          `const started = performance.now();
           const init = await ServiceWeb.ServiceInitializer.init(${JSON.stringify(stack.client.publishableKey)}, ${JSON.stringify(stalled.url)}, { timeoutMs: 500 });
           return { init, elapsedMs: Math.round(performance.now() - started) };`,
        ),
      );
      const context = await stack.browser.newContext();
      const page = await context.newPage();
      await page.goto(`${stack.registered.origin}/stalled.html`);
      const result = (await (
        await page.waitForFunction(() => (window as any).__result, undefined, { timeout: 10_000 })
      ).jsonValue()) as any;
      assert.equal(result.init.status, 'TIMEOUT', JSON.stringify(result));
      assert.ok(result.elapsedMs >= 450 && result.elapsedMs < 3000, `answered after ${result.elapsedMs} ms`);
      assert.ok(stalled.connections() > 0, 'the browser did reach the stalled server');
      await screenshot(page, '08-timeout-stalled-server');
      await context.close();
    } finally {
      await stalled.close();
    }
  });

  it('a fresh browser context gets OTP_NEEDED for a known user', TIMEOUT, async () => {
    await sendWindow(ann);
    // A phone-sized window this time: the page is responsive.
    const context = await stack.browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const page = await openDemo(context);
    const seen = (await stack.mails(ann)).length;
    await submitEmail(page, ann);
    await page.waitForSelector('#otp-step:not([hidden])');
    assert.equal(await status(page), 'OTP_NEEDED');
    await stack.nextMailOtp(ann, seen); // the code was sent
    await screenshot(page, '09-fresh-context-otp-needed');
    await context.close();
  });

  it('MFA by email, part 2: challenge with remember-me, then a sign-in without MFA', TIMEOUT, async () => {
    await sendWindow(cat);
    const seen = (await stack.mails(cat)).length;
    await submitEmail(catPage, cat);
    await catPage.waitForSelector('#mfa-step:not([hidden])');
    assert.equal(await status(catPage), 'MFA_INITIATED');
    lastSend.set(cat, Date.now()); // the next MFA code to this address waits for the resend spacing
    await catPage.fill('#mfa-otp', await stack.nextMailOtp(cat, seen));
    await catPage.check('#remember-me');
    await screenshot(catPage, '10-mfa-email-challenge');
    await catPage.click('#mfa-step button[type=submit]');
    await signedIn(catPage, cat);
    assert.match((await catPage.textContent('dd[data-claim="amr"]')) ?? '', /mfa/);

    await signOut(catPage);
    const mailsBefore = (await stack.mails(cat)).length;
    await submitEmail(catPage, cat);
    await signedIn(catPage, cat);
    assert.equal((await stack.mails(cat)).length, mailsBefore, 'remember_me: no MFA code this time');
    assert.doesNotMatch((await catPage.textContent('dd[data-claim="amr"]')) ?? '', /mfa/);
    await screenshot(catPage, '11-mfa-remembered-signed-in');
  });

  let catNewContext: BrowserContext;
  let catNewPage: Page;
  const mfaCodesTo = async (email: string) => (await stack.mails(email)).filter((m) => /verification code/.test(m.subject)).length;

  it(
    'MFA by email, part 3: a new browser is signed in after the email OTP alone, without a second mailed code and without mfa (one mailbox is one factor)',
    TIMEOUT,
    async () => {
      await sendWindow(cat);
      catNewContext = await stack.browser.newContext();
      catNewPage = await openDemo(catNewContext);
      const seen = (await stack.mails(cat)).length;
      const mfaCodes = await mfaCodesTo(cat);
      await submitEmail(catNewPage, cat);
      await catNewPage.waitForSelector('#otp-step:not([hidden])');
      lastSend.set(cat, Date.now());
      await catNewPage.fill('#otp', await stack.nextMailOtp(cat, seen));
      await catNewPage.click('#otp-step button[type=submit]');
      await signedIn(catNewPage, cat);
      assert.equal(await catNewPage.isVisible('#method-step'), false, 'never offered another second step');
      const amr = (await catNewPage.textContent('dd[data-claim="amr"]')) ?? '';
      assert.match(amr, /otp/);
      assert.doesNotMatch(amr, /mfa/, 'the mailbox proved the first factor: a mailed code would prove it again');
      assert.equal(await mfaCodesTo(cat), mfaCodes, 'no MFA code was mailed');
    },
  );

  it(
    'MFA by email, part 4: that browser (its key registered before) is asked the second step next time, where a recovery code (typed in lower case) passes once',
    TIMEOUT,
    async () => {
      await signOut(catNewPage);
      await sendWindow(cat);
      await submitEmail(catNewPage, cat);
      await catNewPage.waitForSelector('#mfa-step:not([hidden])');
      lastSend.set(cat, Date.now());
      await catNewPage.fill('#mfa-otp', (catRecoveryCodes[0] as string).toLowerCase());
      await catNewPage.click('#mfa-step button[type=submit]');
      await signedIn(catNewPage, cat);
      assert.match((await catNewPage.textContent('dd[data-claim="amr"]')) ?? '', /recovery_code/);
      const notices = (await stack.mails(cat)).filter((m) => /recovery code was used/.test(m.subject));
      assert.equal(notices.length, 1, 'the user is told by mail');
      await catNewContext.close();
    },
  );

  it('MFA required by the client: MFA_ENROLLMENT_NEEDED, then SMS enrollment with the code from the outbox', TIMEOUT, async () => {
    // Last: from here on the demo client requires MFA.
    await stack.cli('clients', 'update', stack.client.clientId, '--mfa-policy', 'required');
    const dan = `dan.${run}@example.com`;
    const phone = '+14155550199';
    const context = await stack.browser.newContext();
    const page = await openDemo(context);
    await registerUpToMethod(page, dan);
    await page.check('#method-step input[value=none]');
    await page.click('#method-step button[type=submit]');
    await page.waitForSelector('#method-step [data-method=none][hidden]', { state: 'attached' });
    assert.equal(await status(page), 'MFA_ENROLLMENT_NEEDED');
    assert.match((await page.textContent('#message')) ?? '', /required/);
    await screenshot(page, '12-mfa-enrollment-needed');

    await page.check('#method-step input[value=sms]');
    await page.fill('#phone', phone);
    const seen = (await stack.smses(phone)).length;
    await page.click('#method-step button[type=submit]');
    await page.waitForSelector('#finalize-step:not([hidden]) #sms-setup:not([hidden])');
    assert.equal(await status(page), 'FINALIZE_REGISTRATION_NEEDED');
    await page.fill('#finalize-otp', await stack.nextSmsOtp(phone, seen));
    await page.click('#finalize-step button[type=submit]');
    await saveRecoveryCodes(page);
    await signedIn(page, dan);
    assert.equal(await page.getAttribute('#mfa-method', 'data-method'), 'sms');
    await screenshot(page, '13-sms-enrolled-signed-in');
    await context.close();
  });
});
