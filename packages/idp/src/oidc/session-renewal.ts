import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Paths, type SessionRenewRequest, type SessionRenewResponse } from 'service-protocol';
import { Type } from 'typebox';
import { ServiceError } from '../errors.js';
import { parseCookies } from '../http/cookies.js';
import { escapeHtml, sendPage } from '../http/page.js';
import { BODY_ERRORS, errorResponses, SERVER_ERRORS, wireBody } from '../http/schemas.js';
import type { PageLanguages } from '../i18n/page-language.js';
import type { DbscService } from './dbsc.js';

/**
 * The fallback of Device Bound Session Credentials for browsers without DBSC (docs/protocol.md
 * "Session renewal by the hosted page's key"): a session the hosted page bound to its
 * non-extractable WebCrypto key at sign-in (oidc/dbsc.ts `bindPageKey`) counts at /authorize
 * only with its short cookie; when that is gone, /authorize answers with this interstitial,
 * whose script (packages/hosted renew.ts) signs the page's challenge with the key and posts it
 * here for a new short cookie, then goes back to /authorize. A browser without the key (the
 * cookies copied elsewhere) posts no proof: its session cookies are dropped and it signs in.
 */

const RenewBody = wireBody<SessionRenewRequest>()(
  Type.Object(
    {
      proof: Type.Optional(
        Type.String({
          maxLength: 2048,
          description: "a JWT (ES256, typ dbsc+jwt, jti = the interstitial's challenge) signed by the page's key",
        }),
      ),
    },
    { additionalProperties: false },
  ),
);
const RenewAnswer = wireBody<SessionRenewResponse>()(
  Type.Object({
    renewed: Type.Boolean({ description: "true: a new short cookie is set; false: this browser's session cookies are dropped" }),
  }),
);
const RenewSchema = { body: RenewBody, response: { 200: RenewAnswer, ...errorResponses(...BODY_ERRORS, ...SERVER_ERRORS) } };

export const renewalRoutes: FastifyPluginAsyncTypebox<{ dbsc: DbscService; issuer: string; sessionCookie: string }> = async (
  app,
  { dbsc, issuer, sessionCookie },
) => {
  const origin = new URL(issuer).origin;
  const secure = issuer.startsWith('https:');
  const droppedSession = `${sessionCookie}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;

  app.post(Paths.signInSessionRenew, { schema: RenewSchema }, async (request, reply) => {
    // CSRF: only our own interstitial (browsers send Origin on every POST): no other site drops or renews the cookies.
    if (request.headers.origin !== origin) throw new ServiceError('ERR_REQUEST_INVALID', 'Cross-origin requests are refused.');
    reply.header('cache-control', 'no-store');
    if (request.body.proof === undefined) {
      // This browser holds no key: only its own cookies go (the session lives on where the key is).
      reply.header('set-cookie', [droppedSession, dbsc.clearedCookie]);
      return { renewed: false };
    }
    const session = parseCookies(request.headers.cookie).get(sessionCookie);
    reply.header('set-cookie', await dbsc.renew(session, request.body.proof));
    return { renewed: true };
  });
};

/**
 * The interstitial /authorize answers for a session the page's key must renew: a challenge
 * bound to the session, and where to go afterwards (this authorization request again, as a GET).
 */
export async function sendRenewalPage(
  request: FastifyRequest,
  reply: FastifyReply,
  languages: PageLanguages,
  { challenge, params }: { challenge: string; params: Record<string, unknown> },
) {
  const language = await languages.of(request);
  const t = (key: 'page.renew.title' | 'page.renew.help') => languages.locales.text(language.locale, key);
  const strings = Object.entries(params).filter((entry): entry is [string, string] => typeof entry[1] === 'string');
  const again = `${Paths.authorize}?${new URLSearchParams(strings)}`;
  return sendPage(
    reply,
    200,
    t('page.renew.title'),
    `<h1>${escapeHtml(t('page.renew.title'))}</h1><p id="renew-status" role="status">${escapeHtml(t('page.renew.help'))}</p>` +
      `<div id="renewal" hidden data-challenge="${escapeHtml(challenge)}" data-continue="${escapeHtml(again)}"></div>` +
      `<script src="${Paths.signIn}/renew.js"></script>`,
    language,
  );
}
