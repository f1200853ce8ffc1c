import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Paths } from 'service-protocol';
import { Type } from 'typebox';
import { LOCALE_COOKIE_MAX_AGE_SECONDS } from '../defaults.js';
import { escapeHtml, sendPage } from '../http/page.js';
import { errorResponses, rawResponse, SERVER_ERRORS } from '../http/schemas.js';
import type { PageLanguages } from './page-language.js';

const LocaleForm = Type.Object(
  {
    locale: Type.String({ maxLength: 35, description: 'a language tag the service serves (the switcher lists them)' }),
    return: Type.Optional(Type.String({ maxLength: 2000, description: 'a path of this service to go back to' })),
  },
  { additionalProperties: false },
);
const LocaleSchema = {
  body: LocaleForm,
  response: {
    303: { description: 'back to `return` (a path of this service; ui_locales dropped so the choice shows), or to /' },
    400: rawResponse('text/html', 'a page: the language is not served, or the form did not come from this service'),
    ...errorResponses(413, 415, ...SERVER_ERRORS),
  },
};

/**
 * A path of this service to send the browser back to, without ui_locales (it would outrank the
 * choice just made); anything else (another origin, `//host`, a backslash trick) becomes `/`.
 */
export function returnPath(value: string | undefined): string {
  if (!value?.startsWith('/') || value.startsWith('//') || /[\\\s]/.test(value)) return '/';
  const url = new URL(value, 'http://service.invalid');
  if (url.origin !== 'http://service.invalid') return '/';
  url.searchParams.delete('ui_locales');
  return `${url.pathname}${url.search}`;
}

/**
 * POST /locale: the switcher of every hosted page. Remembers the language in this browser (a
 * cookie) and, when the browser is signed in to the service, as the user's saved choice (mails
 * sent without a browser use it). Only our own pages may post it (Origin).
 */
export const localeRoutes: FastifyPluginAsyncTypebox<{
  languages: PageLanguages;
  issuer: string;
  /** Saves the choice for the user whose service session the Cookie header carries (nothing without one). */
  saveChoice: (cookieHeader: string | undefined, locale: string) => Promise<void>;
}> = async (app, { languages, issuer, saveChoice }) => {
  const origin = new URL(issuer).origin;
  const secure = issuer.startsWith('https:');
  app.post(Paths.locale, { schema: LocaleSchema, attachValidation: true }, async (request, reply) => {
    const locale = request.validationError ? undefined : languages.locales.match(request.body.locale);
    const back = returnPath(request.validationError ? undefined : request.body.return);
    if (!locale || request.headers.origin !== origin) {
      const language = await languages.of(request, { returnTo: back });
      const title = languages.locales.text(language.locale, 'page.locale.refused');
      return sendPage(reply, 400, title, `<h1>${escapeHtml(title)}</h1>`, language);
    }
    await saveChoice(request.headers.cookie, locale);
    const cookie = `${languages.cookieName}=${locale}; Path=/; Max-Age=${LOCALE_COOKIE_MAX_AGE_SECONDS}; SameSite=Lax${secure ? '; Secure' : ''}`;
    return reply.code(303).header('set-cookie', cookie).header('location', back).send();
  });
};
