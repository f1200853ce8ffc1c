/**
 * The operator's languages folder (SERVICE_IDP_LOCALES): a new language, an override of a
 * built-in one, a language with missing keys (English, warned once), and the files that stop
 * the start with one clear line.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { loadLocales } from '../../src/i18n/locales.js';
import { en } from '../../src/i18n/messages/en.js';
import { startTestService } from '../support/helpers.js';

describe('the languages folder', () => {
  const dirs: string[] = [];
  const folder = (files: Record<string, string>) => {
    const dir = mkdtempSync(join(tmpdir(), 'locales-'));
    dirs.push(dir);
    for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
    return dir;
  };
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('adds a language: its messages where it has them, English for the rest, warned once', () => {
    const warnings: string[] = [];
    const locales = loadLocales(
      folder({ 'it.json': JSON.stringify({ 'lang.name': 'Italiano', 'hosted.title': 'Accedi a {app}' }) }),
      (line) => warnings.push(line),
    );
    assert.ok(locales.supported.includes('it'));
    assert.equal(locales.negotiate({ acceptLanguage: 'it-IT' }), 'it');
    assert.equal(locales.text('it', 'hosted.title', { app: 'Wiki' }), 'Accedi a Wiki');
    assert.equal(locales.text('it', 'hosted.continue'), 'Continue', 'a missing key is English');
    assert.equal(warnings.length, 1, warnings.join('\n'));
    assert.match(
      warnings[0] as string,
      new RegExp(`^locale it \\(.*it\\.json\\): ${Object.keys(en).length - 2} of ${Object.keys(en).length} messages missing`),
    );
  });

  it('overrides one message of a built-in language and keeps the others', () => {
    const locales = loadLocales(folder({ 'fr.json': JSON.stringify({ 'hosted.continue': 'Suivant' }) }));
    assert.equal(locales.text('fr', 'hosted.continue'), 'Suivant');
    assert.equal(locales.text('fr', 'hosted.verify'), 'Vérifier');
  });

  it('refuses a file that is not JSON, a message that is not ICU, a value or tag of its own, a bad name', () => {
    assert.throws(
      () => loadLocales(folder({ 'fr.json': '{ "hosted.continue": ' })),
      /^ConfigError: locale file .*fr\.json is not valid JSON/,
    );
    assert.throws(
      () => loadLocales(folder({ 'de.json': JSON.stringify({ 'hosted.title': 'Bei {app anmelden' }) })),
      /locale file .*de\.json: the message hosted\.title is not ICU MessageFormat/,
    );
    assert.throws(
      () => loadLocales(folder({ 'es.json': JSON.stringify({ 'hosted.title': 'Entrar en {aplicacion}' }) })),
      /locale file .*es\.json: the message hosted\.title uses arg aplicacion, which it does not have/,
    );
    assert.throws(
      () => loadLocales(folder({ 'es.json': JSON.stringify({ 'hosted.continue': '<img>x</img>' }) })),
      /hosted\.continue uses tag img/,
    );
    assert.throws(() => loadLocales(folder({ 'fr.json': JSON.stringify({ 'hosted.continue': 3 }) })), /hosted\.continue is not a string/);
    assert.throws(() => loadLocales(folder({ 'not a tag!.json': '{}' })), /its name is not a language tag/);
  });

  it('stops the service at start on a malformed file, with one line', async () => {
    const dir = folder({ 'fr.json': '[1,2' });
    await assert.rejects(startTestService({ env: { SERVICE_IDP_LOCALES: dir } }), (error: Error) => {
      assert.match(error.message, /^locale file .*fr\.json is not valid JSON/);
      assert.doesNotMatch(error.message, /\n/);
      return true;
    });
  });
});
