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
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { type RunningOidcApp, startOidcApp } from '../src/oidc-app.ts';
import { freePort, SEND_WINDOW_MS, type Stack, screenshot, startStack } from './harness.ts';
import { consoleBrowser } from './support/console.ts';

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
  let browser: ReturnType<typeof consoleBrowser>;

  before(async () => {
    stack = await startStack();
    browser = consoleBrowser(stack);
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    assert.match(await stack.cli('operators', 'add', admin, '--role', 'admin'), /can sign in at/);
    await stack.cli('operators', 'add', viewer);
  });
  after(async () => {
    await app?.close();
    receiver.close();
    await stack?.close();
  });

  it('an admin operator signs in with the email code and TOTP; every view passes axe', async () => {
    adminPage = await browser.consoleSignIn(admin);
    assert.match((await adminPage.locator('.who').textContent()) ?? '', new RegExp(`${admin} \\(admin\\)`));
    await screenshot(adminPage, 'console-dashboard');
    for (const name of ['dashboard', 'users', 'apps', 'webhooks', 'events', 'keys', 'operators']) {
      await browser.view(adminPage, name);
      await browser.noSeriousViolations(adminPage, name);
    }
    const { events } = await stack.idp<{ events: Array<{ type: string; actor: string }> }>('events', '--type', 'operator.signed_in');
    assert.ok(events.some((e) => e.actor === `operator:${admin}`));
  });

  it('registers an application in the console and a user signs in with it', async () => {
    await browser.view(adminPage, 'apps');
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

    const page = await browser.freshPage(XSS_AGENT);
    await page.goto(`${app.url}/login`);
    await browser.emailAndCode(page, person);
    await page.waitForURL(`${app.url}/`);
    const { events } = await stack.idp<{ events: Array<{ type: string; actor: string; clientId: string }> }>(
      'events',
      '--type',
      'client.created',
    );
    assert.ok(events.some((e) => e.clientId === clientId && e.actor === `operator:${admin}`));
  });

  it('finds the user, disables them (their next sign-in sends no code), enables them, revokes a device; each event names the operator', async () => {
    await browser.view(adminPage, 'users');
    await adminPage.getByLabel('Email address (or its beginning)').fill(person);
    await adminPage.getByRole('button', { name: 'Search' }).click();
    await adminPage.getByRole('link', { name: person }).click();
    await adminPage.locator('main[data-ready="users"] h1', { hasText: person }).waitFor();
    assert.ok(await adminPage.getByText(XSS_AGENT).first().isVisible(), 'the User-Agent is shown as text');
    await browser.noSeriousViolations(adminPage, 'user detail');
    await screenshot(adminPage, 'console-user');

    await adminPage.getByRole('button', { name: 'Disable' }).click();
    await browser.confirm(adminPage);
    await adminPage.locator('dd[data-status="disabled"]').waitFor();
    // Disabled: the app's fresh sign-in reaches the code step, but no code is mailed.
    const user = await browser.freshPage();
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
    await browser.confirm(adminPage);
    await adminPage.locator('main[data-ready="users"]').waitFor();
    await adminPage.waitForFunction(() => !document.querySelector('main td button'));

    await browser.view(adminPage, 'events');
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
    await browser.view(adminPage, 'webhooks');
    const { port } = receiver.address() as AddressInfo;
    await adminPage.getByLabel('URL').fill(`http://127.0.0.1:${port}/hook`);
    await adminPage.getByRole('button', { name: 'Add an endpoint' }).click();
    assert.match((await adminPage.locator('.once output').textContent()) ?? '', /^whsec_/);
    await adminPage.getByRole('button', { name: 'Close' }).click();
    // An event to deliver: the operator rotates the signing keys.
    await browser.view(adminPage, 'keys');
    await adminPage.getByRole('button', { name: 'Rotate signing keys' }).click();
    await browser.confirm(adminPage);
    for (let i = 0; i < 40 && !received.some((body) => body.includes('signing_key.rotated')); i++)
      await new Promise((r) => setTimeout(r, 250));
    assert.ok(received.some((body) => body.includes('signing_key.rotated')));
    await browser.view(adminPage, 'webhooks');
    const row = adminPage.getByRole('row', { name: new RegExp(`127.0.0.1:${port}`) });
    assert.doesNotMatch((await row.locator('td').nth(4).textContent()) ?? '', /^—$/, 'last delivered is shown');
    assert.deepEqual(browser.violations, []);
  });

  it('a viewer sees no action and the API refuses a forged change', async () => {
    const page = await browser.consoleSignIn(viewer);
    await browser.view(page, 'users');
    await page.getByLabel('Email address (or its beginning)').fill(person);
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: person }).click();
    await page.locator('main[data-ready="users"] h1', { hasText: person }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Disable' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Delete' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Revoke' }).count(), 0);
    for (const name of ['apps', 'webhooks', 'keys', 'operators']) {
      await browser.view(page, name);
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
});
