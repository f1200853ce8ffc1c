/**
 * The operator console in Chromium, for the console's browser tests: a fresh page, the
 * console's sign-in (email code, then TOTP enrollment from the key the page shows), opening a
 * view, axe-core with no serious or critical violation, the confirmation dialog, and an admin
 * API call as the console's own script makes it (session cookie, per-session token, same origin).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as OTPAuth from 'otpauth';
import type { Page } from 'playwright-core';
import { emailAndCode as sharedEmailAndCode, watchedPage } from '../fixtures.ts';
import type { Stack } from '../harness.ts';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export function consoleBrowser(stack: Stack) {
  /** Content Security Policy refusals any page reported (a test expects none). */
  const violations: string[] = [];

  /** A page in a context of its own (a User-Agent if given), its CSP refusals collected (fixtures.ts). */
  const freshPage = (userAgent?: string): Promise<Page> => watchedPage(stack.browser, violations, userAgent ? { userAgent } : {});
  /** The hosted page's email and code steps (fixtures.ts). */
  const emailAndCode = (page: Page, email: string) => sharedEmailAndCode(stack, page, email);

  /** The console's sign-in: /admin → hosted page, email code, TOTP enrollment (MFA is required), recovery codes → the console. */
  async function consoleSignIn(email: string): Promise<Page> {
    const page = await freshPage();
    await page.goto(`${stack.consoleUrl}/admin`);
    await page.getByRole('heading', { name: 'Sign in to Operator console' }).waitFor();
    await emailAndCode(page, email);
    await page.getByLabel('An authenticator app').waitFor();
    // One mailbox is one factor: the console never offers a code by email as the second step.
    assert.equal(await page.getByLabel('A code by email').count(), 0, 'the console offered email as the second factor');
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
    await page.waitForURL(`${stack.consoleUrl}/admin`);
    await page.locator('main[data-ready="dashboard"]').waitFor();
    return page;
  }

  async function view(page: Page, name: string, param = '') {
    await page.evaluate(() => document.querySelector('main')?.removeAttribute('data-ready'));
    const target = `${stack.consoleUrl}/admin#/${name}${param ? `/${param}` : ''}`;
    // The same address again changes no hash, so the console would not draw: load it afresh.
    if (page.url() === target) await page.reload();
    else await page.goto(target);
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

  /** An admin API call from the console page, as its script makes one: its status and answer. */
  const consoleApi = (page: Page, method: string, path: string, body?: unknown) =>
    page.evaluate(
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

  return { violations, freshPage, emailAndCode, consoleSignIn, view, noSeriousViolations, confirm, consoleApi };
}
