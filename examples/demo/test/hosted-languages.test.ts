/**
 * The hosted pages in the user's language, in a real browser (issue 23):
 * - an app's `ui_locales=de`: the sign-in page is German (`lang`, every text, the script's
 *   messages), the email code's mail is German too, and no English message is left anywhere in
 *   the document, hidden steps included;
 * - a French browser (Accept-Language): the page is French, and a wrong code is said in French
 *   with its plural ("Il vous reste 4 essais.");
 * - the switcher works with scripts off (a plain form): German → Spanish, and it stays;
 * - axe-core finds no serious or critical violation on the hosted pages (sign-in, its code step,
 *   the signed-out page, an error page, the new-device link's page) at desktop and phone sizes;
 * - and no Content Security Policy violation on the way.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { watchedPage } from './fixtures.ts';
import { type Stack, screenshot, startStack } from './harness.ts';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const VIEWPORTS = { desktop: { width: 1280, height: 800 }, phone: { width: 375, height: 667 } };
const REDIRECT = 'http://127.0.0.1:9/callback';

describe('the hosted pages in the user’s language, in a real browser', { timeout: 5 * 60_000 }, () => {
  let stack: Stack;
  let clientId: string;
  /** The English messages of the hosted page (from the service itself), split into fragments. */
  let english: string[];
  const contexts: BrowserContext[] = [];
  const violations: string[] = [];
  const run = Date.now().toString(36);

  before(async () => {
    stack = await startStack();
    ({ clientId } = await stack.idp<{ clientId: string }>('clients', 'create', '--name', 'Acme Wiki', '--redirect-uri', REDIRECT));
    english = await englishFragments();
  });
  after(async () => {
    for (const context of contexts) await context.close();
    await stack?.close();
    assert.deepEqual(violations, [], 'no Content Security Policy violation');
  });

  function authorizeUrl(extra: Record<string, string> = {}) {
    const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      scope: 'openid',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      ...extra,
    });
    return `${stack.serviceUrl}/authorize?${query}`;
  }

  /** The English page's messages (its script's data block), cut at punctuation and values: what must not show elsewhere. */
  async function englishFragments(): Promise<string[]> {
    const response = await fetch(authorizeUrl(), { redirect: 'manual' });
    const cookie = response.headers
      .getSetCookie()
      .map((line) => line.split(';')[0])
      .join('; ');
    const html = await (await fetch(new URL(response.headers.get('location') ?? '', stack.serviceUrl), { headers: { cookie } })).text();
    const block = html.match(/<script type="application\/json" id="service-messages">(.*?)<\/script>/s)?.[1] ?? '{}';
    const messages = Object.values(JSON.parse(block) as Record<string, string>);
    return messages
      .flatMap((message) => message.split(/<\/?\w+>|\{[^}]*\}|[:.?!,;()]/))
      .map((fragment) => fragment.trim())
      .filter((fragment) => fragment.length >= 8);
  }

  async function freshPage(options: { locale?: string; javaScriptEnabled?: boolean } = {}): Promise<Page> {
    const page = await watchedPage(stack.browser, violations, options);
    contexts.push(page.context());
    return page;
  }

  /** Every English fragment found in the whole document (hidden steps, attributes read out by screen readers included). */
  async function englishOn(page: Page): Promise<string[]> {
    const text = await page.evaluate(() => {
      const labels = [...document.querySelectorAll('[aria-label]')].map((element) => element.getAttribute('aria-label'));
      return `${document.title} ${document.body.textContent} ${labels.join(' ')}`.replace(/\s+/g, ' ');
    });
    // Whole words only: the French "Continuer" is no English "Continue".
    const word = (fragment: string) => new RegExp(`(?<!\\p{L})${fragment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?!\\p{L})`, 'u');
    return english.filter((fragment) => word(fragment).test(text));
  }

  /** axe-core's serious and critical violations on the page as it is (run through DevTools: the page's CSP is untouched). */
  async function accessibilityProblems(page: Page, name: string): Promise<string[]> {
    const problems: string[] = [];
    for (const [size, viewport] of Object.entries(VIEWPORTS)) {
      await page.setViewportSize(viewport);
      await page.evaluate(AXE);
      const found = await page.evaluate(async () => {
        type Axe = { run(): Promise<{ violations: { id: string; impact: string }[] }> };
        const result = await (window as unknown as { axe: Axe }).axe.run();
        return result.violations.map((violation) => ({ id: violation.id, impact: violation.impact }));
      });
      for (const violation of found)
        if (violation.impact === 'serious' || violation.impact === 'critical') problems.push(`${name} (${size}): ${violation.id}`);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
      if (overflow) problems.push(`${name} (${size}): wider than the screen`);
    }
    await page.setViewportSize(VIEWPORTS.desktop);
    return problems;
  }

  it('ui_locales=de: a German page, a German mail, no English left', async () => {
    const email = `de.${run}@example.com`;
    const page = await freshPage();
    await page.goto(authorizeUrl({ ui_locales: 'de' }));
    await page.getByRole('heading', { name: 'Bei Acme Wiki anmelden' }).waitFor();
    assert.equal(await page.getAttribute('html', 'lang'), 'de');
    assert.deepEqual(await englishOn(page), []);
    await page.getByLabel('E-Mail-Adresse').fill(email);
    const seen = (await stack.mails(email)).length;
    await page.getByRole('button', { name: 'Weiter' }).click();
    const code = page.getByLabel(/6-stellige Code, den wir an/);
    await code.waitFor();
    const [mail] = await stack.mails(email);
    assert.equal(mail?.subject, 'Ihr Anmeldecode für Acme Wiki', 'the mail speaks the page’s language');
    await code.fill('000000');
    await code.press('Enter');
    await page.getByText(/Dieser Code ist nicht richtig\. Sie haben noch \d Versuche\./).waitFor();
    assert.deepEqual(await englishOn(page), [], 'after a step and a refusal too');
    await screenshot(page, 'hosted-signin-de');
    await code.fill(await stack.nextMailOtp(email, seen));
    const [back] = await Promise.all([page.waitForRequest((request) => request.url().startsWith(REDIRECT)), code.press('Enter')]);
    assert.ok(new URL(back.url()).searchParams.get('code'), 'signed in: back to the app with its code');
  });

  it('a French browser (Accept-Language): French, with plurals', async () => {
    const email = `fr.${run}@example.com`;
    const page = await freshPage({ locale: 'fr-FR' });
    await page.goto(authorizeUrl());
    await page.getByRole('heading', { name: 'Se connecter à Acme Wiki' }).waitFor();
    assert.equal(await page.getAttribute('html', 'lang'), 'fr');
    assert.deepEqual(await englishOn(page), []);
    await page.getByLabel('Adresse e-mail').fill(email);
    await page.getByRole('button', { name: 'Continuer' }).click();
    const code = page.getByLabel(/Le code à 6 chiffres envoyé par e-mail à/);
    await code.fill('000000');
    await code.press('Enter');
    await page.getByText('Ce code n’est pas le bon. Il vous reste 4 essais.').waitFor();
    assert.equal((await stack.mails(email))[0]?.subject, 'Votre code de connexion Acme Wiki');
  });

  it('the switcher works with scripts off, and the choice stays', async () => {
    const page = await freshPage({ javaScriptEnabled: false });
    await page.goto(authorizeUrl({ ui_locales: 'de' }));
    await page.getByRole('heading', { name: 'Bei Acme Wiki anmelden' }).waitFor();
    await page.getByLabel('Sprache').selectOption('es');
    await page.getByRole('button', { name: 'Sprache ändern' }).click();
    await page.getByRole('heading', { name: 'Iniciar sesión en Acme Wiki' }).waitFor();
    assert.equal(await page.getAttribute('html', 'lang'), 'es');
    assert.ok(page.url().includes('/signin?request='), 'back on the same sign-in');
    assert.doesNotMatch(page.url(), /ui_locales/);
    await page.goto(`${stack.serviceUrl}/logout`);
    await page.getByRole('heading', { name: 'Ha cerrado la sesión' }).waitFor();
  });

  it('axe-core: no serious or critical violation on the hosted pages, desktop and phone', async () => {
    const problems: string[] = [];
    const page = await freshPage();
    await page.goto(authorizeUrl());
    await page.getByRole('heading', { name: 'Sign in to Acme Wiki' }).waitFor();
    problems.push(...(await accessibilityProblems(page, 'sign-in')));
    await page.getByLabel('Email address').fill(`axe.${run}@example.com`);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByLabel(/6-digit code we emailed/).waitFor();
    problems.push(...(await accessibilityProblems(page, 'sign-in code')));
    await page.goto(`${stack.serviceUrl}/logout?ui_locales=fr`);
    problems.push(...(await accessibilityProblems(page, 'signed out')));
    await page.goto(`${stack.serviceUrl}/authorize?client_id=nobody`);
    problems.push(...(await accessibilityProblems(page, 'refused request')));
    const notice = (await stack.mails(`de.${run}@example.com`)).find((mail) => /\/devices\/not-me\?t=/.test(mail.text));
    const link = notice?.text.match(/http:\/\/\S+\/devices\/not-me\?t=\S+/)?.[0];
    assert.ok(link, 'the German sign-in mailed a new-device notice');
    await page.goto(link);
    problems.push(...(await accessibilityProblems(page, 'new-device link')));
    assert.deepEqual(problems, []);
  });
});
