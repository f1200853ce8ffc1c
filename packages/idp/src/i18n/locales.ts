import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { IntlMessageFormat } from 'intl-messageformat';
import { ConfigError } from '../errors.js';
import { de } from './messages/de.js';
import { type Catalogue, en, type MessageKey } from './messages/en.js';
import { es } from './messages/es.js';
import { fr } from './messages/fr.js';

/** The languages the service ships; an operator's folder (SERVICE_IDP_LOCALES) adds or overrides. */
export const BUILT_IN_CATALOGUES: Readonly<Record<string, Catalogue>> = { en, fr, de, es };
/** The language of last resort, and of every key a language lacks. */
export const DEFAULT_LOCALE = 'en';
/**
 * Keys whose text may be the same as the English one in another language (docs/operations.md):
 * a line made only of values.
 */
export const SAME_AS_ENGLISH: ReadonlySet<MessageKey> = new Set([
  'mail.new-device.device',
  'page.consent.permission',
  'page.account.org.invitation',
]);

/** Message values: strings are escaped in HTML; numbers drive plurals. */
export type Values = Record<string, string | number>;
/** A tag's HTML, as its opening and closing text (`<b>` → `['<strong>', '</strong>']`). */
export type HtmlTags = Record<string, readonly [string, string]>;

export interface Locales {
  /** The languages served, English first, then by tag. */
  readonly supported: readonly string[];
  /** The served language a tag names (exactly, or by its base language: `fr-CA` → `fr`), if any. */
  match(tag: string): string | undefined;
  /**
   * The language to show: the first of `uiLocales` (OIDC Core 3.1.2.1, space-separated) we
   * serve, then the browser's explicit choice (the switcher's cookie), then the user's saved
   * choice, then the best of `Accept-Language` (RFC 9110 12.5.4), then English.
   */
  negotiate(choice: { uiLocales?: string; chosen?: string; saved?: string; acceptLanguage?: string }): string;
  /** Plain text (pages' titles, mails' subjects and text parts); a tag becomes its content, or `textTags`' rendering of it. */
  text(locale: string, key: MessageKey, values?: Values, textTags?: Record<string, (content: string) => string>): string;
  /** HTML: the message's own text and every value escaped, each tag as `tags` gives it. */
  html(locale: string, key: MessageKey, values?: Values, tags?: HtmlTags): string;
  /** Every message whose key starts with `prefix`, in `locale` (English where it has none): what the hosted page's script gets. */
  messages(locale: string, prefix: string): Record<string, string>;
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ENTITIES[c] as string);

interface AstNode {
  type: number;
  value?: string;
  children?: AstNode[];
  options?: Record<string, { value: AstNode[] }>;
}
/** TYPE of @formatjs/icu-messageformat-parser: literal 0, pound 7, tag 8; the rest name an argument. */
const LITERAL = 0;
const POUND = 7;
const TAG = 8;

/** The argument and tag names a message uses (`arg:client`, `tag:b`). */
function namesIn(nodes: AstNode[], into = new Set<string>()): Set<string> {
  for (const node of nodes) {
    if (node.type === TAG) into.add(`tag:${node.value}`);
    else if (node.type !== LITERAL && node.type !== POUND) into.add(`arg:${node.value}`);
    if (node.children) namesIn(node.children, into);
    for (const option of Object.values(node.options ?? {})) namesIn(option.value, into);
  }
  return into;
}

/** One line for the operator: a language file that cannot be served. */
/** An operator's languages folder that cannot be used: a configuration error (exit 2 at start). */
class LocaleFileError extends ConfigError {}

/** An operator's `<tag>.json`: a flat object of message keys to ICU messages. */
function readOperatorFile(path: string): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new LocaleFileError(`locale file ${path} is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new LocaleFileError(`locale file ${path} must be one JSON object of message keys to messages`);
  for (const [key, value] of Object.entries(parsed))
    if (typeof value !== 'string') throw new LocaleFileError(`locale file ${path}: the message ${key} is not a string`);
  return parsed as Record<string, string>;
}

/** The languages in `dir` (SERVICE_IDP_LOCALES): `<BCP 47 tag>.json` each. */
function operatorCatalogues(dir: string): Map<string, { path: string; messages: Record<string, string> }> {
  const found = new Map<string, { path: string; messages: Record<string, string> }>();
  let files: string[];
  try {
    files = readdirSync(dir).filter((name) => name.endsWith('.json'));
  } catch (error) {
    throw new LocaleFileError(`the locales folder ${dir} cannot be read: ${(error as NodeJS.ErrnoException).code ?? error}`);
  }
  for (const file of files.sort()) {
    const path = join(dir, file);
    let tag: string | undefined;
    try {
      tag = Intl.getCanonicalLocales(file.slice(0, -'.json'.length))[0];
    } catch {}
    if (!tag) throw new LocaleFileError(`locale file ${path}: its name is not a language tag (such as it.json or pt-BR.json)`);
    found.set(tag.toLowerCase(), { path, messages: readOperatorFile(path) });
  }
  return found;
}

/**
 * The languages served: the built-in catalogues, with an operator's folder adding languages or
 * overriding messages of the built-in ones (`<tag>.json`, docs/operations.md). Checked once, at
 * start: a file that is not JSON, a message that does not parse as ICU MessageFormat, or one
 * that uses a value or tag the English message does not have, throws one line naming the file
 * and the key; a key a language lacks is shown in English and `warn`ed once per language.
 * `more`: messages beside the catalogues, per language (a factor's, factors/module.ts), which
 * the operator's files may override too.
 */
export function loadLocales(
  dir?: string,
  warn: (line: string) => void = () => {},
  more: Readonly<Record<string, Readonly<Record<string, string>>>> = {},
): Locales {
  const sources = new Map<string, { path: string; messages: Record<string, string> }>();
  for (const [tag, messages] of Object.entries(BUILT_IN_CATALOGUES))
    sources.set(tag, { path: `built-in ${tag}`, messages: { ...messages, ...more[tag] } });
  for (const [tag, file] of dir ? operatorCatalogues(dir) : []) {
    const base = sources.get(tag)?.messages ?? {};
    sources.set(tag, { path: file.path, messages: { ...base, ...file.messages } });
  }

  const englishTexts: Record<string, string> = { ...en, ...more.en };
  const keys = Object.keys(englishTexts) as MessageKey[];
  const compiled = new Map<string, Map<string, IntlMessageFormat>>();
  const englishNames = new Map<string, Set<string>>();
  for (const key of keys) englishNames.set(key, namesIn(new IntlMessageFormat(englishTexts[key] as string, 'en').getAst() as AstNode[]));
  for (const [tag, { path, messages }] of sources) {
    const formats = new Map<string, IntlMessageFormat>();
    const missing: string[] = [];
    for (const key of keys) {
      const message = messages[key];
      if (message === undefined) {
        missing.push(key);
        continue;
      }
      let format: IntlMessageFormat;
      try {
        format = new IntlMessageFormat(message, tag);
      } catch (error) {
        throw new LocaleFileError(`locale file ${path}: the message ${key} is not ICU MessageFormat (${(error as Error).message})`);
      }
      const allowed = englishNames.get(key) as Set<string>;
      const stray = [...namesIn(format.getAst() as AstNode[])].find((name) => !allowed.has(name));
      if (stray)
        throw new LocaleFileError(`locale file ${path}: the message ${key} uses ${stray.replace(':', ' ')}, which it does not have`);
      formats.set(key, format);
    }
    for (const key of Object.keys(messages))
      if (!englishNames.has(key)) warn(`locale ${tag} (${path}): ${key} is no message of this service and is ignored`);
    if (missing.length > 0)
      warn(
        `locale ${tag} (${path}): ${missing.length} of ${keys.length} messages missing, shown in English (${missing.slice(0, 5).join(', ')}…)`,
      );
    compiled.set(tag, formats);
  }
  const english = compiled.get(DEFAULT_LOCALE) as Map<string, IntlMessageFormat>;
  const supported = [DEFAULT_LOCALE, ...[...compiled.keys()].filter((tag) => tag !== DEFAULT_LOCALE).sort()];
  const formatOf = (locale: string, key: MessageKey) => compiled.get(locale)?.get(key) ?? (english.get(key) as IntlMessageFormat);
  const joined = (result: unknown) => (Array.isArray(result) ? result.join('') : String(result));

  const match = (tag: string): string | undefined => {
    const lower = tag.trim().toLowerCase();
    if (!lower) return undefined;
    if (compiled.has(lower)) return lower;
    const base = lower.split('-')[0] as string;
    return compiled.has(base) ? base : supported.find((served) => served.split('-')[0] === base);
  };

  return {
    supported,
    match,
    negotiate({ uiLocales, chosen, saved, acceptLanguage }) {
      for (const tag of uiLocales?.split(' ') ?? []) {
        const found = match(tag);
        if (found) return found;
      }
      for (const tag of [chosen, saved]) {
        const found = tag ? match(tag) : undefined;
        if (found) return found;
      }
      for (const tag of preferred(acceptLanguage)) {
        const found = match(tag);
        if (found) return found;
      }
      return DEFAULT_LOCALE;
    },
    text(locale, key, values = {}, textTags = {}) {
      const tagged: Record<string, unknown> = { ...values };
      for (const name of namesIn(formatOf(locale, key).getAst() as AstNode[]))
        if (name.startsWith('tag:')) {
          const tag = name.slice(4);
          tagged[tag] = (chunks: unknown[]) => (textTags[tag] ?? ((content: string) => content))(chunks.join(''));
        }
      return joined(formatOf(locale, key).format(tagged as Values));
    },
    html(locale, key, values = {}, tags = {}) {
      // Values and tags go in as markers the escaping leaves alone, then become their HTML.
      const slots: string[] = [];
      const slot = (html: string) => `\uE000${slots.push(html) - 1}\uE000`;
      const marked: Record<string, unknown> = {};
      for (const [name, value] of Object.entries(values)) marked[name] = typeof value === 'string' ? slot(escapeHtml(value)) : value;
      for (const name of namesIn(formatOf(locale, key).getAst() as AstNode[]))
        if (name.startsWith('tag:')) {
          const [open, close] = tags[name.slice(4)] ?? ['', ''];
          marked[name.slice(4)] = (chunks: unknown[]) => `${slot(open)}${chunks.join('')}${slot(close)}`;
        }
      const text = joined(formatOf(locale, key).format(marked as Values));
      return escapeHtml(text).replace(/\uE000(\d+)\uE000/g, (_whole, index: string) => slots[Number(index)] as string);
    },
    messages(locale, prefix) {
      const out: Record<string, string> = {};
      const own = sources.get(locale)?.messages ?? {};
      for (const key of keys) if (key.startsWith(prefix)) out[key] = own[key] ?? en[key];
      return out;
    },
  };
}

/** Accept-Language's tags, most wanted first (q=0 and `*` left out). */
export function preferred(header: string | undefined): string[] {
  if (!header) return [];
  return header
    .split(',')
    .slice(0, 20)
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      const weight = q === undefined ? 1 : Number(q.slice(2));
      return { tag: tag.trim(), weight: Number.isFinite(weight) ? weight : 0, index };
    })
    .filter((entry) => entry.weight > 0 && entry.tag !== '' && entry.tag !== '*')
    .sort((a, b) => b.weight - a.weight || a.index - b.index)
    .map((entry) => entry.tag);
}
