import type { FastifyReply } from 'fastify';
import { Paths } from 'service-protocol';

/**
 * The policy of every page the service renders itself (the hosted sign-in, logout and
 * "this wasn't me" pages): our own files only, no inline script or style, never framed
 * (clickjacking), forms and calls only to this origin.
 */
export const PAGE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/**
 * `csp` that also lets a CAPTCHA widget in: its script, the frame it renders, and (hCaptcha)
 * its styles and calls, from `origins` (otp/send-captcha.ts captchaOrigins). Only the hosted
 * sign-in page, and only when the operator configured a CAPTCHA, widens its policy so.
 */
export function cspWithCaptcha(csp: string, origins: readonly string[]): string {
  const list = origins.join(' ');
  return `${csp
    .replace("script-src 'self'", `script-src 'self' ${list}`)
    .replace("style-src 'self'", `style-src 'self' ${list}`)
    .replace("connect-src 'self'", `connect-src 'self' ${list}`)}; frame-src ${list}`;
}

/** A redirect target as a CSP source: its origin, or a private-use scheme (RFC 8252 7.1). */
export function cspSource(uri: string): string {
  const url = new URL(uri);
  return url.protocol === 'https:' || url.protocol === 'http:' ? url.origin : url.protocol;
}

/** PAGE_CSP whose forms may also go to `target` (a redirect URI the page posts or returns to). */
export const cspWithFormTarget = (target: string) => PAGE_CSP.replace("form-action 'self'", `form-action 'self' ${cspSource(target)}`);

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text as HTML text or attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c] as string);
}

/** What the switcher needs of the service's languages (i18n/locales.ts `Locales`; http/ stays below i18n/). */
export interface SwitcherLocales {
  readonly supported: readonly string[];
  text(locale: string, key: 'lang.name' | 'switcher.label' | 'switcher.submit'): string;
}

/** The language a page is shown in, and where its switcher returns (a path of this service). */
export interface PageLanguage {
  locale: string;
  locales: SwitcherLocales;
  returnTo: string;
}

/**
 * The language switcher: a plain form (it works without script) posting to /locale, which
 * remembers the choice and sends the browser back to `returnTo`. Each language is named in
 * itself, marked with its `lang` for screen readers.
 */
export function switcherHtml({ locale, locales, returnTo }: PageLanguage): string {
  const options = locales.supported
    .map(
      (tag) =>
        `<option value="${escapeHtml(tag)}" lang="${escapeHtml(tag)}"${tag === locale ? ' selected' : ''}>${escapeHtml(locales.text(tag, 'lang.name'))}</option>`,
    )
    .join('');
  const t = (key: 'switcher.label' | 'switcher.submit') => escapeHtml(locales.text(locale, key));
  return (
    `<footer><form class="switcher" method="post" action="${Paths.locale}"><label for="switcher-locale">${t('switcher.label')}</label>` +
    `<select id="switcher-locale" name="locale">${options}</select><input type="hidden" name="return" value="${escapeHtml(returnTo)}">` +
    `<button type="submit" class="secondary">${t('switcher.submit')}</button></form></footer>`
  );
}

/** Who a page speaks for: the application (its logo and name above the heading, its accent stylesheet), or the product (its name). */
export interface PageBrand {
  name: string;
  logoPath: string | null;
  stylesheetPath: string | null;
}

/**
 * A server-rendered page under PAGE_CSP (or `csp`, a widening of it that a route names), with
 * `X-Frame-Options: DENY`, never cached, styled by the hosted pages' stylesheet, in `language`
 * with its switcher (without `language`: English and no switcher, the operators' console).
 * `main` is HTML whose text the caller has escaped; `brand`: the application's look, where one is known.
 */
export function sendPage(
  reply: FastifyReply,
  status: number,
  title: string,
  main: string,
  language?: PageLanguage,
  csp = PAGE_CSP,
  brand?: PageBrand,
) {
  const styles = brand?.stylesheetPath ? `<link rel="stylesheet" href="${escapeHtml(brand.stylesheetPath)}">` : '';
  const logo = brand?.logoPath ? `<img class="brand-logo" src="${escapeHtml(brand.logoPath)}" alt="">` : '';
  const header = brand ? `<div class="brand">${logo}<span>${escapeHtml(brand.name)}</span></div>` : '';
  const lang = language?.locale ?? 'en';
  const switcher = language ? switcherHtml(language) : '';
  return sendHtml(
    reply,
    `<!doctype html>\n<html lang="${escapeHtml(lang)}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title><link rel="stylesheet" href="${Paths.signIn}/signin.css">${styles}</head><body><main>${header}${main}</main>${switcher}</body></html>\n`,
    { status, csp, locale: lang },
  );
}

/**
 * Sends a whole HTML document with the headers every page of the service carries, the one place
 * they are set (server-rendered pages above, the hosted sign-in page, the console's shell, the
 * development mailbox): its CSP (PAGE_CSP unless the route names another), never framed, never
 * cached, its language, and a referrer policy that keeps the origin (no-referrer, helmet's
 * default, makes a browser send `Origin: null` on a form's POST, which the CSRF checks refuse).
 */
export function sendHtml(reply: FastifyReply, html: string, { status = 200, csp = PAGE_CSP, locale = 'en' } = {}) {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('content-security-policy', csp)
    .header('x-frame-options', 'DENY')
    .header('content-language', locale)
    .header('referrer-policy', 'strict-origin')
    .send(html);
}
