import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AccountSessionInfo } from 'service-protocol';
import { Type } from 'typebox';
import { AUTHORIZATION_REQUEST_TTL_SECONDS } from '../defaults.js';
import { ServiceError } from '../errors.js';
import { parseCookies } from '../http/cookies.js';
import { errorResponses, rawResponse, SERVER_ERRORS, wireBody } from '../http/schemas.js';
import type { Locales } from '../i18n/locales.js';
import { FirstPartyCallbackQuery } from '../oidc/first-party-sign-in.js';
import { asset } from '../oidc/routes.js';
import type { OrganizationSelfService } from '../organizations/self-service.js';
import { ACCOUNT_PASSKEY_SCRIPT } from './factor-page.js';
import { type AccountHttp, Csrf, HTML, refusedResponses } from './http.js';
import { INVITATION_PAGE } from './invitation-routes.js';
import { accountPageHtml } from './page.js';
import { ACCOUNT_PATH, type AccountCenter } from './service.js';

/** OpenID Connect's ui_locales (space-separated language tags), carried through the sign-in back to the page. */
const UiLocales = Type.Optional(Type.String({ maxLength: 100, pattern: '^[A-Za-z0-9 -]*$' }));
const withUi = (path: string, ui: string | undefined) => (ui ? `${path}?ui_locales=${encodeURIComponent(ui)}` : path);

const SessionAnswer = wireBody<AccountSessionInfo>()(
  Type.Object({
    email: Type.String(),
    csrfToken: Type.String({ description: 'send it in x-account-csrf, or as the csrf field of a form' }),
    deviceId: Type.String(),
    expiresAt: Type.Integer({ description: 'Unix epoch milliseconds' }),
    recentUntil: Type.Integer({ description: 'Unix epoch milliseconds: sensitive actions are allowed until then' }),
  }),
);

/**
 * GET /account, its script and GET /account/session: the page of a signed-in user (else to its
 * sign-in), and the session a script of the page reads its CSRF token and recent sign-in from.
 */
export const accountPageRoutes: FastifyPluginAsyncTypebox<{
  account: AccountCenter;
  http: AccountHttp;
  locales: Locales;
  organizations: OrganizationSelfService;
}> = async (app, { account, http, locales, organizations }) => {
  const { cookieOf, page } = http;
  app.get(
    ACCOUNT_PATH,
    {
      schema: {
        querystring: Type.Object({ ui_locales: UiLocales }),
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
      if (!cookie || !who)
        return reply
          .code(303)
          .header('location', withUi(`${ACCOUNT_PATH}/signin`, request.query.ui_locales))
          .send();
      const [holdings, activity, identities, consents, memberships] = await Promise.all([
        account.overview(who),
        account.activity(who),
        account.identities(who),
        account.consents(who),
        organizations.mine(who.userId),
      ]);
      const csrf = account.csrfToken(cookie);
      const methods = account.changeableMethods();
      return page(request, reply, 200, (locale) =>
        accountPageHtml({
          locales,
          locale,
          email: who.email,
          deviceId: who.deviceId,
          csrf,
          holdings,
          activity,
          methods,
          identities,
          consents,
          organizations: { memberships, creationOffered: organizations.creationOffered },
        }),
      );
    },
  );

  const passkeyScript = asset('account-passkey.js');
  app.get(
    ACCOUNT_PASSKEY_SCRIPT,
    { schema: { response: { 200: rawResponse('text/javascript', "the account page's script: Add a passkey (service-web bundled in)") } } },
    async (_request, reply) =>
      reply.header('cache-control', 'public, max-age=300').type('text/javascript; charset=utf-8').send(passkeyScript),
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
};

/**
 * The account center's own sign-in, as the account client through the hosted sign-in
 * (/account/signin to /authorize, back at /account/callback with the session cookie), and its sign-out.
 */
export const accountSignInRoutes: FastifyPluginAsyncTypebox<{ account: AccountCenter; http: AccountHttp }> = async (
  app,
  { account, http },
) => {
  const { names, sessionCookie, loginCookie, uiCookie, message, act } = http;
  app.get(
    `${ACCOUNT_PATH}/signin`,
    {
      schema: {
        querystring: Type.Object({ fresh: Type.Optional(Type.String({ maxLength: 10 })), ui_locales: UiLocales }),
        response: {
          303: { description: 'to /authorize, as the account client (fresh: prompt=login)' },
          ...errorResponses(400, ...SERVER_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const ui = request.query.ui_locales?.trim() || undefined;
      const { location, login } = account.beginSignIn(request.query.fresh !== undefined, ui);
      return reply
        .code(303)
        .header('set-cookie', [
          loginCookie(login, AUTHORIZATION_REQUEST_TTL_SECONDS),
          uiCookie((ui ?? '').replace(/ /g, '.'), ui ? AUTHORIZATION_REQUEST_TTL_SECONDS : 0),
        ])
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
      const cookies = parseCookies(request.headers.cookie);
      const login = cookies.get(names.login);
      const ui = (cookies.get(names.ui) ?? '').replace(/\./g, ' '); // spaces kept as dots in the cookie
      try {
        if (!code || !state) throw new ServiceError('ERR_FORBIDDEN', 'The sign-in did not finish.');
        const { session } = await account.finishSignIn({ code, state, iss, login });
        const who = await account.authenticate(session);
        const maxAge = who ? Math.max(0, Math.floor((who.expiresAt - Date.now()) / 1000)) : 0;
        return (
          reply
            .code(303)
            .header('set-cookie', [sessionCookie(session, maxAge), loginCookie('', 0), uiCookie('', 0)])
            // An invitation's link started this sign-in: back to its page (account-center/invitation-routes.ts).
            .header(
              'location',
              withUi(cookies.has(names.invitation) ? INVITATION_PAGE : ACCOUNT_PATH, /^[A-Za-z0-9 -]{1,100}$/.test(ui) ? ui : undefined),
            )
            .send()
        );
      } catch (error) {
        if (!(error instanceof ServiceError) || error.code !== 'ERR_FORBIDDEN') throw error;
        reply.header('set-cookie', loginCookie('', 0));
        return message(request, reply, 403, 'page.account.refused');
      }
    },
  );

  app.post(
    `${ACCOUNT_PATH}/signout`,
    {
      schema: {
        body: Type.Object({ csrf: Type.Optional(Csrf) }),
        response: { 200: rawResponse(HTML, 'signed out'), ...refusedResponses },
      },
    },
    async (request, reply) =>
      act(request, reply, false, async () => {
        reply.header('set-cookie', sessionCookie('', 0));
        return message(request, reply, 200, 'page.account.signOut', 'none');
      }),
  );
};
