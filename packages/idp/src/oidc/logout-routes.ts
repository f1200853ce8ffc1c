import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Paths } from 'service-protocol';
import { Type } from 'typebox';
import { AUTHORIZE_PARAMETER_MAX_LENGTH, REDIRECT_URI_MAX_LENGTH, TOKEN_PARAMETER_MAX_LENGTH } from '../defaults.js';
import { parseCookies } from '../http/cookies.js';
import { cspWithFormTarget, escapeHtml, PAGE_CSP, sendPage } from '../http/page.js';
import { errorResponses, rawResponse, SERVER_ERRORS } from '../http/schemas.js';
import type { MessageKey } from '../i18n/messages/en.js';
import type { PageLanguages } from '../i18n/page-language.js';
import { boundCookieName } from './dbsc.js';
import { type LogoutFrame, SIGNED_OUT_SCRIPT_PATH } from './frontchannel-logout.js';
import type { LogoutOutcome, LogoutService } from './logout.js';
import { sessionCookieName } from './routes.js';

/** OpenID Connect RP-Initiated Logout 1.0 2, and our confirmation form's field. */
const LogoutParams = Type.Object(
  {
    id_token_hint: Type.Optional(Type.String({ maxLength: TOKEN_PARAMETER_MAX_LENGTH })),
    client_id: Type.Optional(Type.String({ maxLength: 200 })),
    post_logout_redirect_uri: Type.Optional(Type.String({ maxLength: REDIRECT_URI_MAX_LENGTH })),
    state: Type.Optional(Type.String({ maxLength: AUTHORIZE_PARAMETER_MAX_LENGTH })),
    logout_hint: Type.Optional(Type.String({ maxLength: AUTHORIZE_PARAMETER_MAX_LENGTH })),
    ui_locales: Type.Optional(Type.String({ maxLength: 200 })),
    confirmation: Type.Optional(Type.String({ maxLength: 200, description: "our confirmation page's value (POST only)" })),
  },
  { additionalProperties: true },
);

const HTML = 'text/html';
const responses = {
  200: rawResponse(HTML, 'the confirmation page (sign out of the service?), or the signed-out page'),
  303: { description: "to the client's registered post_logout_redirect_uri with state; or, for an app's POST, to the GET form" },
  400: rawResponse(
    HTML,
    'an error page (unverifiable id_token_hint, unregistered post_logout_redirect_uri, a forged confirmation): never a redirect',
  ),
  ...errorResponses(...SERVER_ERRORS),
};
const GetSchema = { querystring: LogoutParams, response: responses };
const PostSchema = { body: LogoutParams, response: { ...responses, ...errorResponses(413, 415) } };

/** PAGE_CSP that may frame exactly the origins of `frames` (nothing else: default-src stays 'none'). */
const cspWithFrames = (frames: LogoutFrame[]) => `${PAGE_CSP}; frame-src ${[...new Set(frames.map((f) => f.origin))].join(' ')}`;

/**
 * The signed-out page of a session whose apps registered front-channel logout URIs (OIDC
 * Front-Channel Logout 1.0 3): each app's page in a hidden iframe (every URL escaped), then,
 * when the app asked to come back, the link the page's script follows once the frames loaded
 * or after a bounded wait (oidc/frontchannel-logout.ts); the link works without script.
 */
function signedOutWithFrames(t: (key: MessageKey) => string, frames: LogoutFrame[], location: string | null): string {
  const iframes = frames
    .map((frame) => `<iframe hidden title="${t('page.logout.appFrame')}" src="${escapeHtml(frame.url)}"></iframe>`)
    .join('');
  const next = location
    ? `<p><a id="continue" href="${escapeHtml(location)}">${t('page.logout.continue')}</a></p><script src="${SIGNED_OUT_SCRIPT_PATH}"></script>`
    : '';
  return `<p>${t('page.logout.done')}</p><p role="status">${t('page.logout.apps')}</p>${iframes}${next}`;
}

/**
 * The end-session endpoint (OpenID Connect RP-Initiated Logout 1.0). GET from the app: with an
 * ID token hint naming the session's user the session ends at once; otherwise the user confirms
 * on our page, whose form posts back (same origin, its value derived from the session cookie).
 * An app's own POST is turned into the GET (a cross-site POST carries no SameSite=Lax cookie).
 * Design and threats: docs/protocol.md, docs/security.md.
 */
export const logoutRoutes: FastifyPluginAsyncTypebox<{
  logout: LogoutService;
  issuer: string;
  languages: PageLanguages;
  /** The service's product name (branding/), above the heading: sign-out is the service's, not an app's. */
  productName: () => Promise<string>;
}> = async (app, { logout, issuer, languages, productName }) => {
  const { locales } = languages;
  const origin = new URL(issuer).origin;
  const secure = issuer.startsWith('https:');
  const sessionCookie = sessionCookieName(issuer);
  const cleared = (name: string) => `${name}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
  // The session cookie and, of a bound session, its short cookie (oidc/dbsc.ts).
  const clearedCookies = [cleared(sessionCookie), cleared(boundCookieName(issuer))];

  /**
   * A page in the browser's language: its title, then `body` (HTML the caller built with `t`).
   * The switcher of a POST's answer returns to the GET form of this endpoint.
   */
  const page = async (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    title: MessageKey,
    body: (t: (key: MessageKey) => string) => string,
    csp = PAGE_CSP,
  ) => {
    const language = await languages.of(request, request.method === 'GET' ? {} : { returnTo: Paths.endSession });
    const t = (key: MessageKey) => escapeHtml(locales.text(language.locale, key));
    return sendPage(reply, status, locales.text(language.locale, title), `<h1>${t(title)}</h1>${body(t)}`, language, csp, {
      name: await productName(),
      logoPath: null,
      stylesheetPath: null,
    });
  };

  const answer = (outcome: LogoutOutcome, request: FastifyRequest, reply: FastifyReply) => {
    if (outcome.kind === 'page') return refused(request, reply, outcome.message);
    if (outcome.kind === 'confirm') {
      const hidden = Object.entries(outcome.fields)
        .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
        .join('');
      return page(
        request,
        reply,
        200,
        'page.logout.confirmTitle',
        (t) =>
          `<p>${t('page.logout.confirm')}</p><form method="post" action="${Paths.endSession}">${hidden}<button type="submit">${t('page.logout.button')}</button></form>`,
        // The confirmation form's answer redirects to the app: CSP form-action governs that redirect too.
        outcome.returnTo ? cspWithFormTarget(outcome.returnTo) : PAGE_CSP,
      );
    }
    if (parseCookies(request.headers.cookie).has(sessionCookie)) reply.header('set-cookie', clearedCookies);
    if (outcome.location && outcome.frames.length === 0) return reply.code(303).header('location', outcome.location).send();
    if (outcome.frames.length === 0) return page(request, reply, 200, 'page.logout.doneTitle', (t) => `<p>${t('page.logout.done')}</p>`);
    return page(
      request,
      reply,
      200,
      'page.logout.doneTitle',
      (t) => signedOutWithFrames(t, outcome.frames, outcome.location),
      cspWithFrames(outcome.frames),
    );
  };

  /** Refused: the reason is for the app's developers, in English (marked so). */
  const refused = (request: FastifyRequest, reply: FastifyReply, message: string) =>
    page(
      request,
      reply,
      400,
      'page.logout.refused',
      (t) => `<p>${t('page.logout.refusedHelp')}</p><p>${t('page.detail')} <span lang="en">${escapeHtml(message)}</span></p>`,
    );

  app.get(Paths.endSession, { schema: GetSchema, attachValidation: true }, async (request, reply) => {
    if (request.validationError) return refused(request, reply, 'The sign-out request is malformed (a parameter sent twice or too long).');
    const cookie = parseCookies(request.headers.cookie).get(sessionCookie);
    return answer(await logout.request(request.query, cookie), request, reply);
  });

  app.post(Paths.endSession, { schema: PostSchema, attachValidation: true }, async (request, reply) => {
    if (!request.headers['content-type']?.startsWith('application/x-www-form-urlencoded'))
      return refused(request, reply, 'The request must be a form (application/x-www-form-urlencoded).');
    if (request.validationError) return refused(request, reply, 'The sign-out request is malformed (a parameter sent twice or too long).');
    const params = request.body;
    if (params.confirmation === undefined) {
      // An app's POST (RP-Initiated Logout 1.0 2 allows it): cross-site, it carries no session
      // cookie, so the same request goes on as a GET navigation, which does.
      const query = new URLSearchParams(Object.entries(params).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
      return reply.code(303).header('location', `${Paths.endSession}?${query}`).send();
    }
    // CSRF: the confirmation comes only from our own page (browsers send Origin on every POST).
    if (request.headers.origin !== origin) return refused(request, reply, 'This sign-out request did not come from this service`s page.');
    const cookie = parseCookies(request.headers.cookie).get(sessionCookie);
    return answer(await logout.confirm(params, cookie), request, reply);
  });
};
