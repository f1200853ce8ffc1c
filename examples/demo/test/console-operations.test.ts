/**
 * The operator console's later additions in Chromium (issue 24): an application's secret rotated
 * behind a confirmation and shown once (the token endpoint then refuses the old secret and takes
 * the new one), its origins edited with the API's refusal shown, users searched by UTC day range,
 * a list longer than a page paged, a viewer's second factor reset behind its confirmation, and a
 * failing webhook endpoint's deliveries. axe-core on each of these views (no serious or critical
 * violation); the markup the failing endpoint answers never reaches the page.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { freePort, type Stack, screenshot, startStack } from './harness.ts';
import { consoleBrowser } from './support/console.ts';

describe('the operator console: secrets, addresses, searches, pages, MFA reset, deliveries', { timeout: 6 * 60_000 }, () => {
  let stack: Stack;
  let browser: ReturnType<typeof consoleBrowser>;
  let adminPage: Page;
  const run = Date.now().toString(36);
  const admin = `admin.${run}@example.com`;
  const viewer = `viewer.${run}@example.com`;
  /** An application registered by the CLI (its keys as shown once) on a redirect URI alone. */
  let registered: { clientId: string; secretKey: string; origin: string };
  // An endpoint that fails every delivery, answering with markup (which must never reach the page).
  // It reads the delivery before answering and closes the connection, so every attempt ends in its
  // status: answering early on a kept-alive socket let a retry meet a reset (network error ECONNRESET).
  const failing = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(500, { 'content-type': 'text/html', connection: 'close' }).end('<img src=x onerror="window.__xss=3">');
    });
  });
  let failingUrl: string;

  before(async () => {
    stack = await startStack();
    browser = consoleBrowser(stack);
    await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
    await stack.cli('operators', 'add', admin, '--role', 'admin');
    await stack.cli('operators', 'add', viewer);
    const origin = `http://127.0.0.1:${await freePort()}`;
    const keys = await stack.idp<{ clientId: string; secretKey: string }>(
      'clients',
      'create',
      '--name',
      'Shop',
      '--redirect-uri',
      `${origin}/callback`,
    );
    registered = { clientId: keys.clientId, secretKey: keys.secretKey, origin };
    adminPage = await browser.consoleSignIn(admin);
    failingUrl = `http://127.0.0.1:${(failing.address() as AddressInfo).port}/hook`;
    assert.equal((await browser.consoleApi(adminPage, 'POST', '/webhooks', { url: failingUrl, events: ['client.updated'] })).status, 201);
  });
  after(async () => {
    failing.close();
    await stack?.close();
  });

  it("rotates an application's secret behind a confirmation: shown once, the old one refused at once", async () => {
    // The secret: confirmed, shown once; the token endpoint refuses the old one and takes the new one.
    await browser.view(adminPage, 'apps', registered.clientId);
    await adminPage.getByRole('button', { name: 'Rotate the secret key' }).click();
    await browser.confirm(adminPage);
    const rotated = ((await adminPage.locator('.once output').textContent()) ?? '').trim();
    assert.match(rotated, /^sk_/);
    assert.notEqual(rotated, registered.secretKey);
    await browser.noSeriousViolations(adminPage, 'application edit');
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
  });

  it("edits an application's origins: a refused one shows the API's message and changes nothing", async () => {
    await browser.view(adminPage, 'apps', registered.clientId);
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

    // Third party: its users see a consent page from now on; the list says so.
    const third = async () =>
      (await stack.idp<{ clients: Array<{ id: string; thirdParty: boolean }> }>('clients', 'list')).clients.find(
        (c) => c.id === registered.clientId,
      )?.thirdParty;
    assert.equal(await third(), false);
    await form.getByLabel('Third-party application (users see a consent page listing what it asks)').check();
    await form.getByRole('button', { name: 'Save' }).click();
    await adminPage.getByRole('row', { name: new RegExp(`${registered.clientId}.*third party`) }).waitFor();
    assert.equal(await third(), true);
  });

  it('searches users by UTC day range; an empty range shows the API message', async () => {
    // Users created today (UTC): found; from tomorrow: none; an empty range: the API's message.
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    await browser.view(adminPage, 'users');
    const search = async (from: string, until: string) => {
      await adminPage.getByLabel('Email address (or its beginning)').fill(admin);
      await adminPage.getByLabel('Created from (UTC day)').fill(from);
      await adminPage.getByLabel('Created until (UTC day, included)').fill(until);
      await adminPage.getByRole('button', { name: 'Search' }).click();
    };
    await search(day(0), day(0));
    await adminPage.getByRole('link', { name: admin }).waitFor();
    await search(day(1), '');
    await adminPage.getByText('No users match.').waitFor();
    await search(day(0), day(-1));
    await adminPage.getByRole('status').filter({ hasText: 'createdSince must be earlier than createdBefore' }).waitFor();
  });

  it('pages a list longer than a page', async () => {
    // A list longer than a page: 25 rows, then the next page on request.
    for (let i = 0; i < 25; i++) await browser.consoleApi(adminPage, 'POST', '/operators', { email: `pager${i}.${run}@example.com` });
    await browser.view(adminPage, 'operators');
    const rows = adminPage.locator('main table tbody tr');
    assert.equal(await rows.count(), 25);
    await adminPage.getByRole('button', { name: 'Next page' }).click();
    await adminPage.waitForFunction(() => document.querySelectorAll('main table tbody tr').length > 25);
    assert.equal(await adminPage.getByRole('button', { name: 'Next page' }).count(), 0);
  });

  it("resets a viewer's second factor behind its confirmation; the views pass axe", async () => {
    // The viewer's second factor, enrolled at their first sign-in: the reset button, confirmed.
    await browser.consoleSignIn(viewer);
    await browser.view(adminPage, 'users');
    await adminPage.getByLabel('Email address (or its beginning)').fill(viewer);
    await adminPage.getByRole('button', { name: 'Search' }).click();
    await adminPage.getByRole('link', { name: viewer }).click();
    await adminPage.locator('main[data-ready="users"] h1', { hasText: viewer }).waitFor();
    await browser.noSeriousViolations(adminPage, 'user detail with MFA');
    await adminPage.getByRole('button', { name: 'Reset second factor' }).click();
    await browser.noSeriousViolations(adminPage, 'MFA reset confirmation');
    await browser.confirm(adminPage);
    await adminPage.waitForFunction(
      () => ![...document.querySelectorAll('main button')].some((b) => b.textContent === 'Reset second factor'),
    );
    const { events } = await stack.idp<{ events: Array<{ actor: string }> }>('events', '--type', 'mfa.reset');
    assert.ok(events.some((e) => e.actor === `operator:${admin}`));
  });

  it("shows a failing endpoint's deliveries as text; its markup answer never reaches the page", async () => {
    // The failing endpoint's deliveries: state and last error as text; the markup it answered never reaches the page.
    const failed = async () =>
      (
        (await browser.consoleApi(adminPage, 'GET', '/webhooks?limit=100')).body.webhooks as Array<{
          url: string;
          lastError: string | null;
        }>
      ).find((w) => w.url === failingUrl)?.lastError;
    for (let i = 0; i < 60 && !(await failed()); i++) await new Promise((r) => setTimeout(r, 250));
    assert.ok(await failed(), 'a delivery failed');
    await browser.view(adminPage, 'webhooks');
    await adminPage
      .getByRole('row', { name: new RegExp(failingUrl) })
      .getByRole('button', { name: 'Deliveries' })
      .click();
    await adminPage.getByRole('heading', { name: `Deliveries to ${failingUrl}` }).waitFor();
    await browser.noSeriousViolations(adminPage, 'deliveries');
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
    assert.deepEqual(browser.violations, []);
  });
});
