/**
 * A passkey as the MFA method on the hosted sign-in pages, in a real browser: an openid-client
 * relying party whose MFA policy is required, Chromium with its virtual authenticator (DevTools
 * WebAuthn), the service on http://localhost:PORT (a relying party id is a domain, never an IP
 * address). A new user chooses "A passkey" at the enrollment step, creates it, saves the
 * recovery codes and lands on the callback (amr otp mfa hwk user); a later sign-in on that
 * remembered browser (prompt=login) asks for the passkey and passes with it (amr swk mfa hwk
 * user), and without it a recovery code passes the step. No Content Security Policy violation.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import type { BrowserContext, Page } from 'playwright-core';
import { type PageServer, type Stack, screenshot, servePages, startStack } from './harness.ts';

describe('a passkey as the MFA method on the hosted sign-in pages', { timeout: 5 * 60_000 }, () => {
  let stack: Stack;
  let rpPages: PageServer;
  let context: BrowserContext;
  let app: { config: oidc.Configuration; redirectUri: string };
  const email = `hosted.pkmfa.${Date.now().toString(36)}@example.com`;
  const violations: string[] = [];

  before(async () => {
    stack = await startStack({ serviceHost: 'localhost' });
    rpPages = await servePages();
    const redirectUri = `${rpPages.origin}/callback`;
    rpPages.pages.set('/callback', '<!doctype html><title>callback</title><p>back at the app</p>');
    const keys = await stack.idp<{ clientId: string; secretKey: string }>(
      'clients',
      'create',
      '--name',
      'Strict Portal',
      '--redirect-uri',
      redirectUri,
    );
    await stack.cli('clients', 'update', keys.clientId, '--mfa-policy', 'required');
    const config = await oidc.discovery(new URL(stack.serviceUrl), keys.clientId, undefined, oidc.ClientSecretPost(keys.secretKey), {
      execute: [oidc.allowInsecureRequests],
    });
    app = { config, redirectUri };
    context = await stack.browser.newContext();
  });
  after(async () => {
    await rpPages?.close();
    await stack?.close();
  });

  async function start(extra: Record<string, string> = {}) {
    const verifier = oidc.randomPKCECodeVerifier();
    const expected = { pkceCodeVerifier: verifier, expectedState: oidc.randomState(), expectedNonce: oidc.randomNonce() };
    const url = oidc.buildAuthorizationUrl(app.config, {
      redirect_uri: app.redirectUri,
      scope: 'openid email',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: expected.expectedState,
      nonce: expected.expectedNonce,
      login_hint: email,
      ...extra,
    });
    return { url, expected };
  }

  async function newPage(): Promise<Page> {
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
    });
    return page;
  }

  it('enrolls a passkey as the second factor on the hosted page, then passes the MFA step with it', async () => {
    const page = await newPage();
    // The virtual authenticator of this page (DevTools WebAuthn), as in passkeys.test.ts.
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable', { enableUI: false });
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        ctap2Version: 'ctap2_1',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });

    const first = await start();
    await page.goto(first.url.href);
    await page.getByRole('heading', { name: 'Sign in to Strict Portal' }).waitFor();
    const seen = (await stack.mails(email)).length;
    await page.getByRole('button', { name: 'Continue' }).click();
    const otp = page.getByLabel(/6-digit code we emailed/);
    await otp.waitFor();
    await otp.fill(await stack.nextMailOtp(email, seen));
    await otp.press('Enter');
    await page.locator('#enroll-step:not([hidden])').waitFor();
    await page.getByRole('radio', { name: 'A passkey' }).check();
    await page.locator('#enroll-step button[type=submit]').click();
    await page.locator('#passkey-mfa-step:not([hidden])').waitFor();
    await screenshot(page, 'oidc-hosted-passkey-mfa-create');
    await page.getByRole('button', { name: 'Create a passkey' }).click();
    await page.locator('#codes-step:not([hidden])').waitFor();
    const codes = await page.locator('#recovery-codes li').allTextContents();
    assert.equal(codes.length, 10);
    await page.getByRole('button', { name: 'I have saved them' }).click();
    await page.waitForURL(`${app.redirectUri}?**`);
    const enrolled = (await oidc.authorizationCodeGrant(app.config, new URL(page.url()), first.expected)).claims();
    assert.deepEqual(enrolled?.amr, ['otp', 'mfa', 'hwk', 'user']);

    // The hosted page also offers this passkey in the email field's autofill (conditional UI),
    // which would sign in with it at once as the first factor. A user who passes the autofill by
    // and continues with the address: the authenticator answers nothing until the user acts.
    const presence = (enabled: boolean) => cdp.send('WebAuthn.setAutomaticPresenceSimulation', { authenticatorId, enabled });

    // A fresh sign-in on this remembered browser: no email code, the passkey step.
    const second = await start({ prompt: 'login' });
    const mailsBefore = (await stack.mails(email)).length;
    await presence(false);
    await page.goto(second.url.href);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.locator('#passkey-mfa-step:not([hidden])').waitFor();
    await presence(true);
    assert.equal(await page.isVisible('#passkey-mfa-recovery'), true, 'a recovery code is offered beside the passkey');
    await screenshot(page, 'oidc-hosted-passkey-mfa-step');
    await page.getByRole('button', { name: 'Use my passkey' }).click();
    await page.waitForURL(`${app.redirectUri}?**`);
    const claims = (await oidc.authorizationCodeGrant(app.config, new URL(page.url()), second.expected)).claims();
    assert.deepEqual(claims?.amr, ['swk', 'mfa', 'hwk', 'user']);
    assert.equal((await stack.mails(email)).length, mailsBefore, 'no email code was needed');

    // Without the passkey: a recovery code still passes the step.
    const third = await start({ prompt: 'login' });
    await presence(false);
    await page.goto(third.url.href);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('button', { name: 'Use a recovery code instead' }).click();
    await page.getByLabel('One of your recovery codes (XXXXX-XXXXX)').fill(codes[0] as string);
    await page.locator('#mfa-step button[type=submit]').click();
    await page.waitForURL(`${app.redirectUri}?**`);
    const recovered = (await oidc.authorizationCodeGrant(app.config, new URL(page.url()), third.expected)).claims();
    assert.deepEqual(recovered?.amr, ['swk', 'mfa', 'recovery_code']);
    await page.close();
  });

  it('ran without a single Content Security Policy violation', () => {
    assert.deepEqual(violations, []);
  });
});
