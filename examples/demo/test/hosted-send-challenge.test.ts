/**
 * The send challenge in a real browser (issue 41): with the per-address threshold at one code an
 * hour, the hosted page's second sign-in from this browser is answered 428 ERR_CHALLENGE_REQUIRED;
 * the page solves the proof of work itself (service-web's solveChallenge, crypto.subtle), sends
 * the same request again with the solution, and the sign-in completes with no visible step.
 * axe-core finds no serious violation on the code step that follows.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { authorizationRequest, callbackClaims, type RelyingParty, registerRelyingParty, watchedPage } from './fixtures.ts';
import { type PageServer, type Stack, servePages, startStack } from './harness.ts';
import { assertAccessible } from './visual.ts';

/** Every answer to the email step (POST /v1/authenticate) the page got, and whether its request carried a solution. */
function watchSends(page: Page): { status: number; solved: boolean }[] {
  const sends: { status: number; solved: boolean }[] = [];
  page.on('response', (response) => {
    if (!response.url().endsWith('/v1/authenticate') || response.request().method() !== 'POST') return;
    sends.push({ status: response.status(), solved: response.request().headers()['x-service-challenge-solution'] !== undefined });
  });
  return sends;
}

describe('the hosted page solves a send challenge', { timeout: 5 * 60_000 }, () => {
  let stack: Stack;
  let pages: PageServer;
  let app: RelyingParty;
  const violations: string[] = [];

  before(async () => {
    stack = await startStack({ env: { SERVICE_IDP_CHALLENGE_PER_IP: '1/hour' } });
    pages = await servePages();
    app = await registerRelyingParty(stack, pages, 'Challenge Portal', '/callback');
  });
  after(async () => {
    await pages?.close();
    await stack?.close();
  });

  /** One hosted sign-in of `email` in a fresh browser; the sends the page made and the ID token's address. */
  async function signIn(email: string, checkPage?: (page: Page) => Promise<void>) {
    const { url, expected } = await authorizationRequest(app);
    const page = await watchedPage(stack.browser, violations);
    const sends = watchSends(page);
    await page.goto(url.href);
    await page.getByLabel('Email address').fill(email);
    const seen = (await stack.mails(email)).length;
    await page.getByRole('button', { name: 'Continue' }).click();
    const otp = page.getByLabel(/6-digit code we emailed/);
    await otp.waitFor();
    await checkPage?.(page);
    await otp.fill(await stack.nextMailOtp(email, seen));
    await otp.press('Enter');
    const claims = await callbackClaims(page, app, expected);
    await page.context().close();
    return { sends, email: claims.email };
  }

  it('below the threshold the page sends at once; past it, it solves the challenge unseen and the sign-in completes', async () => {
    const first = await signIn(`first.${Date.now().toString(36)}@example.com`);
    assert.deepEqual(first.sends, [{ status: 200, solved: false }], 'no challenge below the threshold');

    const email = `second.${Date.now().toString(36)}@example.com`;
    const second = await signIn(email, (page) => assertAccessible(page, 'code step after a send challenge'));
    assert.deepEqual(
      second.sends,
      [
        { status: 428, solved: false },
        { status: 200, solved: true },
      ],
      'refused with a challenge, then sent again with its solution',
    );
    assert.equal(second.email, email);
    assert.deepEqual(violations, []);
  });
});
