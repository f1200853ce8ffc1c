import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AccountSessionInfo } from 'service-protocol';
import { Type } from 'typebox';
import { UserExport } from '../admin/schemas.js';
import { AUTHORIZATION_REQUEST_TTL_SECONDS } from '../defaults.js';
import { ServiceError } from '../errors.js';
import { parseCookies } from '../http/cookies.js';
import { escapeHtml, sendPage } from '../http/page.js';
import { errorResponses, rawResponse, SERVER_ERRORS, wireBody } from '../http/schemas.js';
import type { MessageKey } from '../i18n/locales.js';
import type { PageLanguages } from '../i18n/page-language.js';
import { FirstPartyCallbackQuery } from '../oidc/first-party-sign-in.js';
import { accountPageHtml } from './page.js';
import { ACCOUNT_PATH, type AccountCaller, type AccountCenter } from './service.js';

/** The header a script's account call may carry its per-session token in (forms send the `csrf` field). */
export const ACCOUNT_CSRF_HEADER = 'x-account-csrf';

const cookieNames = (issuer: string) =>
  issuer.startsWith('https:')
    ? { session: '__Host-service_account', login: '__Host-service_account_login' }
    : { session: 'service_account', login: 'service_account_login' };

const HTML = 'text/html';
const SessionAnswer = wireBody<AccountSessionInfo>()(
  Type.Object({
    email: Type.String(),
    csrfToken: Type.String({ description: 'send it in x-account-csrf, or as the csrf field of a form' }),
    deviceId: Type.String(),
    expiresAt: Type.Integer({ description: 'Unix epoch milliseconds' }),
    recentUntil: Type.Integer({ description: 'Unix epoch milliseconds: sensitive actions are allowed until then' }),
  }),
);
const Csrf = Type.String({ maxLength: 200 });
const DeviceId = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$' });
const actionResponses = (description: string) => ({
  303: { description },
  403: rawResponse(HTML, 'no session token, another origin, or a sign-in too old for this action (the page says to sign in again)'),
  ...errorResponses(400, 401, 404, 413, 415, ...SERVER_ERRORS),
});

/**
 * The account center at /account (docs/operations.md, "The account center"): the page, its
 * sign-in through the hosted sign-in, and its actions. Every action is a POST from the page's
 * own forms: Origin (when sent) the issuer's, Sec-Fetch-Site (when sent) same-origin, and the
 * session's CSRF token; the sensitive ones also need a recent sign-in.
 */
export const accountRoutes: FastifyPluginAsyncTypebox<{ account: AccountCenter; issuer: string; languages: PageLanguages }> = async (
  app,
  { account, issuer, languages },
) => {
  const names = cookieNames(issuer);
  const secure = issuer.startsWith('https:') ? '; Secure' : '';
  const sessionCookie = (value: string, maxAge: number) =>
    `${names.session}=${value}; Path=${ACCOUNT_PATH}; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${secure}`;
  const loginCookie = (value: string, maxAge: number) =>
    `${names.login}=${value}; Path=${ACCOUNT_PATH}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure}`;
  await account.ensureClient();
  const { locales } = languages;
  const cookieOf = (request: FastifyRequest) => parseCookies(request.headers.cookie).get(names.session);

  const page = async (request: FastifyRequest, reply: FastifyReply, status: number, main: (locale: string) => string) => {
    const language = await languages.of(request, { returnTo: ACCOUNT_PATH });
    return sendPage(reply, status, locales.text(language.locale, 'page.account.title'), main(language.locale), language);
  };
  const message = (request: FastifyRequest, reply: FastifyReply, status: number, key: MessageKey, link = true) =>
    page(
      request,
      reply,
      status,
      (locale) =>
        `<h1>${escapeHtml(locales.text(locale, 'page.account.title'))}</h1><p role="alert">${escapeHtml(locales.text(locale, key))}</p>` +
        (link ? `<p><a href="${ACCOUNT_PATH}/signin?fresh=1">${escapeHtml(locales.text(locale, 'page.account.signInAgain'))}</a></p>` : ''),
    );

  /** The caller of an action: a live session, the call from this origin with its token. */
  const caller = async (request: FastifyRequest): Promise<AccountCaller> => {
    const origin = request.headers.origin;
    const site = request.headers['sec-fetch-site'];
    if ((origin !== undefined && origin !== new URL(issuer).origin) || (site !== undefined && site !== 'same-origin'))
      throw new ServiceError('ERR_FORBIDDEN', 'Account actions are accepted from the account page only.');
    const cookie = cookieOf(request);
    const found = cookie ? await account.authenticate(cookie) : undefined;
    if (!cookie || !found) throw new ServiceError('ERR_SESSION_INVALID', 'The account session has ended; sign in again.');
    const header = request.headers[ACCOUNT_CSRF_HEADER];
    const token = typeof header === 'string' ? header : (request.body as { csrf?: string } | undefined)?.csrf;
    if (!account.checkCsrf(cookie, token))
      throw new ServiceError('ERR_FORBIDDEN', 'The account call lacks its session token; reload the page.');
    return found;
  };
  /**
   * Runs an action for its caller; a call from elsewhere answers 403 with a page (reload and try
   * again), and a sensitive one (`recent`) whose sign-in is too old answers 403 with the page
   * saying to sign in again. Neither changes anything.
   */
  const act = async (request: FastifyRequest, reply: FastifyReply, recent: boolean, run: (who: AccountCaller) => Promise<unknown>) => {
    let who: AccountCaller;
    try {
      who = await caller(request);
    } catch (error) {
      if (error instanceof ServiceError && error.code === 'ERR_FORBIDDEN')
        return message(request, reply, 403, 'page.account.forbidden', false);
      throw error;
    }
    if (recent) {
      try {
        account.requireRecent(who);
      } catch {
        return message(request, reply, 403, 'page.account.recent');
      }
    }
    return run(who);
  };

  app.get(
    ACCOUNT_PATH,
    {
      schema: {
        response: {
          200: rawResponse(HTML, 'the account page'),
          303: { description: 'to /account/signin' },
          ...errorResponses(...SERVER_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const cookie = cookieOf(request);
      const who = cookie ? await account.authenticate(cookie) : undefined;
      if (!cookie || !who) return reply.code(303).header('location', `${ACCOUNT_PATH}/signin`).send();
      const [holdings, events] = await Promise.all([account.overview(who), account.activity(who)]);
      return page(request, reply, 200, (locale) =>
        accountPageHtml({ locales, locale, email: who.email, deviceId: who.deviceId, csrf: account.csrfToken(cookie), holdings, events }),
      );
    },
  );

  app.get(
    `${ACCOUNT_PATH}/signin`,
    {
      schema: {
        querystring: Type.Object({ fresh: Type.Optional(Type.String({ maxLength: 10 })) }),
        response: {
          303: { description: 'to /authorize, as the account client (fresh: prompt=login)' },
          ...errorResponses(400, ...SERVER_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const { location, login } = account.beginSignIn(request.query.fresh !== undefined);
      return reply
        .code(303)
        .header('set-cookie', loginCookie(login, AUTHORIZATION_REQUEST_TTL_SECONDS))
        .header('location', location)
        .send();
    },
  );

  app.get(
    `${ACCOUNT_PATH}/callback`,
    {
      schema: {
        querystring: FirstPartyCallbackQuery,
        response: {
          303: { description: 'to /account, with the session cookie' },
          403: rawResponse(HTML, 'the sign-in was not started in this browser, or expired'),
          ...errorResponses(400, ...SERVER_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const { code, state, iss } = request.query;
      const login = parseCookies(request.headers.cookie).get(names.login);
      try {
        if (!code || !state) throw new ServiceError('ERR_FORBIDDEN', 'The sign-in did not finish.');
        const { session } = await account.finishSignIn({ code, state, iss, login });
        const who = await account.authenticate(session);
        const maxAge = who ? Math.max(0, Math.floor((who.expiresAt - Date.now()) / 1000)) : 0;
        return reply
          .code(303)
          .header('set-cookie', [sessionCookie(session, maxAge), loginCookie('', 0)])
          .header('location', ACCOUNT_PATH)
          .send();
      } catch (error) {
        if (!(error instanceof ServiceError) || error.code !== 'ERR_FORBIDDEN') throw error;
        reply.header('set-cookie', loginCookie('', 0));
        return message(request, reply, 403, 'page.account.refused');
      }
    },
  );

  app.get(
    `${ACCOUNT_PATH}/session`,
    { schema: { response: { 200: SessionAnswer, ...errorResponses(400, ...SERVER_ERRORS) } } },
    async (request) => {
      const cookie = cookieOf(request);
      const who = cookie ? await account.authenticate(cookie) : undefined;
      if (!cookie || !who) throw new ServiceError('ERR_SESSION_INVALID', 'The account session has ended; sign in again.');
      return {
        email: who.email,
        csrfToken: account.csrfToken(cookie),
        deviceId: who.deviceId,
        expiresAt: who.expiresAt,
        recentUntil: account.recentUntil(who),
      };
    },
  );

  app.post(
    `${ACCOUNT_PATH}/devices/revoke`,
    { schema: { body: Type.Object({ csrf: Type.Optional(Csrf), device: DeviceId }), response: actionResponses('back to /account') } },
    async (request, reply) =>
      act(request, reply, true, async (who) => {
        await account.revokeDevice(who, request.body.device);
        return reply.code(303).header('location', ACCOUNT_PATH).send();
      }),
  );

  app.post(
    `${ACCOUNT_PATH}/devices/revoke-others`,
    { schema: { body: Type.Object({ csrf: Type.Optional(Csrf) }), response: actionResponses('back to /account') } },
    async (request, reply) =>
      act(request, reply, true, async (who) => {
        await account.revokeOthers(who);
        return reply.code(303).header('location', ACCOUNT_PATH).send();
      }),
  );

  app.post(
    `${ACCOUNT_PATH}/apps/signout`,
    { schema: { body: Type.Object({ csrf: Type.Optional(Csrf), client: DeviceId }), response: actionResponses('back to /account') } },
    async (request, reply) =>
      act(request, reply, false, async (who) => {
        await account.signOutApp(who, request.body.client);
        return reply.code(303).header('location', ACCOUNT_PATH).send();
      }),
  );

  app.post(
    `${ACCOUNT_PATH}/export`,
    {
      schema: {
        body: Type.Object({ csrf: Type.Optional(Csrf) }),
        response: { 200: UserExport, ...actionResponses('unused') },
      },
    },
    async (request, reply) =>
      act(request, reply, true, async (who) =>
        reply
          .header('content-disposition', 'attachment; filename="my-account.json"')
          .header('cache-control', 'no-store')
          .send(await account.export(who)),
      ),
  );

  app.post(
    `${ACCOUNT_PATH}/delete`,
    {
      schema: {
        body: Type.Object({ csrf: Type.Optional(Csrf), confirm: Type.String({ maxLength: 320 }) }),
        response: { 200: rawResponse(HTML, 'the account is deleted and the session ended'), ...actionResponses('unused') },
      },
    },
    async (request, reply) =>
      act(request, reply, true, async (who) => {
        await account.deleteAccount(who, request.body.confirm);
        reply.header('set-cookie', sessionCookie('', 0));
        return message(request, reply, 200, 'page.account.deleted', false);
      }),
  );

  app.post(
    `${ACCOUNT_PATH}/signout`,
    {
      schema: {
        body: Type.Object({ csrf: Type.Optional(Csrf) }),
        response: { 200: rawResponse(HTML, 'signed out'), ...actionResponses('unused') },
      },
    },
    async (request, reply) =>
      act(request, reply, false, async () => {
        reply.header('set-cookie', sessionCookie('', 0));
        return message(request, reply, 200, 'page.account.signOut', false);
      }),
  );
};
