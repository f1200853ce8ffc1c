/**
 * The send challenge as the operator's CAPTCHA in a real browser (issue 41): with
 * SERVICE_IDP_SEND_CHALLENGE=turnstile and the per-address threshold at one code an hour, the
 * hosted page's second sign-in is answered 428 with `{ kind: 'turnstile', siteKey, action }`; the
 * page loads the widget script the service names, renders it, and once it is solved sends the
 * same request again with the token, which the service checks with siteverify.
 *
 * The machine has no internet, so the real Turnstile cannot load: a local server stands in for
 * it, serving a stand-in widget script (through SERVICE_IDP_CAPTCHA_SCRIPT_URL, the only way the
 * page gets it, and allowed by the page's CSP because it is configured) that renders a button
 * with Turnstile's `render(container, { sitekey, action, callback })` API, and a siteverify
 * (SERVICE_IDP_CAPTCHA_VERIFY_URL) that answers for the tokens that widget made. axe-core finds
 * no serious violation on the page while the widget shows.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { authorizationRequest, callbackClaims, type RelyingParty, registerRelyingParty, watchedPage } from './fixtures.ts';
import { freePort, type PageServer, type Stack, servePages, startStack } from './harness.ts';
import { assertAccessible } from './visual.ts';

const SITE_KEY = '1x00000000000000000000AA';
const SECRET = 'stand-in-turnstile-secret';

/**
 * Turnstile's explicit-render API, played locally: a labelled button; its click calls back with a
 * token naming the page's hostname and the action it was rendered with (what siteverify returns).
 * A second button plays the widget failing (its error callback).
 */
const STAND_IN_WIDGET = `window.turnstile = {
  render(container, options) {
    const button = document.createElement('button');
    button.type = 'button';
    button.textContent = 'I am human (stand-in widget)';
    button.dataset.sitekey = options.sitekey;
    button.onclick = () => options.callback(['standin', location.hostname, options.action, Math.random().toString(36).slice(2)].join('~'));
    const fail = document.createElement('button');
    fail.type = 'button';
    fail.textContent = 'Fail the check (stand-in widget)';
    fail.onclick = () => options['error-callback']();
    container.append(button, fail);
    return 'w1';
  },
};`;

/** The stand-in widget script and siteverify on one local server; records each siteverify form. */
async function startStandIn(): Promise<{ origin: string; verified: Record<string, string>[]; close(): Promise<void> }> {
  const verified: Record<string, string>[] = [];
  const server: Server = createServer(async (request, response) => {
    if (request.method === 'GET' && request.url === '/widget.js') {
      response.setHeader('content-type', 'text/javascript');
      return response.end(STAND_IN_WIDGET);
    }
    let body = '';
    for await (const chunk of request) body += chunk;
    const form = Object.fromEntries(new URLSearchParams(body));
    verified.push(form);
    const [tag, hostname, action] = (form.response ?? '').split('~');
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify(form.secret === SECRET && tag === 'standin' ? { success: true, hostname, action } : { success: false }));
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${port}`, verified, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

function watchSends(page: Page): { status: number; solved: boolean }[] {
  const sends: { status: number; solved: boolean }[] = [];
  page.on('response', (response) => {
    if (!response.url().endsWith('/v1/authenticate') || response.request().method() !== 'POST') return;
    sends.push({ status: response.status(), solved: response.request().headers()['x-service-challenge-solution'] !== undefined });
  });
  return sends;
}

describe("the hosted page renders the operator's CAPTCHA widget", { timeout: 5 * 60_000 }, () => {
  let stack: Stack;
  let pages: PageServer;
  let app: RelyingParty;
  let standIn: Awaited<ReturnType<typeof startStandIn>>;
  const violations: string[] = [];

  before(async () => {
    standIn = await startStandIn();
    stack = await startStack({
      env: {
        SERVICE_IDP_CHALLENGE_PER_IP: '1/hour',
        SERVICE_IDP_SEND_CHALLENGE: 'turnstile',
        SERVICE_IDP_CAPTCHA_SITE_KEY: SITE_KEY,
        SERVICE_IDP_CAPTCHA_SECRET: SECRET,
        SERVICE_IDP_CAPTCHA_VERIFY_URL: `${standIn.origin}/siteverify`,
        SERVICE_IDP_CAPTCHA_SCRIPT_URL: `${standIn.origin}/widget.js`,
      },
    });
    pages = await servePages();
    app = await registerRelyingParty(stack, pages, 'Captcha Portal', '/callback');
  });
  after(async () => {
    await pages?.close();
    await stack?.close();
    await standIn?.close();
  });

  async function signIn(email: string, solveWidget?: (page: Page) => Promise<void>) {
    const { url, expected } = await authorizationRequest(app);
    const page = await watchedPage(stack.browser, violations);
    const sends = watchSends(page);
    await page.goto(url.href);
    await page.getByLabel('Email address').fill(email);
    const seen = (await stack.mails(email)).length;
    await page.getByRole('button', { name: 'Continue' }).click();
    await solveWidget?.(page);
    const otp = page.getByLabel(/6-digit code we emailed/);
    await otp.waitFor();
    await otp.fill(await stack.nextMailOtp(email, seen));
    await otp.press('Enter');
    const claims = await callbackClaims(page, app, expected);
    await page.context().close();
    return { sends, email: claims.email };
  }

  it('past the threshold the page shows the widget (again after it failed), sends its token, and the sign-in completes', async () => {
    const first = await signIn(`first.${Date.now().toString(36)}@example.com`);
    assert.deepEqual(first.sends, [{ status: 200, solved: false }], 'no challenge below the threshold');

    const email = `captcha.${Date.now().toString(36)}@example.com`;
    const second = await signIn(email, async (page) => {
      // The widget fails first: the page says so, sends nothing, and the user submits again.
      await page.getByRole('button', { name: /Fail the check/ }).click();
      await page.getByText('The check could not be completed. Try again.').waitFor();
      assert.equal(await page.locator('#captcha').isHidden(), true, 'the failed widget is gone');
      await page.getByRole('button', { name: 'Continue' }).click();
      const widget = page.getByRole('button', { name: /I am human/ });
      await widget.waitFor();
      assert.equal(await widget.getAttribute('data-sitekey'), SITE_KEY);
      assert.match((await page.locator('#status').textContent()) ?? '', /Complete the check below/);
      await assertAccessible(page, 'email step with the CAPTCHA widget');
      await widget.click();
    });
    assert.deepEqual(
      second.sends,
      [
        { status: 428, solved: false },
        { status: 428, solved: false },
        { status: 200, solved: true },
      ],
      'refused with a CAPTCHA challenge (twice: the widget failed once), then sent again with the widget token',
    );
    assert.equal(second.email, email);
    const check = standIn.verified.at(-1);
    assert.equal(check?.secret, SECRET);
    assert.match(check?.response ?? '', /^standin~[^~]+~authenticate~/, "the widget was rendered with the challenge's action");
    assert.ok(check?.remoteip, 'the client IP went to siteverify');
    assert.deepEqual(violations, []);
  });
});
