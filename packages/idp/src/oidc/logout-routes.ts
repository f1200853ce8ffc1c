import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Paths } from 'service-protocol';
import { Type } from 'typebox';
import { AUTHORIZE_PARAMETER_MAX_LENGTH, REDIRECT_URI_MAX_LENGTH, TOKEN_PARAMETER_MAX_LENGTH } from '../defaults.js';
import { escapeHtml, PAGE_CSP, sendPage } from '../http/page.js';
import { errorResponses, rawResponse, SERVER_ERRORS } from '../http/schemas.js';
import type { LogoutOutcome, LogoutService } from './logout.js';
import { parseCookies, sessionCookieName } from './routes.js';

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

/** A redirect target as a CSP source: its origin, or a private-use scheme (RFC 8252 7.1). */
function cspSource(uri: string): string {
  const url = new URL(uri);
  return url.protocol === 'https:' || url.protocol === 'http:' ? url.origin : url.protocol;
}

/**
 * The end-session endpoint (OpenID Connect RP-Initiated Logout 1.0). GET from the app: with an
 * ID token hint naming the session's user the session ends at once; otherwise the user confirms
 * on our page, whose form posts back (same origin, its value derived from the session cookie).
 * An app's own POST is turned into the GET (a cross-site POST carries no SameSite=Lax cookie).
 * Design and threats: docs/protocol.md, docs/security.md.
 */
export const logoutRoutes: FastifyPluginAsyncTypebox<{ logout: LogoutService; issuer: string }> = async (app, { logout, issuer }) => {
  const origin = new URL(issuer).origin;
  const secure = issuer.startsWith('https:');
  const sessionCookie = sessionCookieName(issuer);
  const clearedCookie = `${sessionCookie}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;

  const page = (reply: FastifyReply, status: number, title: string, body: string, formTarget?: string | null) =>
    sendPage(
      reply,
      status,
      title,
      `<h1>${escapeHtml(title)}</h1>${body}`,
      // The confirmation form's answer redirects to the app: CSP form-action governs that redirect too.
      formTarget ? PAGE_CSP.replace("form-action 'self'", `form-action 'self' ${cspSource(formTarget)}`) : PAGE_CSP,
    );

  const answer = (outcome: LogoutOutcome, request: FastifyRequest, reply: FastifyReply) => {
    if (outcome.kind === 'page') return page(reply, 400, 'Sign-out request refused', `<p>${escapeHtml(outcome.message)}</p>`);
    if (outcome.kind === 'confirm') {
      const hidden = Object.entries(outcome.fields)
        .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
        .join('');
      // no-referrer (the default, helmet) makes a browser send `Origin: null` on the form's POST, which the CSRF check refuses.
      reply.header('referrer-policy', 'same-origin');
      return page(
        reply,
        200,
        'Sign out?',
        `<p>Sign out of this service in this browser? Apps keep their own sign-in until you sign out there.</p><form method="post" action="${Paths.endSession}">${hidden}<button type="submit">Sign out</button></form>`,
        outcome.returnTo,
      );
    }
    if (parseCookies(request.headers.cookie).has(sessionCookie)) reply.header('set-cookie', clearedCookie);
    if (outcome.location) return reply.code(303).header('location', outcome.location).send();
    return page(reply, 200, 'You are signed out', '<p>You are signed out of this service in this browser.</p>');
  };

  const refused = (reply: FastifyReply, message: string) => page(reply, 400, 'Sign-out request refused', `<p>${escapeHtml(message)}</p>`);

  app.get(Paths.endSession, { schema: GetSchema, attachValidation: true }, async (request, reply) => {
    if (request.validationError) return refused(reply, 'The sign-out request is malformed (a parameter sent twice or too long).');
    const cookie = parseCookies(request.headers.cookie).get(sessionCookie);
    return answer(await logout.request(request.query, cookie), request, reply);
  });

  app.post(Paths.endSession, { schema: PostSchema, attachValidation: true }, async (request, reply) => {
    if (!request.headers['content-type']?.startsWith('application/x-www-form-urlencoded'))
      return refused(reply, 'The request must be a form (application/x-www-form-urlencoded).');
    if (request.validationError) return refused(reply, 'The sign-out request is malformed (a parameter sent twice or too long).');
    const params = request.body;
    if (params.confirmation === undefined) {
      // An app's POST (RP-Initiated Logout 1.0 2 allows it): cross-site, it carries no session
      // cookie, so the same request goes on as a GET navigation, which does.
      const query = new URLSearchParams(Object.entries(params).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
      return reply.code(303).header('location', `${Paths.endSession}?${query}`).send();
    }
    // CSRF: the confirmation comes only from our own page (browsers send Origin on every POST).
    if (request.headers.origin !== origin) return refused(reply, 'This sign-out request did not come from this service`s page.');
    const cookie = parseCookies(request.headers.cookie).get(sessionCookie);
    return answer(await logout.confirm(params, cookie), request, reply);
  });
};
