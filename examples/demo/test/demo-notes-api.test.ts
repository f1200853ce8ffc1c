/**
 * Acme Notes' own API, in Chromium (issue 37): the demo registers an API with read:notes and a
 * role notes-reader granting it (as start.ts does); a signed-in user gets a token for the API
 * through the service's /authorize (`resource`, `read:notes`) and the page calls the backend's
 * /api/notes with it, which verifies it with service-oauth-client's verifyAccessToken:
 * - a user holding notes-reader sees the notes;
 * - a user without it sees "You lack read:notes" and the command that gives the role;
 * axe at phone size, and not one Content Security Policy violation.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { NOTES_CALLBACK_PATH, type RunningDemo, startDemo } from '../src/server.ts';
import { demoSignUp, emailAndCode, watchedPage } from './fixtures.ts';
import { freePort, SEND_WINDOW_MS, type Stack, screenshot, startStack } from './harness.ts';
import { assertAccessible, VIEWPORTS } from './visual.ts';

const NOTES_API = 'urn:acme:notes';

describe('Acme Notes calls its own API with an access token carrying read:notes, in a real browser', { timeout: 4 * 60_000 }, () => {
  let stack: Stack;
  let demo: RunningDemo;
  let origin: string;
  const violations: string[] = [];
  const run = Date.now().toString(36);

  before(async () => {
    stack = await startStack();
    await stack.idp('apis', 'create', '--identifier', NOTES_API, '--name', 'Acme Notes API', '--permissions', 'read:notes,write:notes');
    await stack.idp('roles', 'create', 'notes-reader', '--grant', `${NOTES_API}=read:notes`);
    const port = await freePort();
    origin = `http://localhost:${port}`;
    const keys = await stack.idp<{ clientId: string; publishableKey: string; secretKey: string }>(
      'clients',
      'create',
      '--name',
      'Acme Notes',
      '--origin',
      origin,
      '--redirect-uri',
      `${origin}${NOTES_CALLBACK_PATH}`,
    );
    demo = await startDemo({
      serviceUrl: stack.serviceUrl,
      publicOrigin: origin,
      ...keys,
      notesApi: NOTES_API,
      port,
      log: () => undefined,
    });
  });
  after(async () => {
    await demo?.close();
    await stack?.close();
  });

  /** A new account at Acme Notes (phone size), then a notes token through the hosted sign-in: the notes section once settled. */
  async function signUpAndGetNotesToken(email: string, beforeToken: () => Promise<unknown> = async () => undefined): Promise<Page> {
    const page = await watchedPage(stack.browser, violations, { viewport: VIEWPORTS.phone });
    await page.goto(origin);
    await page.waitForSelector('#app[data-ready="true"]');
    await demoSignUp(stack, page, email, origin);
    await page.waitForSelector('#notes[data-state="no-token"]');
    await beforeToken();
    // One code per address per send window (harness.ts): the hosted sign-in sends the second.
    const [last] = await stack.mails(email);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, (last?.createdAt ?? 0) + SEND_WINDOW_MS - Date.now())));
    await page.getByRole('link', { name: 'Get a notes token' }).click();
    // The service's hosted sign-in (its own origin: a new device there), the address already filled by login_hint.
    await emailAndCode(stack, page, email);
    await page.waitForURL(`${origin}/account#notes`);
    await page.waitForSelector('#notes:not([data-state="loading"]):not([data-state="no-token"])');
    return page;
  }

  it('a user holding notes-reader sees the notes the API served to their token', async () => {
    const email = `notes.reader.${run}@example.com`;
    const page = await signUpAndGetNotesToken(email, () => stack.cli('users', 'roles', 'add', email, 'notes-reader'));
    assert.equal(await page.getAttribute('#notes', 'data-state'), 'notes');
    assert.match((await page.textContent('#notes-status')) ?? '', /carries read:notes/);
    const notes = await page.locator('#notes-list li strong').allTextContents();
    assert.deepEqual(notes, ['Welcome to Acme Notes', 'Groceries']);
    await screenshot(page, 'demo-notes-api-reader');
    await assertAccessible(page, 'the account page with notes (phone)');
  });

  it('a user without the role is told they lack read:notes, and how an operator gives it', async () => {
    const email = `notes.none.${run}@example.com`;
    const page = await signUpAndGetNotesToken(email);
    assert.equal(await page.getAttribute('#notes', 'data-state'), 'forbidden');
    assert.match((await page.textContent('#notes-status')) ?? '', /You lack read:notes/);
    assert.equal(await page.textContent('#notes-command code'), `npx service-idp users roles add ${email} notes-reader`);
    assert.equal(await page.locator('#notes-list').isVisible(), false);
    // The API itself: 403 insufficient_scope with its challenge, to this very token; 401 without one.
    const token = await page.evaluate(async () => ((await (await fetch('/api/me')).json()) as { notesToken: string }).notesToken);
    const refused = await fetch(`${origin}/api/notes`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(refused.status, 403);
    assert.match(refused.headers.get('www-authenticate') ?? '', /error="insufficient_scope".*scope="read:notes"/);
    assert.equal((await fetch(`${origin}/api/notes`)).status, 401);
    await screenshot(page, 'demo-notes-api-forbidden');
    await assertAccessible(page, 'the account page without read:notes (phone)');
  });

  it('met no Content Security Policy violation', () => {
    assert.deepEqual(violations, []);
  });
});
