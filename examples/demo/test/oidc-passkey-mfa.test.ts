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
import { before, describe, it } from 'node:test';
import type { BrowserContext } from 'playwright-core';
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

describe('a passkey as the MFA method on the hosted sign-in pages', { timeout: 5 * 60_000 }, () => {
  let stack: Stack;
  let context: BrowserContext;
  let app: RelyingParty;
  const email = `hosted.pkmfa.${Date.now().toString(36)}@example.com`;
  const violations: string[] = [];
  strictPortalSuite((suite) => ({ stack, app } = suite));
  before(async () => {
    context = await stack.browser.newContext();
  });

  const start = (extra: Record<string, string> = {}) => authorizationRequest(app, { login_hint: email, ...extra });
  const newPage = () => watchedPage(context, violations);

  it('enrolls a passkey as the second factor on the hosted page, then passes the MFA step with it', async () => {
    const page = await newPage();
    const { cdp, authenticatorId } = await addVirtualAuthenticator(page);

    const first = await start();
    await page.goto(first.url.href);
    await page.getByRole('heading', { name: 'Sign in to Strict Portal' }).waitFor();
    await emailAndCode(stack, page, email);
    const codes = await enrollPasskeyMfa(page, () => screenshot(page, 'oidc-hosted-passkey-mfa-create'));
    assert.equal(codes.length, 10);
    const enrolled = await callbackClaims(page, app, first.expected);
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
    const claims = await callbackClaims(page, app, second.expected);
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
    const recovered = await callbackClaims(page, app, third.expected);
    assert.deepEqual(recovered?.amr, ['swk', 'mfa', 'recovery_code']);
    await page.close();
  });

  it('ran without a single Content Security Policy violation', () => {
    assert.deepEqual(violations, []);
  });
});
