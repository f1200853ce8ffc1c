import type { FastifyRequest } from 'fastify';
import type { PageLanguage } from '../http/page.js';
import type { Locales } from './locales.js';
import { chosenLocale, localeCookieName } from './request-locale.js';

/** How a page finds its language; the user's saved choice comes through a port (the session lives above this wing). */
export interface PageLanguages {
  locales: Locales;
  /** The switcher's cookie name. */
  cookieName: string;
  /**
   * The language of a page answering `request`: `uiLocales` (the query's ui_locales, or what the
   * caller names), the switcher's cookie, the signed-in user's saved choice, Accept-Language.
   * `returnTo`: where the switcher comes back (default: this GET's own URL).
   */
  of(request: FastifyRequest, options?: { uiLocales?: string; returnTo?: string }): Promise<PageLanguage>;
}

export function createPageLanguages(deps: {
  locales: Locales;
  issuer: string;
  /** The saved language of the user whose service session the Cookie header carries, if any. */
  savedLocale: (cookieHeader: string | undefined) => Promise<string | undefined>;
}): PageLanguages {
  const { locales } = deps;
  const cookieName = localeCookieName(deps.issuer);
  return {
    locales,
    cookieName,
    async of(request, options = {}) {
      const query = request.query as Record<string, unknown> | undefined;
      const fromQuery = typeof query?.ui_locales === 'string' ? query.ui_locales.slice(0, 200) : undefined;
      const uiLocales = options.uiLocales ?? fromQuery;
      const fromUi = uiLocales
        ?.split(' ')
        .map((tag) => locales.match(tag))
        .find((tag) => tag !== undefined);
      const chosen = chosenLocale(request, locales, cookieName);
      // The saved choice costs a read: only when neither ui_locales nor the cookie decides.
      const saved = fromUi || chosen ? undefined : await deps.savedLocale(request.headers.cookie);
      const acceptLanguage = request.headers['accept-language'];
      const locale = locales.negotiate({
        ...(fromUi ? { uiLocales: fromUi } : {}),
        ...(chosen ? { chosen } : {}),
        ...(saved ? { saved } : {}),
        ...(typeof acceptLanguage === 'string' ? { acceptLanguage } : {}),
      });
      return { locale, locales, returnTo: options.returnTo ?? request.url };
    },
  };
}

declare module '../composition/wing.js' {
  interface HttpContext {
    /** Each page's language and the switcher's languages (a page's routes read it). */
    readonly languages: PageLanguages;
  }
}
