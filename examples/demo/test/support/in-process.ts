/**
 * For browser tests that run the service in-process (a clock they can move, its database at
 * hand) rather than the built CLI of harness.ts: an app's authorization URL and the hosted
 * sign-in by email code, as a person does it in the page (dbsc.test.ts, session-key.test.ts).
 */
import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import type { RunningService } from 'service-idp';
import { createPkcePair } from 'service-web';

/** GET /authorize of `issuer` for a code-flow app (PKCE S256), with `extra` parameters (prompt=none). */
export async function authorizeUrl(issuer: string, app: { clientId: string; redirectUri: string }, extra: Record<string, string> = {}) {
  const pkce = await createPkcePair();
  const url = new URL(`${issuer}/authorize`);
  for (const [name, value] of Object.entries({
    response_type: 'code',
    client_id: app.clientId,
    redirect_uri: app.redirectUri,
    scope: 'openid email',
    state: randomBytes(8).toString('hex'),
    code_challenge: pkce.codeChallenge,
    code_challenge_method: 'S256',
    ...extra,
  }))
    url.searchParams.set(name, value);
  return url.href;
}

/**
 * Signs in on the hosted page `page` shows (after /authorize): the address, then the code from
 * the in-process service's mailbox; returns once the browser is back at `redirectUri`.
 */
export async function hostedEmailSignIn(page: Page, service: RunningService, email: string, redirectUri: string): Promise<void> {
  await page.getByLabel('Email address').fill(email);
  await page.getByRole('button', { name: 'Continue' }).click();
  const otp = page.getByLabel(/6-digit code we emailed/);
  await otp.waitFor();
  const [mail] = await service.ctx.mailbox.list(1, email);
  await otp.fill(mail?.text.match(/\b(\d{6})\b/)?.[1] ?? '');
  await otp.press('Enter');
  await page.waitForURL(`${redirectUri}?**`);
}
