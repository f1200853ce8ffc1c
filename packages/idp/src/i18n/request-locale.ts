import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { cookieValue } from '../http/cookies.js';
import type { Locales } from './locales.js';

/**
 * What a request says about its language, kept for everything the request causes (a mail sent
 * while it is answered): `chosen`, the switcher's cookie (or the language a hosted page was
 * shown in, docs/protocol.md "Languages"), and `acceptLanguage`, the browser's header.
 */
export interface RequestLanguage {
  chosen?: string;
  acceptLanguage?: string;
}

const current = new AsyncLocalStorage<RequestLanguage>();

/** The language context of the request being answered, if any (none in the CLI or a sweep). */
export const requestLanguage = (): RequestLanguage | undefined => current.getStore();

/** The cookie holding this browser's choice of language (__Host- with an https issuer). */
export const localeCookieName = (issuer: string) => (issuer.startsWith('https:') ? '__Host-service_locale' : 'service_locale');

/** The language a request's cookie names, if the service serves it. */
export function chosenLocale(request: FastifyRequest, locales: Locales, cookieName: string): string | undefined {
  const chosen = cookieValue(request.headers.cookie, cookieName);
  return chosen ? locales.match(chosen) : undefined;
}

/** Every request runs inside its language context (AsyncLocalStorage.run around the rest of its hooks and handler). */
export function trackRequestLanguage(app: FastifyInstance, locales: Locales, issuer: string): void {
  const cookieName = localeCookieName(issuer);
  app.addHook('onRequest', (request, _reply, done) => {
    const chosen = chosenLocale(request, locales, cookieName);
    const acceptLanguage = request.headers['accept-language'];
    current.run({ ...(chosen ? { chosen } : {}), ...(typeof acceptLanguage === 'string' ? { acceptLanguage } : {}) }, done);
  });
}
