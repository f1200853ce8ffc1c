/**
 * The operator console on a listener of its own (`--console-port`), in Chromium: the operator
 * opens the console's URL, signs in on the hosted pages at the issuer (another port of the same
 * host, so the console's cookies must survive the trip), lands back on the console's URL, and the
 * console's own calls work there; the main listener has no /admin.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Stack, startStack } from './harness.ts';
import { consoleBrowser } from './support/console.ts';

describe('the operator console on its own listener in a real browser', { timeout: 5 * 60_000 }, () => {
  let stack: Stack;
  const admin = `admin.${Date.now().toString(36)}@example.com`;

  before(async () => {
    stack = await startStack({ consoleListener: true });
    assert.match(await stack.cli('operators', 'add', admin, '--role', 'admin'), new RegExp(`can sign in at ${stack.consoleUrl}/admin`));
  });
  after(() => stack?.close());

  it('signs in through the hosted pages at the issuer and back to the console URL; /admin is not on the main listener', async () => {
    assert.notEqual(stack.consoleUrl, stack.serviceUrl);
    assert.equal((await fetch(`${stack.serviceUrl}/admin`, { redirect: 'manual' })).status, 404);
    const browser = consoleBrowser(stack);
    const page = await browser.consoleSignIn(admin);
    assert.equal(new URL(page.url()).origin, stack.consoleUrl);
    await browser.noSeriousViolations(page, 'dashboard');
    const users = await browser.consoleApi(page, 'GET', '/users?limit=5');
    assert.equal(users.status, 200);
    await browser.view(page, 'operators');
    assert.deepEqual(browser.violations, [], 'no CSP refusal on the console origin');
  });
});
