import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AUTHORIZATION_REQUEST_TTL_SECONDS } from '../defaults.js';
import { parseCookies } from '../http/cookies.js';
import { escapeHtml } from '../http/page.js';
import { errorResponses, rawResponse, SERVER_ERRORS } from '../http/schemas.js';
import type { Invitations } from '../organizations/invitations.js';
import { type AccountHttp, actionResponses, Csrf, HTML } from './http.js';
import { ACCOUNT_PATH, type AccountCenter } from './service.js';

/** The page an invitation's link leads to once the token is in its cookie (never in a URL the browser keeps). */
export const INVITATION_PAGE = `${ACCOUNT_PATH}/invitations`;
const Token = Type.String({ minLength: 1, maxLength: 200 });

/**
 * An organization's invitation, accepted in the account center (docs/organizations.md): the
 * link's token goes into a short-lived cookie and out of the address bar; the invitee signs in
 * the usual way (the account center's own sign-in, which comes back here while the cookie
 * lives); the page says who invites which address, and a POST with the session's token joins.
 * Another address, a used, revoked or expired link: a page saying so, nothing changed.
 */
export const accountInvitationRoutes: FastifyPluginAsyncTypebox<{
  account: AccountCenter;
  http: AccountHttp;
  invitations: Invitations;
}> = async (app, { account, http, invitations }) => {
  const { names, invitationCookie, page, message, act, cookieOf } = http;
  const tokenOf = (cookie: string | undefined) => {
    try {
      return decodeURIComponent(parseCookies(cookie).get(names.invitation) ?? '');
    } catch {
      return ''; // a mangled cookie is no invitation
    }
  };

  app.get(
    `${INVITATION_PAGE}/accept`,
    {
      schema: {
        querystring: Type.Object({ token: Token }),
        response: { 303: { description: 'to the invitation page, the token in a cookie' }, ...errorResponses(400, ...SERVER_ERRORS) },
      },
    },
    async (request, reply) =>
      reply
        .code(303)
        .header('set-cookie', invitationCookie(encodeURIComponent(request.query.token), AUTHORIZATION_REQUEST_TTL_SECONDS))
        .header('referrer-policy', 'no-referrer')
        .header('location', INVITATION_PAGE)
        .send(),
  );

  app.get(
    INVITATION_PAGE,
    {
      schema: {
        response: {
          200: rawResponse(HTML, 'who invites which address, and the form to join'),
          303: { description: 'to the account sign-in, which comes back here' },
          403: rawResponse(HTML, 'signed in with another address than the invited one'),
          410: rawResponse(HTML, 'the link was used, revoked or expired'),
          ...errorResponses(400, ...SERVER_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const token = tokenOf(request.headers.cookie);
      const view = await invitations.view(token);
      if (view.state !== 'pending') return message(request, reply, 410, 'page.account.invitation.spent', 'back');
      const who = await account.authenticate(cookieOf(request));
      if (!who) return reply.code(303).header('location', `${ACCOUNT_PATH}/signin`).send();
      if (who.email !== view.email) return message(request, reply, 403, 'page.account.invitation.otherAddress', 'back');
      const csrf = account.csrfToken(cookieOf(request) ?? '');
      return page(request, reply, 200, (locale) => {
        const values = { organization: view.organization, email: view.email, roles: view.roles.join(', ') || '-' };
        const t = (key: Parameters<typeof http.text>[1]) => escapeHtml(http.text(locale, key, values));
        return (
          `<h1>${t('page.account.invitation.title')}</h1><p>${t('page.account.invitation.body')}</p>` +
          `<form method="post" action="${INVITATION_PAGE}/accept"><input type="hidden" name="csrf" value="${escapeHtml(csrf)}">` +
          `<button type="submit">${t('page.account.invitation.accept')}</button></form>` +
          `<p><a href="${ACCOUNT_PATH}">${escapeHtml(http.text(locale, 'page.account.back'))}</a></p>`
        );
      });
    },
  );

  app.post(
    `${INVITATION_PAGE}/accept`,
    {
      schema: {
        body: Type.Object({ csrf: Type.Optional(Csrf) }),
        response: {
          200: rawResponse(HTML, 'joined'),
          410: rawResponse(HTML, 'the link was used, revoked or expired'),
          ...actionResponses(''),
        },
      },
    },
    async (request, reply) =>
      act(request, reply, false, async (who) => {
        const outcome = await invitations.accept(tokenOf(request.headers.cookie), { id: who.userId, email: who.email });
        reply.header('set-cookie', invitationCookie('', 0));
        if (!outcome.joined)
          return outcome.why === 'other address'
            ? message(request, reply, 403, 'page.account.invitation.otherAddress', 'back')
            : message(request, reply, 410, 'page.account.invitation.spent', 'back');
        return message(request, reply, 200, 'page.account.invitation.joined', 'back', { organization: outcome.organization });
      }),
  );
};
