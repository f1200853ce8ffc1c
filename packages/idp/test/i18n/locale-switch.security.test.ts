/**
 * Attacks on the language switcher (POST /locale): a cross-site form changing a signed-in
 * user's saved language (CSRF), the `return` field as an open redirect, a forged session cookie
 * saving a language on someone's account, and a language the service does not serve.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createPkcePair } from 'service-web';
import { startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import { type App, appParams, authorize, CookieJar, hostedBrowser, registerApp } from '../support/oidc-helpers.js';

describe('the language switcher', () => {
  let service: TestService;
  let app: App;
  before(async () => {
    service = await startTestService({ testMode: true });
    app = await registerApp(service, 'Acme Wiki');
  });
  after(() => service.close());

  const choose = (form: Record<string, string>, headers: Record<string, string> = {}) =>
    fetch(`${service.url}/locale`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: service.url, ...headers },
      body: new URLSearchParams(form),
    });

  /** A browser signed in to the service (its session cookie in the jar). */
  async function signedIn(email: string) {
    const browser = hostedBrowser(service);
    const started = await authorize(service, appParams(app.clientId, await createPkcePair()), browser.jar);
    await browser.signIn(started.location ?? '', email);
    assert.ok(browser.jar.cookies.has('service_session'), 'a service session');
    return browser.jar;
  }

  it('remembers the choice in the browser, and on the account of the signed-in user', async () => {
    const email = uniqueEmail('switch');
    const jar = await signedIn(email);
    const response = await choose({ locale: 'fr', return: '/logout?ui_locales=de&x=1' }, { cookie: jar.header() });
    assert.equal(response.status, 303);
    assert.equal(response.headers.get('location'), '/logout?x=1', 'back, without the ui_locales that would outrank the choice');
    assert.match(response.headers.get('set-cookie') ?? '', /^service_locale=fr; Path=\/; Max-Age=31536000; SameSite=Lax$/);
    assert.equal(await service.ctx.enabledUsers.localeOf(email), 'fr');
  });

  it('refuses a cross-site form (CSRF): no cookie, the saved language unchanged', async () => {
    const email = uniqueEmail('csrf');
    const jar = await signedIn(email);
    for (const origin of ['https://evil.example', 'null']) {
      const response = await choose({ locale: 'de', return: '/' }, { cookie: jar.header(), origin });
      assert.equal(response.status, 400, origin);
      assert.equal(response.headers.get('set-cookie'), null);
    }
    const noOrigin = await fetch(`${service.url}/locale`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
      body: 'locale=de',
    });
    assert.equal(noOrigin.status, 400);
    assert.equal(await service.ctx.enabledUsers.localeOf(email), undefined);
  });

  it('sends the browser only to a path of this service (no open redirect)', async () => {
    for (const target of ['//evil.example/x', 'https://evil.example/', '/\\evil.example', 'javascript:alert(1)', '/ x', '']) {
      const response = await choose({ locale: 'es', return: target });
      assert.equal(response.status, 303, target);
      assert.equal(response.headers.get('location'), '/', target);
    }
  });

  it('saves nothing for a forged or someone else’s unknown session cookie', async () => {
    const email = uniqueEmail('forged');
    await signedIn(email);
    const response = await choose({ locale: 'de' }, { cookie: 'service_session=forged-value-0123456789abcdef' });
    assert.equal(response.status, 303, 'the browser’s own choice still works');
    assert.equal(await service.ctx.enabledUsers.localeOf(email), undefined, 'no account touched');
  });

  it('refuses a language it does not serve, in a page (nothing set)', async () => {
    const response = await choose({ locale: 'xx' }, { 'accept-language': 'de' });
    assert.equal(response.status, 400);
    assert.equal(response.headers.get('set-cookie'), null);
    assert.match(await response.text(), /<h1>Diese Sprache ist nicht verfügbar\.<\/h1>/);
  });

  it('a switched browser sees its pages in the chosen language, over Accept-Language', async () => {
    const jar = new CookieJar();
    jar.store(await choose({ locale: 'es' }));
    const page = await fetch(`${service.url}/logout`, { headers: { cookie: jar.header(), 'accept-language': 'de' } });
    assert.match(await page.text(), /<html lang="es">/);
  });
});
