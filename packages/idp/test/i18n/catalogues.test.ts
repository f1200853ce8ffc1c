/**
 * The built-in languages: every one defines every message key, none leaves a message in English
 * (the documented exceptions aside), every message parses and uses exactly the values and tags
 * of its English original, and every key the hosted page asks for exists.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { IntlMessageFormat } from 'intl-messageformat';
import { BUILT_IN_CATALOGUES, DEFAULT_LOCALE, loadLocales, preferred, SAME_AS_ENGLISH } from '../../src/i18n/locales.js';
import { en, type MessageKey } from '../../src/i18n/messages/en.js';

const KEYS = Object.keys(en) as MessageKey[];
const hostedSrc = new URL('../../../hosted/src/', import.meta.url);

describe('the language catalogues', () => {
  it('ship English, French, German and Spanish, each with every key', () => {
    assert.deepEqual(Object.keys(BUILT_IN_CATALOGUES).sort(), ['de', 'en', 'es', 'fr']);
    for (const [tag, catalogue] of Object.entries(BUILT_IN_CATALOGUES)) {
      assert.deepEqual(Object.keys(catalogue).sort(), [...KEYS].sort(), `${tag} defines exactly the English keys`);
    }
  });

  it('leave nothing in English but the documented exceptions', () => {
    for (const [tag, catalogue] of Object.entries(BUILT_IN_CATALOGUES)) {
      if (tag === DEFAULT_LOCALE) continue;
      const same = KEYS.filter((key) => catalogue[key] === en[key] && !SAME_AS_ENGLISH.has(key));
      assert.deepEqual(same, [], `${tag}: messages left in English`);
    }
  });

  it('load without a warning: every message parses and uses only its English values and tags', () => {
    const warnings: string[] = [];
    loadLocales(undefined, (line) => warnings.push(line));
    assert.deepEqual(warnings, []);
  });

  it('format plurals per language', () => {
    const locales = loadLocales();
    const left = (lang: string, attempts: number) => locales.text(lang, 'hosted.error.INVALID_OTP.left', { attempts });
    assert.equal(left('en', 1), 'That code is not right. You can try 1 more time.');
    assert.equal(left('en', 3), 'That code is not right. You can try 3 more times.');
    assert.equal(left('fr', 1), 'Ce code n’est pas le bon. Il vous reste 1 essai.');
    assert.equal(left('fr', 2), 'Ce code n’est pas le bon. Il vous reste 2 essais.');
    assert.equal(left('de', 1), 'Dieser Code ist nicht richtig. Sie haben noch 1 Versuch.');
    assert.equal(left('es', 4), 'Ese código no es correcto. Le quedan 4 intentos.');
    assert.equal(left('en', 0), 'That code is not right. Ask for a new one.');
  });

  it('escape values and text in HTML, and render tags as asked', () => {
    const locales = loadLocales();
    const html = locales.html(
      'en',
      'page.notice.what',
      { client: '<script>', device: 'A & B', time: 't' },
      { b: ['<strong>', '</strong>'] },
    );
    assert.equal(html, 'A new device signed in to <strong>&lt;script&gt;</strong>: <strong>A &amp; B</strong>, on t.');
  });

  it('name every key the hosted page says (its script and its HTML)', () => {
    const files = readdirSync(hostedSrc).filter((name) => name.endsWith('.ts') || name.endsWith('.html'));
    const used = new Set<string>();
    for (const file of files) {
      const source = readFileSync(new URL(file, hostedSrc), 'utf8');
      for (const [, key] of source.matchAll(/\bt\('([\w.-]+)'/g)) used.add(key as string);
      for (const [, key] of source.matchAll(/\{\{t:([\w.-]+)\}\}/g)) used.add(key as string);
      for (const [, key] of source.matchAll(/'(hosted\.[\w.-]+)'/g)) used.add(key as string);
    }
    assert.ok(used.size > 30, `found the page's keys (${used.size})`);
    for (const key of used) assert.ok(key in en, `${key} is a message`);
    // Template keys (hosted.method.${m}, hosted.error.${status}) are built from these lists.
    for (const method of ['email', 'sms', 'totp', 'passkey']) assert.ok(`hosted.method.${method}` in en);
    for (const status of ['INVALID_EMAIL', 'INVALID_REQUEST', 'OTP_EXPIRED', 'SESSION_EXPIRED', 'ACCOUNT_LOCKED', 'NETWORK_ERROR'])
      assert.ok(`hosted.error.${status}` in en, status);
  });

  it('each parse on their own (intl-messageformat, as the page formats them)', () => {
    for (const [tag, catalogue] of Object.entries(BUILT_IN_CATALOGUES))
      for (const key of KEYS) assert.doesNotThrow(() => new IntlMessageFormat(catalogue[key], tag), `${tag} ${key}`);
  });
});

describe('choosing the language', () => {
  const locales = loadLocales();
  it('takes ui_locales, then the browser’s choice, then the saved one, then Accept-Language, then English', () => {
    const all = { uiLocales: 'xx de', chosen: 'es', saved: 'fr', acceptLanguage: 'fr-CH, en;q=0.5' };
    assert.equal(locales.negotiate(all), 'de');
    assert.equal(locales.negotiate({ ...all, uiLocales: 'xx' }), 'es');
    assert.equal(locales.negotiate({ saved: 'fr', acceptLanguage: 'de' }), 'fr');
    assert.equal(locales.negotiate({ acceptLanguage: 'pt-BR, de-AT;q=0.8, fr;q=0.9' }), 'fr');
    assert.equal(locales.negotiate({ acceptLanguage: 'pt, ja' }), 'en');
    assert.equal(locales.negotiate({}), 'en');
  });

  it('reads Accept-Language by weight, leaving out q=0 and *', () => {
    assert.deepEqual(preferred('de;q=0.5, fr, es;q=0, *;q=0.9, en-GB;q=0.7'), ['fr', 'en-GB', 'de']);
    assert.deepEqual(preferred(undefined), []);
  });
});
