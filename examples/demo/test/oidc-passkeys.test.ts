/**
 * Passkeys on the hosted sign-in pages in a real browser (issue 15): openid-client relying
 * parties, Chromium with its virtual authenticator (DevTools WebAuthn, as in passkeys.test.ts),
 * the service on http://localhost:PORT (a relying party id is a domain, never an IP address).
 * A user whose second factor is email (chosen at the demo: the hosted pages never offer it)
 * signs in on a hosted page with the email code alone (amr otp: a second mailed code would prove
 * the same mailbox), and adds the passkey the hosted page offers then ("Add a passkey"; the app
 * gets its code once; "Not now", or a ceremony that fails, goes straight on), then: "Sign in with a passkey" on the hosted page → code → tokens with amr
 * hwk user mfa and the phishing-resistant acr; a second app signs in without a prompt (SSO);
 * the strict app leads to the hosted MFA step after the passkey; a revoked passkey ends the SSO
 * session; a browser without WebAuthn sees neither the button nor the autofill. No CSP
 * violation anywhere.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import {
  addVirtualAuthenticator,
  authorizationRequest,
  callbackClaims,
  demoSignUpWithEmailMfa,
  emailAndCode,
  type RelyingParty,
  registerRelyingParty,
  watchedPage,
} from './fixtures.ts';
import { type PageServer, SEND_WINDOW_MS, type Stack, screenshot, servePages, startStack } from './harness.ts';

describe('passkeys on the hosted sign-in pages with openid-client in a real browser', { timeout: 5 * 60_000 }, () => {
  let stack: Stack;
  let rpPages: PageServer;
  let context: BrowserContext;
  let page: Page;
  let passkeyId = '';
  const email = `hosted.pk.${Date.now().toString(36)}@example.com`;
  const apps: RelyingParty[] = [];
  const violations: string[] = [];
  const gets: Array<{ mediation: string; autocomplete: string }> = [];

  before(async () => {
    stack = await startStack({ serviceHost: 'localhost' });
    rpPages = await servePages();
    apps.push(await registerRelyingParty(stack, rpPages, 'Research Portal', '/callback'));
    apps.push(await registerRelyingParty(stack, rpPages, 'Second App', '/second/callback', { public: true }));
    apps.push(
      await registerRelyingParty(stack, rpPages, 'Strict App', '/strict/callback', {
        mfaPolicy: 'required',
        update: ['--passkey-mfa', 'no'],
      }),
    );
    context = await stack.browser.newContext();
    page = await watchedPage(context, violations);
    // Every navigator.credentials.get the hosted page makes: its mediation, and the email field's autocomplete then.
    await page.exposeFunction('recordGet', (call: { mediation: string; autocomplete: string }) => gets.push(call));
    await context.addInitScript(`{
      const get = navigator.credentials.get.bind(navigator.credentials);
      navigator.credentials.get = (options) => {
        window.recordGet({ mediation: options?.mediation ?? 'optional', autocomplete: document.getElementById('email')?.getAttribute('autocomplete') ?? '' });
        return get(options);
      };
    }`);
    await addVirtualAuthenticator(page);
  });

  after(async () => {
    await rpPages?.close();
    await stack?.close();
  });

  /** A fresh authorization request of app `index` (0 Research Portal, 1 Second App, 2 Strict App). */
  async function start(index: number, extra: Record<string, string> = {}) {
    const app = apps[index];
    assert.ok(app);
    return { app, ...(await authorizationRequest(app, extra)) };
  }

  const claimsAt = async (started: Awaited<ReturnType<typeof start>>) => {
    const claims = await callbackClaims(page, started.app, started.expected);
    assert.equal(claims.email, email);
    return claims;
  };

  it('signs up with email as the second factor (at the demo), signs in on a hosted page with the email code alone, then adds the passkey it offers: the app gets its code once', async () => {
    // The hosted pages never offer email as a second factor (after the emailed code it is the same mailbox): the demo does.
    const demo = await watchedPage(stack.browser, violations);
    await demoSignUpWithEmailMfa(stack, demo, email);
    await demo.context().close();
    await new Promise((resolve) => setTimeout(resolve, SEND_WINDOW_MS)); // past the sign-in code's resend spacing
    const research = await start(0, { login_hint: email });
    const callbacks: string[] = [];
    const onRequest = (request: { url(): string }) => {
      if (request.url().startsWith(`${research.app.redirectUri}?`)) callbacks.push(request.url());
    };
    page.on('request', onRequest);
    await page.goto(research.url.href);
    const seen = (await stack.mails(email)).length;
    await page.getByRole('button', { name: 'Continue' }).click();
    const otp = page.getByLabel(/6-digit code we emailed/);
    await otp.fill(await stack.nextMailOtp(email, seen));
    await otp.press('Enter');

    // The offer: this browser has a user-verifying authenticator, the user no passkey yet.
    await page.getByRole('heading', { name: 'Sign in faster next time with a passkey' }).waitFor();
    await screenshot(page, 'oidc-hosted-passkey-offer');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    const signedIn = await claimsAt(research);
    assert.deepEqual(signedIn.amr, ['otp'], 'a second mailed code would prove the same mailbox: not asked, no mfa');
    await page.waitForLoadState('load');
    page.off('request', onRequest);
    assert.equal(callbacks.length, 1, 'the app got its code once');

    const { devices } = await stack.idp<{ devices: Array<{ id: string; kind: string; removedAt: number | null }> }>(
      'devices',
      'list',
      '--user',
      email,
    );
    const passkeys = devices.filter((d) => d.kind === 'passkey' && d.removedAt === null);
    assert.equal(passkeys.length, 1, JSON.stringify(devices));
    passkeyId = passkeys[0]?.id ?? '';
    assert.ok(
      (await stack.mails(email)).some((m) => /A passkey was added/.test(m.subject)),
      'the user is told',
    );
  });

  /** A new user's email sign-in to Research Portal in a fresh browser, up to the passkey offer; `choose` answers it. */
  async function signInThenOffer(label: string, choose: (tab: Page) => Promise<void>, userVerified = true) {
    const other = `hosted.pk.${label}.${Date.now().toString(36)}@example.com`;
    const tab = await watchedPage(stack.browser, violations);
    await addVirtualAuthenticator(tab, { isUserVerified: userVerified });
    const research = await start(0, { login_hint: other });
    await tab.goto(research.url.href);
    await emailAndCode(stack, tab, other);
    await tab.getByRole('heading', { name: 'Sign in faster next time with a passkey' }).waitFor();
    await choose(tab);
    assert.equal((await callbackClaims(tab, research.app, research.expected)).email, other);
    const { devices } = await stack.idp<{ devices: Array<{ kind: string }> }>('devices', 'list', '--user', other);
    assert.deepEqual(
      devices.filter((d) => d.kind === 'passkey'),
      [],
    );
    await tab.context().close();
  }

  it('"Not now" goes straight on to the app, and adds no passkey', async () => {
    await signInThenOffer('later', (tab) => tab.getByRole('button', { name: 'Not now' }).click());
  });

  it('a failed ceremony (the authenticator cannot verify the user) still goes on to the app, and adds no passkey', async () => {
    await signInThenOffer('failed', (tab) => tab.getByRole('button', { name: 'Add a passkey' }).click(), false);
  });

  it('offers the passkey in the email field`s autofill (conditional UI), which signs in to the app: amr hwk user mfa, phishing-resistant acr', async () => {
    await context.clearCookies(); // no SSO session: the hosted page shows
    gets.splice(0); // the sign-up's pages offered the autofill too
    const research = await start(0);
    await page.goto(research.url.href);
    // The virtual authenticator answers a conditional request at once, as a user picking the
    // passkey from the autofill would: the page goes on to the app by itself.
    const claims = await claimsAt(research);
    assert.deepEqual(claims.amr, ['hwk', 'user', 'mfa']);
    assert.equal(claims.acr, 'urn:service:acr:phishing-resistant');
    assert.deepEqual(gets.splice(0), [{ mediation: 'conditional', autocomplete: 'username webauthn' }]);
  });

  it('signs a second app in without a prompt (the SSO session the passkey opened)', async () => {
    const second = await start(1);
    await page.goto(second.url.href);
    const claims = await claimsAt(second);
    assert.deepEqual(claims.amr, ['hwk', 'user', 'mfa']);
  });

  it('an app that does not count a passkey as MFA gets the hosted MFA step after the passkey', async () => {
    const strict = await start(2);
    const seen = (await stack.mails(email)).length;
    await page.goto(strict.url.href); // the session does not do for this app: its page, whose autofill offers the passkey
    const code = page.getByLabel('The 6-digit code we sent by email');
    await code.waitFor();
    assert.equal(await page.locator('#mfa-remember-field').isHidden(), true, 'nothing to remember after a passkey');
    await code.fill(await stack.nextMailOtp(email, seen));
    await code.press('Enter');
    const claims = await claimsAt(strict);
    assert.deepEqual(claims.amr, ['hwk', 'user', 'mfa', 'email']);
    assert.equal(claims.acr, 'urn:service:acr:phishing-resistant');
    gets.splice(0);
  });

  it('"Sign in with a passkey" where the browser has no conditional UI: the button, the address field left as it was', async () => {
    await context.addInitScript('PublicKeyCredential.isConditionalMediationAvailable = async () => false;');
    await context.clearCookies();
    const research = await start(0);
    await page.goto(research.url.href);
    const button = page.getByRole('button', { name: 'Sign in with a passkey' });
    await button.waitFor();
    assert.equal(await page.getByLabel('Email address').getAttribute('autocomplete'), 'email');
    await screenshot(page, 'oidc-hosted-passkey-button');
    await button.click();
    const claims = await claimsAt(research);
    assert.deepEqual(claims.amr, ['hwk', 'user', 'mfa']);
    assert.deepEqual(gets.splice(0), [{ mediation: 'optional', autocomplete: 'email' }]);
  });

  it('a revoked passkey ends the SSO session: the next app shows the sign-in page', async () => {
    const second = await start(1);
    await page.goto(second.url.href);
    await claimsAt(second); // still signed in
    await stack.cli('devices', 'revoke', passkeyId);
    const again = await start(1);
    await page.goto(again.url.href);
    await page.getByRole('heading', { name: 'Sign in to Second App' }).waitFor();
    assert.ok(page.url().startsWith(`${stack.serviceUrl}/signin?`), page.url());
  });

  it('shows neither the passkey button nor the autofill where the browser has no WebAuthn', async () => {
    const bare = await stack.browser.newContext();
    await bare.addInitScript('delete window.PublicKeyCredential;');
    const other = await bare.newPage();
    other.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
    });
    const research = await start(0);
    await other.goto(research.url.href);
    await other.getByRole('button', { name: 'Continue' }).waitFor();
    // The page offers passkeys once service-web is initialised (a request): wait until the network is quiet.
    await other.waitForLoadState('networkidle');
    assert.equal(await other.locator('#passkey-sign-in').isHidden(), true);
    assert.equal(await other.getByLabel('Email address').getAttribute('autocomplete'), 'email');
    await bare.close();
  });

  it('ran without a single Content Security Policy violation', () => {
    assert.deepEqual(violations, []);
  });
});
