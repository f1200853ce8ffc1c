/**
 * The hosted pages in the user's language: /signin chosen by ui_locales (through /authorize)
 * and by Accept-Language, the logout and new-device pages likewise; `lang`, Content-Language,
 * the switcher, and no English message left on the page.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createPkcePair } from 'service-web';
import { loadLocales, SAME_AS_ENGLISH } from '../../src/i18n/locales.js';
import { en, type MessageKey } from '../../src/i18n/messages/en.js';
import { registerRawDevice, startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import { type App, appParams, authorize, CookieJar, registerApp } from '../support/oidc-helpers.js';

const locales = loadLocales();

/** Every English message of these keys (values filled in) that a page in another language must not contain. */
function englishLeft(html: string, prefixes: string[], values: Record<string, string> = {}): string[] {
  const keys = (Object.keys(en) as MessageKey[]).filter(
    (key) => prefixes.some((prefix) => key.startsWith(prefix)) && !SAME_AS_ENGLISH.has(key) && key !== 'lang.name',
  );
  const text = html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
  return keys
    .map((key) =>
      locales.text('en', key, {
        app: values.app ?? '',
        client: values.client ?? '',
        device: '',
        time: '',
        browser: 'Chrome',
        os: 'Linux',
        attempts: 2,
        seconds: 2,
      }),
    )
    .flatMap((message) => message.split(/[:.?!]\s|\{|\}/))
    .map((fragment) => fragment.trim())
    .filter((fragment) => fragment.length >= 12 && text.includes(fragment));
}

describe('hosted pages in the user’s language', () => {
  let service: TestService;
  let app: App;
  before(async () => {
    service = await startTestService({ testMode: true });
    app = await registerApp(service, 'Acme Wiki');
  });
  after(() => service.close());

  async function signInPage(extra: Record<string, string>, headers: Record<string, string> = {}) {
    const jar = new CookieJar();
    const started = await authorize(service, appParams(app.clientId, await createPkcePair(), extra), jar);
    assert.equal(started.status, 303);
    const response = await fetch(new URL(started.location ?? '', service.url), { headers: { cookie: jar.header(), ...headers } });
    jar.store(response);
    return { location: started.location ?? '', response, html: await response.text(), jar };
  }

  it('ui_locales=de on /authorize: the sign-in page is German, marked so, with no English left', async () => {
    const { location, response, html, jar } = await signInPage({ ui_locales: 'de' }, { 'accept-language': 'fr' });
    assert.match(location, /[?&]ui_locales=de(&|$)/, 'passed on to the page');
    assert.match(html, /<html lang="de">/);
    assert.equal(response.headers.get('content-language'), 'de');
    assert.match(html, /<title>Bei Acme Wiki anmelden<\/title>/);
    assert.match(html, /<label for="email">E-Mail-Adresse<\/label>/);
    assert.match(html, /<option value="de" lang="de" selected>Deutsch<\/option>/, 'the switcher shows the language');
    assert.deepEqual(englishLeft(html, ['hosted.', 'switcher.'], { app: 'Acme Wiki' }), []);
    const messages = JSON.parse(html.match(/<script type="application\/json" id="service-messages">(.*?)<\/script>/)?.[1] ?? '{}');
    assert.equal(
      messages['hosted.error.generic'],
      'Etwas ist schiefgegangen. Versuchen Sie es erneut.',
      "the script's messages are German",
    );
    assert.equal(jar.cookies.get('service_locale'), 'de', 'the page’s calls (and their mails) carry the language');
  });

  it('Accept-Language: fr: the sign-in page is French', async () => {
    const { html, response, jar } = await signInPage({}, { 'accept-language': 'fr-CA,fr;q=0.9,en;q=0.5' });
    assert.match(html, /<html lang="fr">/);
    assert.equal(response.headers.get('content-language'), 'fr');
    assert.match(html, /Se connecter à Acme Wiki/);
    assert.deepEqual(englishLeft(html, ['hosted.', 'switcher.'], { app: 'Acme Wiki' }), []);
    assert.equal(jar.cookies.get('service_locale'), undefined, 'no cookie: the browser’s own header goes with every call');
  });

  it('without a language the browser asks for: English', async () => {
    const { html } = await signInPage({}, { 'accept-language': 'ja' });
    assert.match(html, /<html lang="en">/);
    assert.match(html, /<title>Sign in to Acme Wiki<\/title>/);
  });

  it('keeps the message data block inert: no markup an operator message could close it with', async () => {
    const { html } = await signInPage({ ui_locales: 'es' });
    const block = html.match(/<script type="application\/json" id="service-messages">(.*?)<\/script>/s)?.[1] ?? '';
    assert.doesNotMatch(block, /[<>]/);
    assert.ok(JSON.parse(block)['hosted.title']);
  });

  it('the logout pages: Spanish by Accept-Language, German by ui_locales', async () => {
    const es = await fetch(`${service.url}/logout`, { headers: { 'accept-language': 'es' } });
    const esHtml = await es.text();
    assert.match(esHtml, /<html lang="es">/);
    assert.match(esHtml, /<h1>Ha cerrado la sesión<\/h1>/);
    assert.deepEqual(englishLeft(esHtml, ['page.logout.', 'switcher.']), []);
    const de = await fetch(`${service.url}/logout?ui_locales=de`, { headers: { 'accept-language': 'es' } });
    assert.match(await de.text(), /<h1>Sie sind abgemeldet<\/h1>/);
  });

  it('an error page: translated, the developers’ detail in English marked lang="en"', async () => {
    const response = await fetch(`${service.url}/authorize?client_id=nope&ui_locales=fr`);
    const html = await response.text();
    assert.equal(response.status, 400);
    assert.match(html, /<h1>Demande de connexion refusée<\/h1>/);
    assert.match(html, /<span lang="en">The application that sent you here is not registered with this service\.<\/span>/);
  });

  it('the new-device link’s page: German, the device named in German, its switcher returning to the link', async () => {
    const email = uniqueEmail('notice-de');
    await registerRawDevice(service, email, CHROME_LINUX);
    const [mail] = await service.ctx.mailbox.list(1, email);
    const link = mail?.text.match(/http:\/\/\S+\/devices\/not-me\?t=\S+/)?.[0];
    assert.ok(link, 'the mail carries the link');
    const html = await (await fetch(link, { headers: { 'accept-language': 'de' } })).text();
    assert.match(html, /<html lang="de">/);
    assert.match(html, /Ein neues Gerät hat sich bei <strong>Test App<\/strong> angemeldet: <strong>Chrome 130 unter Linux<\/strong>/);
    assert.match(html, /<button type="submit">Dieses Gerät abmelden<\/button>/);
    assert.match(html, new RegExp(`name="return" value="/devices/not-me\\?t=${new URL(link).searchParams.get('t')}"`));
    assert.deepEqual(englishLeft(html, ['page.notice.', 'switcher.', 'device.'], { client: 'Test App' }), []);
  });
});

const CHROME_LINUX = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36';
