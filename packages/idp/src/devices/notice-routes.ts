import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Paths } from 'service-protocol';
import { Type } from 'typebox';
import { escapeHtml, type PageBrand, sendPage } from '../http/page.js';
import { errorResponses, rawResponse, SERVER_ERRORS } from '../http/schemas.js';
import type { MessageKey } from '../i18n/messages/en.js';
import type { PageLanguages } from '../i18n/page-language.js';
import { deviceName } from '../mail/templates.js';
import type { DeviceNotices } from './notice.js';

const Token = Type.Object({ t: Type.String({ maxLength: 200 }) }, { additionalProperties: false });

const REFUSED = {
  invalid: [400, 'This link is not valid. Use the link from the email exactly as it was sent.', 'page.notice.invalid'],
  expired: [410, 'This link has expired. Revoke the device from your account page instead.', 'page.notice.expired'],
  used: [409, 'This link was already used.', 'page.notice.used'],
} as const;

const PAGE = 'text/html';
/**
 * Every answer is a page, except a request the schema refuses (no `t`; for the POST also a body
 * too large or of another media type), which is `{ code, message }` like everywhere else.
 */
const noticeResponses = (ok: string, ...bodyErrors: (413 | 415)[]) => ({
  200: rawResponse(PAGE, ok),
  400: {
    description: `${REFUSED.invalid[1]} (page), or a malformed request (JSON)`,
    content: { [PAGE]: { schema: { type: 'string' } }, 'application/json': { schema: errorResponses(400)[400] } },
  },
  409: rawResponse(PAGE, REFUSED.used[1]),
  410: rawResponse(PAGE, REFUSED.expired[1]),
  ...errorResponses(...bodyErrors, ...SERVER_ERRORS),
});

const ShowSchema = { querystring: Token, response: noticeResponses('names the device, with a button that signs it out') };
const RevokeSchema = { body: Token, response: noticeResponses('the device is signed out', 413, 415) };

/** GET /devices/not-me names the device; only its POST button revokes it. Every page in the browser's language. */
export const deviceNoticeRoutes: FastifyPluginAsyncTypebox<{
  notices: DeviceNotices;
  languages: PageLanguages;
  /** The application's brand (branding/): its display name, or the product name for the built-in hosted client. */
  brandOf: (client: { id: string; name: string }) => Promise<PageBrand & { name: string }>;
}> = async (app, { notices, languages, brandOf }) => {
  const { locales } = languages;
  /** The page; `body` builds its HTML with `t` (text) and `html` (a message with values and bold). */
  const page = async (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    token: string,
    body: (t: (key: MessageKey) => string, locale: string) => string,
    brand?: PageBrand,
  ) => {
    // The switcher comes back to the link's page (a POST's answer too).
    const language = await languages.of(request, { returnTo: `${Paths.deviceNotice}?t=${encodeURIComponent(token)}` });
    const t = (key: MessageKey) => escapeHtml(locales.text(language.locale, key));
    const title = locales.text(language.locale, 'page.notice.title');
    return sendPage(reply, status, title, `<h1>${escapeHtml(title)}</h1>${body(t, language.locale)}`, language, undefined, brand);
  };

  app.get(Paths.deviceNotice, { schema: ShowSchema }, async (request, reply) => {
    const token = request.query.t;
    const checked = await notices.check(token);
    if (!checked.ok) return page(request, reply, REFUSED[checked.reason][0], token, (t) => `<p>${t(REFUSED[checked.reason][2])}</p>`);
    const { device } = checked;
    // Never the internal client's name: the application's display name, or the product's.
    const brand = await brandOf({ id: device.clientId, name: checked.clientName });
    const what = (locale: string) => {
      const name = device.name ?? deviceName(locales, locale, device.browser, device.os);
      const values = { client: brand.name, device: name, time: utcMinute(device.createdAt) };
      return `<p>${locales.html(locale, 'page.notice.what', values, { b: ['<strong>', '</strong>'] })}</p>`;
    };
    if (device.removedAt !== null)
      return page(request, reply, 200, token, (t, locale) => `${what(locale)}<p>${t('page.notice.alreadyOut')}</p>`, brand);
    return page(
      request,
      reply,
      200,
      token,
      (t, locale) =>
        `${what(locale)}<p>${t('page.notice.ifNotYou')}</p>` +
        `<form method="post" action="${Paths.deviceNotice}"><input type="hidden" name="t" value="${escapeHtml(token)}">` +
        `<button type="submit">${t('page.notice.button')}</button></form>`,
      brand,
    );
  });

  app.post(Paths.deviceNotice, { schema: RevokeSchema }, async (request, reply) => {
    const outcome = await notices.revoke(request.body.t);
    if (outcome !== 'revoked') return page(request, reply, REFUSED[outcome][0], request.body.t, (t) => `<p>${t(REFUSED[outcome][2])}</p>`);
    return page(request, reply, 200, request.body.t, (t) => `<p>${t('page.notice.done')}</p>`);
  });
};

/** "2026-11-23 10:21 UTC": unambiguous in every language. */
const utcMinute = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
