/**
 * The hosted consent page of a third-party client, in a real browser (issue 37): openid-client
 * asks for `read:notes` of a registered API; after the hosted sign-in Chromium lands on the
 * consent page, which
 * - names the app and lists what it asks as text (the email address, "Notes API: read:notes");
 * - has no serious or critical axe-core violation at a phone's size (375×667) and a desktop's,
 *   and is no wider than the screen;
 * - Allow: back at the app's redirect URI with a code, whose access token carries read:notes;
 * - Deny (prompt=consent asks again): back with error=access_denied and no code;
 * - a German browser (Accept-Language) gets the page in German;
 * - the account page lists the approved app with when it was allowed, passes axe-core
 *   at both sizes, and its Revoke access removes it: the app's next sign-in asks again (issue 39);
 * and no Content Security Policy violation on the way.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { authorizationRequest, callbackTokens, emailAndCode, type RelyingParty, registerRelyingParty, watchedPage } from './fixtures.ts';
import { type PageServer, type Stack, screenshot, servePages, startStack } from './harness.ts';
import { assertAccessible } from './visual.ts';

const NOTES = 'urn:acme:notes';
const SIZES = { phone: { width: 375, height: 667 }, desktop: { width: 1280, height: 800 } };
const ASKING = { scope: 'openid email read:notes', resource: NOTES };

describe('the consent page of a third-party client, in a real browser', { timeout: 5 * 60_000 }, () => {
  let stack: Stack;
  let rpPages: PageServer;
  let app: RelyingParty;
  let page: Page;
  const violations: string[] = [];
  const run = Date.now().toString(36);
  const email = `consent.${run}@example.com`;

  before(async () => {
    stack = await startStack();
    rpPages = await servePages();
    await stack.idp('apis', 'create', '--identifier', NOTES, '--name', 'Notes API', '--permissions', 'read:notes,write:notes');
    await stack.idp('roles', 'create', 'notes-reader', '--grant', `${NOTES}=read:notes`);
    app = await registerRelyingParty(stack, rpPages, 'Partner Planner', '/callback', { update: ['--third-party', 'yes'] });
    page = await watchedPage(stack.browser, violations);
  });
  after(async () => {
    await rpPages?.close();
    await stack?.close();
  });

  /** axe-core at a phone's size and a desktop's, and no sideways scrolling; leaves the page at the desktop size. */
  async function accessibleAtBothSizes(on: Page, name: string) {
    for (const [size, viewport] of Object.entries(SIZES)) {
      await on.setViewportSize(viewport);
      await assertAccessible(on, `${name} (${size})`);
      assert.equal(
        await on.evaluate(() => document.documentElement.scrollWidth > window.innerWidth),
        false,
        `${name} (${size}): wider than the screen`,
      );
    }
  }

  /** The list items of the consent page, as text. */
  const listed = (on: Page) => on.locator('ul.consent li').allTextContents();

  it('after the hosted sign-in, the consent page names the app and what it asks, accessibly', async () => {
    const { url } = await authorizationRequest(app, ASKING);
    await page.goto(url.href);
    await page.getByRole('heading', { name: 'Sign in to Partner Planner' }).waitFor();
    await emailAndCode(stack, page, email);
    await page.waitForURL(`${stack.serviceUrl}/signin/consent?request=**`);
    await page.getByRole('heading', { name: 'Partner Planner asks for access' }).waitFor();
    assert.equal(await page.getAttribute('html', 'lang'), 'en');
    assert.match((await page.textContent('main')) ?? '', /Partner Planner is an application of another company/);
    assert.deepEqual(await listed(page), ['See your email address', 'Notes API: read:notes']);
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    await page.getByRole('button', { name: 'Deny' }).waitFor();
    await screenshot(page, 'hosted-consent');
    await accessibleAtBothSizes(page, 'the consent page');
  });

  it('Allow: back at the app with a code, whose access token carries read:notes', async () => {
    // The permission reaches the token only if the user holds it (a role): given now, the user exists since the sign-in.
    await stack.cli('users', 'roles', 'add', email, 'notes-reader');
    const { url, expected } = await authorizationRequest(app, ASKING);
    await page.goto(url.href);
    // Nothing granted yet (the first page was left unanswered): the page again, from the session, no sign-in.
    await page.getByRole('heading', { name: 'Partner Planner asks for access' }).waitFor();
    await page.getByRole('button', { name: 'Allow' }).click();
    const tokens = await callbackTokens(page, app, expected);
    assert.equal(tokens.claims()?.email, email);
    assert.match(tokens.scope ?? '', /(^| )read:notes( |$)/);
    const access = JSON.parse(Buffer.from(tokens.access_token.split('.')[1] ?? '', 'base64url').toString());
    assert.equal(access.scope, 'read:notes');
    assert.ok([access.aud].flat().includes(NOTES), `audience ${access.aud}`);

    // Granted now: the next sign-in goes straight back to the app.
    const again = await authorizationRequest(app, ASKING);
    await page.goto(again.url.href);
    assert.ok((await callbackTokens(page, app, again.expected)).access_token);
  });

  it('Deny (prompt=consent asks again): back at the app with error=access_denied and no code', async () => {
    const { url, expected } = await authorizationRequest(app, { ...ASKING, prompt: 'consent' });
    await page.goto(url.href);
    await page.getByRole('heading', { name: 'Partner Planner asks for access' }).waitFor();
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.waitForURL(`${app.redirectUri}?**`);
    const params = new URL(page.url()).searchParams;
    assert.equal(params.get('error'), 'access_denied');
    assert.equal(params.get('state'), expected.expectedState);
    assert.equal(params.get('iss'), stack.serviceUrl);
    assert.equal(params.get('code'), null);
  });

  it('a German browser gets the consent page in German', async () => {
    const german = await watchedPage(stack.browser, violations, { locale: 'de-DE' });
    const someone = `consent.de.${run}@example.com`;
    const { url } = await authorizationRequest(app, { ...ASKING, login_hint: someone });
    await german.goto(url.href);
    await german.getByRole('heading', { name: 'Bei Partner Planner anmelden' }).waitFor();
    await emailAndCode(stack, german, someone, {
      labels: { email: 'E-Mail-Adresse', remember: 'Dieses Gerät merken', go: 'Weiter', otp: /6-stellige Code, den wir an/ },
    });
    await german.getByRole('heading', { name: 'Partner Planner bittet um Zugriff' }).waitFor();
    assert.equal(await german.getAttribute('html', 'lang'), 'de');
    assert.deepEqual(await listed(german), ['Ihre E-Mail-Adresse sehen', 'Notes API: read:notes']);
    await german.getByRole('button', { name: 'Erlauben' }).waitFor();
    await german.getByRole('button', { name: 'Ablehnen' }).waitFor();
    assert.match((await german.textContent('main')) ?? '', /jederzeit auf Ihrer Kontoseite widerrufen/);
    await screenshot(german, 'hosted-consent-de');
    await accessibleAtBothSizes(german, 'the German consent page');
    await german.context().close();
  });

  it('the account page lists the approved app, accessibly; Revoke access removes it and its next sign-in asks again', async () => {
    await page.goto(`${stack.serviceUrl}/account`);
    await page.getByRole('heading', { name: 'Your account', level: 1 }).waitFor();
    const approved = page.locator('li[data-consent]', { hasText: 'Partner Planner' });
    await approved.waitFor();
    // When it was allowed ("Last used" shows only for an app holding refresh tokens: this one asked no offline_access).
    assert.match((await approved.textContent()) ?? '', /Allowed \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/);
    assert.match((await approved.textContent()) ?? '', /Notes API: read:notes/);
    await screenshot(page, 'account-approved-apps');
    await accessibleAtBothSizes(page, 'the account page with an approved app');
    await approved.getByRole('button', { name: 'Revoke access' }).click();
    await page.getByRole('heading', { name: 'Your account', level: 1 }).waitFor();
    assert.equal(await page.locator('li[data-consent]').count(), 0, 'the app is no longer listed');
    await accessibleAtBothSizes(page, 'the account page after Revoke');

    const again = await authorizationRequest(app, ASKING);
    await page.goto(again.url.href);
    await page.getByRole('heading', { name: 'Partner Planner asks for access' }).waitFor();
  });

  it('met no Content Security Policy violation', () => {
    assert.deepEqual(violations, []);
  });
});
