import { requestApp } from '../http/request-app.js';
import type { Locales } from '../i18n/locales.js';
import { createLocalizedMailer } from '../mail/localized-mailer.js';
import type { Mailer, OutgoingMail } from '../mail/mailer.js';
import type { Brand } from './service.js';

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ENTITIES[c] as string);

/**
 * Sends every mail as its application: the one the request that causes it acts for
 * (http/request-app.ts: for the hosted pages the requesting application, never the built-in
 * client), else the service's product. The From shows the application's mail sender name (the
 * address stays the configured one); the HTML part opens with its logo (an absolute URL on the
 * issuer, the name as `alt` for readers that block images) and takes its accent colour; the
 * plain-text part is left as written. An operator's HTML override is branded only if it is a
 * whole document (it has a `<body>`); a fragment is sent as written.
 */
export function createBrandedMailer(
  inner: Mailer,
  deps: { brandOf: (app: { id: string; name: string } | undefined) => Promise<Brand>; issuer: string },
): Mailer {
  return {
    async send(mail: OutgoingMail) {
      const brand = await deps.brandOf(requestApp()).catch(() => undefined);
      if (!brand) return inner.send(mail);
      return inner.send({
        ...mail,
        ...(brand.mailSenderName && !mail.senderName ? { senderName: brand.mailSenderName } : {}),
        html: brandHtml(mail.html, brand, deps.issuer),
      });
    },
    describe: () => inner.describe(),
    close: () => inner.close(),
  };
}

/** The HTML part with the brand's header (logo and name) after `<body…>` and its accent on the top rule and the code. */
export function brandHtml(html: string, brand: Brand, issuer: string): string {
  const accent = brand.accent ?? '#0a64d8';
  const logo = brand.logoPath
    ? `<img src="${escapeHtml(new URL(brand.logoPath, issuer).href)}" alt="${escapeHtml(brand.name)}" height="48" style="max-height:48px;width:auto;vertical-align:middle"> `
    : '';
  const header = `<div style="border-top:4px solid ${accent};padding:12px 0 4px">${logo}<strong style="font-size:18px;vertical-align:middle">${escapeHtml(brand.name)}</strong></div>\n`;
  // A fragment (an operator's HTML override without a <body>) is sent as written.
  const body = /<body[^>]*>\n?/i.exec(html);
  if (!body) return html;
  const withHeader = html.replace(body[0], `${body[0]}${header}`);
  return withHeader.replace('letter-spacing:6px;font-weight:bold"', `letter-spacing:6px;font-weight:bold;color:${accent}"`);
}

/** The display name (else client name) of the application the current request acts for: what mails call it (mail/localized-mailer.ts). */
export const requestAppName = (brandOf: (app: { id: string; name: string }) => Promise<Brand>) => async (): Promise<string | undefined> => {
  const app = requestApp();
  return app ? (await brandOf(app)).name : undefined;
};

/**
 * The service's mailer: localized first (the reader's language, the app named by its display
 * name), then branded as the request's application, then the transport.
 */
export function createAppMailer(
  transport: Mailer,
  deps: {
    locales: Locales;
    issuer: string;
    brandOf: (app: { id: string; name: string } | undefined) => Promise<Brand>;
    savedLocale: (email: string) => Promise<string | undefined>;
  },
): Mailer {
  // One brand lookup per request's application, shared by the two layers (the app object lives as long as its request).
  const looked = new WeakMap<object, Promise<Brand>>();
  const brandOf = (app: { id: string; name: string } | undefined): Promise<Brand> => {
    if (!app) return deps.brandOf(app);
    const known = looked.get(app) ?? deps.brandOf(app);
    looked.set(app, known);
    return known;
  };
  const branded = createBrandedMailer(transport, { brandOf, issuer: deps.issuer });
  return createLocalizedMailer(branded, { locales: deps.locales, savedLocale: deps.savedLocale, appName: requestAppName(brandOf) });
}
