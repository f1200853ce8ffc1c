/**
 * The operator console (/admin) in Chromium: `service-idp operators add`, the operator's sign-in
 * through the hosted pages with the email code and a TOTP second factor (computed from the key
 * the page shows); an application registered in the console and used to sign a user in; that
 * user found, disabled (their next sign-in sends no code, as docs/operations.md says), enabled,
 * a device revoked; a webhook endpoint added and a delivery seen; each action's event naming the
 * operator. A viewer sees no action buttons and the API refuses a forged call. axe-core on every
 * view (no serious or critical violation); user- and app-controlled strings (an app's name, a
 * User-Agent) render as text, never as markup.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import * as OTPAuth from 'otpauth';
import type { Page } from 'playwright-core';
import { type RunningOidcApp, startOidcApp } from '../src/oidc-app.ts';
import { freePort, SEND_WINDOW_MS, type Stack, screenshot, startStack } from './harness.ts';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const XSS_NAME = '<img src=x onerror="window.__xss=1">App';
const XSS_AGENT = 'Mozilla/5.0 <script>window.__xss=2</script>';

describe('the operator console in a real browser', { timeout: 8 * 60_000 }, () => {
  let stack: Stack;
  let app: RunningOidcApp | undefined;
  const run = Date.now().toString(36);
  const admin = `admin.${run}@example.com`;
  const viewer = `viewer.${run}@example.com`;
  const person = `person.${run}@example.com`;
  const received: string[] = [];
  const receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      received.push(body);
      response.writeHead(204).end();
    });
  });
  let adminPage: Page;
  const violations: string[] = [];
  /** The application registered in the console (its keys as shown once, its origin). */
  let registered: { clientId: string; secretKey: string; origin: string };
  // An endpoint that fails every delivery, answering with markup (which must never reach the page).
  const failing = createServer((_request, response) => {
    response.writeHead(500, { 'content-type': 'text/html' }).end('<img src=x onerror="window.__xss=3">');
  });

  before(async () => {
    stack = await startStack();
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
    assert.match(await stack.cli('operators', 'add', admin, '--role', 'admin'), /can sign in at/);
    await stack.cli('operators', 'add', viewer);
  });
  after(async () => {
    await app?.close();
    receiver.close();
    failing.close();
    await stack?.close();
  });

  async function freshPage(userAgent?: string): Promise<Page> {
    const context = await stack.browser.newContext(userAgent ? { userAgent } : {});
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
    });
    return page;
  }

  async function emailAndCode(page: Page, email: string) {
    await page.getByLabel('Email address').fill(email);
    const seen = (await stack.mails(email)).length;
    await page.getByRole('button', { name: 'Continue' }).click();
    const otp = page.getByLabel(/6-digit code we emailed/);
    await otp.fill(await stack.nextMailOtp(email, seen));
    await otp.press('Enter');
  }

  /** The console's sign-in: /admin → hosted page, email code, TOTP enrollment (MFA is required), recovery codes → the console. */
  async function consoleSignIn(email: string): Promise<Page> {
    const page = await freshPage();
    await page.goto(`${stack.serviceUrl}/admin`);
    await page.getByRole('heading', { name: 'Sign in to Operator console' }).waitFor();
    await emailAndCode(page, email);
    await page.getByLabel('An authenticator app').check();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('img', { name: /QR code/ }).waitFor();
    const secret = ((await page.locator('#totp-secret').textContent()) ?? '').trim();
    const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 });
    const code = page.getByLabel('The 6-digit code from your authenticator app');
    await code.fill(totp.generate());
    await code.press('Enter');
    await page
      .getByRole('heading', { name: 'Save your recovery codes' })
      .waitFor()
      .catch(async (error) => {
        throw new Error(`${page.url()}: ${((await page.locator('body').textContent()) ?? '').slice(0, 500)}`, { cause: error });
      });
    await page.getByRole('button', { name: 'I have saved them' }).click();
    await page.waitForURL(`${stack.serviceUrl}/admin`);
    await page.locator('main[data-ready="dashboard"]').waitFor();
    return page;
  }

  async function view(page: Page, name: string, param = '') {
    await page.evaluate(() => document.querySelector('main')?.removeAttribute('data-ready'));
    await page.goto(`${stack.serviceUrl}/admin#/${name}${param ? `/${param}` : ''}`);
    await page.locator(`main[data-ready="${name}"]`).waitFor();
  }

  async function noSeriousViolations(page: Page, label: string) {
    await page.evaluate(AXE);
    const result = await page.evaluate(() => (window as unknown as { axe: { run(): Promise<any> } }).axe.run());
    const serious = (result.violations as Array<{ id: string; impact: string; nodes: unknown[] }>).filter(
      (v) => v.impact === 'serious' || v.impact === 'critical',
    );
    assert.deepEqual(
      serious.map((v) => v.id),
      [],
      `${label}: ${JSON.stringify(serious.map((v) => ({ id: v.id, nodes: v.nodes.slice(0, 2) })))}`,
    );
  }

  const confirm = async (page: Page, typed?: string) => {
    const dialog = page.getByRole('dialog');
    if (typed) await dialog.getByLabel('Address').fill(typed);
    await dialog.getByRole('button', { name: 'Confirm' }).click();
  };

  it('an admin operator signs in with the email code and TOTP; every view passes axe', async () => {
    adminPage = await consoleSignIn(admin);
    assert.match((await adminPage.locator('.who').textContent()) ?? '', new RegExp(`${admin} \\(admin\\)`));
    await screenshot(adminPage, 'console-dashboard');
    for (const name of ['dashboard', 'users', 'apps', 'webhooks', 'events', 'keys', 'operators']) {
      await view(adminPage, name);
      await noSeriousViolations(adminPage, name);
    }
    const { events } = await stack.idp<{ events: Array<{ type: string; actor: string }> }>('events', '--type', 'operator.signed_in');
    assert.ok(events.some((e) => e.actor === `operator:${admin}`));
  });

  it('registers an application in the console and a user signs in with it', async () => {
    await view(adminPage, 'apps');
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    await adminPage.getByLabel('Name', { exact: true }).fill(XSS_NAME);
    await adminPage.getByLabel('Redirect URIs (one per line)', { exact: true }).fill(`${origin}/callback`);
    await adminPage.getByLabel('Post-logout redirect URIs (one per line)').fill(`${origin}/`);
    await adminPage.getByRole('button', { name: 'Register an application' }).click();
    const secrets = adminPage.locator('.once output');
    await secrets.first().waitFor();
    const [clientId, , secretKey] = await secrets.allTextContents();
    assert.match(clientId ?? '', /^cli_/);
    registered = { clientId: clientId ?? '', secretKey: secretKey ?? '', origin };
    await adminPage.getByRole('button', { name: 'Close' }).click();
    await adminPage.locator('main[data-ready="apps"]').waitFor();
    assert.ok(await adminPage.getByText(XSS_NAME).first().isVisible(), 'the name is shown as text');
    app = await startOidcApp({
      issuerBaseURL: stack.serviceUrl,
      publicOrigin: origin,
      clientId: clientId ?? '',
      clientSecret: secretKey ?? '',
      port,
      log: () => {},
    });

    const page = await freshPage(XSS_AGENT);
    await page.goto(`${app.url}/login`);
    await emailAndCode(page, person);
    await page.waitForURL(`${app.url}/`);
    const { events } = await stack.idp<{ events: Array<{ type: string; actor: string; clientId: string }> }>(
      'events',
      '--type',
      'client.created',
    );
    assert.ok(events.some((e) => e.clientId === clientId && e.actor === `operator:${admin}`));
  });

  it('finds the user, disables them (their next sign-in sends no code), enables them, revokes a device; each event names the operator', async () => {
    await view(adminPage, 'users');
    await adminPage.getByLabel('Email address (or its beginning)').fill(person);
    await adminPage.getByRole('button', { name: 'Search' }).click();
    await adminPage.getByRole('link', { name: person }).click();
    await adminPage.locator('main[data-ready="users"] h1', { hasText: person }).waitFor();
    assert.ok(await adminPage.getByText(XSS_AGENT).first().isVisible(), 'the User-Agent is shown as text');
    await noSeriousViolations(adminPage, 'user detail');
    await screenshot(adminPage, 'console-user');

    await adminPage.getByRole('button', { name: 'Disable' }).click();
    await confirm(adminPage);
    await adminPage.locator('dd[data-status="disabled"]').waitFor();
    // Disabled: the app's fresh sign-in reaches the code step, but no code is mailed.
    const user = await freshPage();
    await user.goto(`${app?.url}/login`);
    await user.getByLabel('Email address').fill(person);
    const seen = (await stack.mails(person)).length;
    // Past the resend spacing of the sign-in a moment ago, so nothing but the disabling withholds a code.
    await new Promise((resolve) => setTimeout(resolve, SEND_WINDOW_MS));
    await user.getByRole('button', { name: 'Continue' }).click();
    await user
      .getByLabel(/6-digit code we emailed/)
      .waitFor()
      .catch(async (error) => {
        throw new Error(`${user.url()}: ${((await user.locator('body').textContent()) ?? '').slice(0, 400)}`, { cause: error });
      });
    await new Promise((resolve) => setTimeout(resolve, 2500));
    assert.equal((await stack.mails(person)).length, seen, 'a disabled user gets no code');

    await adminPage.getByRole('button', { name: 'Enable' }).click();
    await adminPage.locator('dd[data-status="active"]').waitFor();
    await adminPage.getByRole('button', { name: 'Revoke' }).first().click();
    await confirm(adminPage);
    await adminPage.locator('main[data-ready="users"]').waitFor();
    await adminPage.waitForFunction(() => !document.querySelector('main td button'));

    await view(adminPage, 'events');
    for (const type of ['user.disabled', 'user.enabled', 'device.revoked']) {
      await adminPage.getByLabel('Type').fill(type);
      await adminPage.getByRole('button', { name: 'Filter' }).click();
      await adminPage
        .getByRole('row', { name: new RegExp(`${type.replace('.', '\\.')}.*operator:${admin.replaceAll('.', '\\.')}`) })
        .first()
        .waitFor();
    }
    assert.equal(await adminPage.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined, 'no injected script ran');
  });

  it('adds a webhook endpoint (secret shown once) and shows its delivery', async () => {
    await view(adminPage, 'webhooks');
    const { port } = receiver.address() as AddressInfo;
    await adminPage.getByLabel('URL').fill(`http://127.0.0.1:${port}/hook`);
    await adminPage.getByRole('button', { name: 'Add an endpoint' }).click();
    assert.match((await adminPage.locator('.once output').textContent()) ?? '', /^whsec_/);
    await adminPage.getByRole('button', { name: 'Close' }).click();
    // An event to deliver: the operator rotates the signing keys.
    await view(adminPage, 'keys');
    await adminPage.getByRole('button', { name: 'Rotate signing keys' }).click();
    await confirm(adminPage);
    for (let i = 0; i < 40 && !received.some((body) => body.includes('signing_key.rotated')); i++)
      await new Promise((r) => setTimeout(r, 250));
    assert.ok(received.some((body) => body.includes('signing_key.rotated')));
    await view(adminPage, 'webhooks');
    const row = adminPage.getByRole('row', { name: new RegExp(`127.0.0.1:${port}`) });
    assert.doesNotMatch((await row.locator('td').nth(4).textContent()) ?? '', /^—$/, 'last delivered is shown');
    assert.deepEqual(violations, []);
  });

  it('a viewer sees no action and the API refuses a forged change', async () => {
    const page = await consoleSignIn(viewer);
    await view(page, 'users');
    await page.getByLabel('Email address (or its beginning)').fill(person);
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: person }).click();
    await page.locator('main[data-ready="users"] h1', { hasText: person }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Disable' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Delete' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Revoke' }).count(), 0);
    for (const name of ['apps', 'webhooks', 'keys', 'operators']) {
      await view(page, name);
      assert.equal(await page.locator('main form, main button.danger').count(), 0, `${name} has no form or action for a viewer`);
    }
    const status = await page.evaluate(async () => {
      const session = await (await fetch('/admin/session')).json();
      const answer = await fetch('/admin/v1/signing-keys/rotate', {
        method: 'POST',
        headers: { 'x-console-csrf': session.csrfToken },
        referrerPolicy: 'same-origin',
      });
      return answer.status;
    });
    assert.equal(status, 403);
  });

  it("rotates an application's secret, edits its addresses, searches users by day, pages a list; deliveries and MFA reset pass axe", async () => {
    const consoleApi = (method: string, path: string, body?: unknown) =>
      adminPage.evaluate(
        async ({ method, path, body }) => {
          const session = await (await fetch('/admin/session')).json();
          const answer = await fetch(`/admin/v1${path}`, {
            method,
            headers: { 'x-console-csrf': session.csrfToken, ...(body ? { 'content-type': 'application/json' } : {}) },
            referrerPolicy: 'same-origin',
            ...(body ? { body: JSON.stringify(body) } : {}),
          });
          return { status: answer.status, body: answer.status === 204 ? null : await answer.json() };
        },
        { method, path, body },
      );
    const failingUrl = `http://127.0.0.1:${(failing.address() as AddressInfo).port}/hook`;
    assert.equal((await consoleApi('POST', '/webhooks', { url: failingUrl, events: ['client.updated'] })).status, 201);

    // The secret: confirmed, shown once; the token endpoint refuses the old one and takes the new one.
    await view(adminPage, 'apps', registered.clientId);
    await adminPage.getByRole('button', { name: 'Rotate the secret key' }).click();
    await confirm(adminPage);
    const rotated = ((await adminPage.locator('.once output').textContent()) ?? '').trim();
    assert.match(rotated, /^sk_/);
    assert.notEqual(rotated, registered.secretKey);
    await noSeriousViolations(adminPage, 'application edit');
    const token = async (secret: string) =>
      (
        await (
          await fetch(`${stack.serviceUrl}/oauth/token`, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({
              grant_type: 'authorization_code',
              code: 'not-a-live-code',
              redirect_uri: `${registered.origin}/callback`,
              code_verifier: 'v'.repeat(43),
              client_id: registered.clientId,
              client_secret: secret,
            }),
          })
        ).json()
      ).error;
    assert.equal(await token(registered.secretKey), 'invalid_client', 'the old secret stopped at once');
    assert.equal(await token(rotated), 'invalid_grant', 'the new secret authenticates the client');

    // The addresses: a refused one shows the API's message and changes nothing; a good one is stored.
    const form = adminPage.locator('form').filter({ has: adminPage.getByRole('heading', { name: /^Edit / }) });
    await form.getByLabel('Allowed origins (one per line)').fill('javascript:alert(1)');
    await form.getByRole('button', { name: 'Save' }).click();
    await adminPage.getByRole('status').filter({ hasText: 'Failed: origin must be http or https.' }).waitFor();
    const clients = async () =>
      (await stack.idp<{ clients: Array<{ id: string; origins: string[] }> }>('clients', 'list')).clients.find(
        (c) => c.id === registered.clientId,
      );
    assert.deepEqual((await clients())?.origins, []);
    await form.getByLabel('Allowed origins (one per line)').fill(registered.origin);
    await form.getByRole('button', { name: 'Save' }).click();
    for (let i = 0; i < 40 && (await clients())?.origins.length === 0; i++) await new Promise((r) => setTimeout(r, 250));
    assert.deepEqual((await clients())?.origins, [registered.origin]);

    // Users created today (UTC): found; from tomorrow: none; an empty range: the API's message.
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    await view(adminPage, 'users');
    const search = async (from: string, until: string) => {
      await adminPage.getByLabel('Email address (or its beginning)').fill(person);
      await adminPage.getByLabel('Created from (UTC day)').fill(from);
      await adminPage.getByLabel('Created until (UTC day, included)').fill(until);
      await adminPage.getByRole('button', { name: 'Search' }).click();
    };
    await search(day(0), day(0));
    await adminPage.getByRole('link', { name: person }).waitFor();
    await search(day(1), '');
    await adminPage.getByText('No users match.').waitFor();
    await search(day(0), day(-1));
    await adminPage.getByRole('status').filter({ hasText: 'createdSince must be earlier than createdBefore' }).waitFor();

    // A list longer than a page: 25 rows, then the next page on request.
    for (let i = 0; i < 25; i++) await consoleApi('POST', '/operators', { email: `pager${i}.${run}@example.com` });
    await view(adminPage, 'operators');
    const rows = adminPage.locator('main table tbody tr');
    assert.equal(await rows.count(), 25);
    await adminPage.getByRole('button', { name: 'Next page' }).click();
    await adminPage.waitForFunction(() => document.querySelectorAll('main table tbody tr').length > 25);
    assert.equal(await adminPage.getByRole('button', { name: 'Next page' }).count(), 0);

    // The second factor of the viewer (enrolled at their sign-in above): the reset button, confirmed.
    await view(adminPage, 'users');
    await adminPage.getByLabel('Email address (or its beginning)').fill(viewer);
    await adminPage.getByRole('button', { name: 'Search' }).click();
    await adminPage.getByRole('link', { name: viewer }).click();
    await adminPage.locator('main[data-ready="users"] h1', { hasText: viewer }).waitFor();
    await noSeriousViolations(adminPage, 'user detail with MFA');
    await adminPage.getByRole('button', { name: 'Reset second factor' }).click();
    await noSeriousViolations(adminPage, 'MFA reset confirmation');
    await confirm(adminPage);
    await adminPage.waitForFunction(
      () => ![...document.querySelectorAll('main button')].some((b) => b.textContent === 'Reset second factor'),
    );
    const { events } = await stack.idp<{ events: Array<{ actor: string }> }>('events', '--type', 'mfa.reset');
    assert.ok(events.some((e) => e.actor === `operator:${admin}`));

    // The failing endpoint's deliveries: state and last error as text; the markup it answered never reaches the page.
    const failed = async () =>
      ((await consoleApi('GET', '/webhooks?limit=100')).body.webhooks as Array<{ url: string; lastError: string | null }>).find(
        (w) => w.url === failingUrl,
      )?.lastError;
    for (let i = 0; i < 60 && !(await failed()); i++) await new Promise((r) => setTimeout(r, 250));
    assert.ok(await failed(), 'a delivery failed');
    await view(adminPage, 'webhooks');
    await adminPage
      .getByRole('row', { name: new RegExp(failingUrl) })
      .getByRole('button', { name: 'Deliveries' })
      .click();
    await adminPage.getByRole('heading', { name: `Deliveries to ${failingUrl}` }).waitFor();
    await noSeriousViolations(adminPage, 'deliveries');
    // A delivery not tried yet shows a dash; every tried one its status, as text.
    const lastErrors = (
      await adminPage
        .getByRole('table', { name: `Deliveries to ${failingUrl}` })
        .locator('.last-error')
        .allTextContents()
    )
      .map((t) => t.trim())
      .filter((t) => t !== '—');
    assert.ok(lastErrors.length > 0);
    for (const text of lastErrors) assert.match(text, /^HTTP 500 \(attempt \d+\)$/);
    assert.equal(await adminPage.locator('main img').count(), 0, 'no markup from the endpoint');
    assert.equal(await adminPage.evaluate(() => (window as unknown as { __xss?: number }).__xss), undefined);
    await screenshot(adminPage, 'console-deliveries');
    assert.deepEqual(violations, []);
  });
});
