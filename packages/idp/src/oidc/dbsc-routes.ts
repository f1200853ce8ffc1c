import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { DbscSessionConfig } from 'service-protocol';
import { Type } from 'typebox';
import { parseCookies } from '../http/cookies.js';
import { errorResponses, SERVER_ERRORS, wireBody } from '../http/schemas.js';
import { DBSC_REFRESH_PATH, DBSC_REGISTRATION_PATH, type DbscService } from './dbsc.js';
import { sessionCookieName } from './routes.js';

const SessionConfig = wireBody<DbscSessionConfig>()(
  Type.Object(
    {
      session_identifier: Type.String(),
      refresh_url: Type.String(),
      scope: Type.Object({
        origin: Type.String(),
        include_site: Type.Boolean(),
        scope_specification: Type.Array(Type.Object({ type: Type.String(), domain: Type.String(), path: Type.String() })),
      }),
      credentials: Type.Array(Type.Object({ type: Type.Literal('cookie'), name: Type.String(), attributes: Type.String() })),
      allowed_refresh_initiators: Type.Array(Type.String()),
    },
    { description: 'the DBSC session configuration (W3C draft); the short-lived cookie is set beside it' },
  ),
);
const Challenge = Type.Null({ description: 'a refresh without a proof: sign the challenge of Secure-Session-Challenge and retry' });
const refusals = errorResponses(400, ...SERVER_ERRORS);

/**
 * Device Bound Session Credentials (W3C draft) for the service session: the registration and
 * refresh endpoints the browser calls by itself (oidc/dbsc.ts). Neither reads a body; the
 * proof travels in `Secure-Session-Response`, the session in its cookie.
 */
export const dbscRoutes: FastifyPluginAsyncTypebox<{ dbsc: DbscService; issuer: string }> = async (app, { dbsc, issuer }) => {
  const sessionCookie = sessionCookieName(issuer);
  // The browser's own requests carry no body we read, whatever their content type says.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 4096 }, (_request, _body, done) => done(null, undefined));
  const header = (value: string | string[] | undefined) => (typeof value === 'string' ? value : undefined);

  app.post(DBSC_REGISTRATION_PATH, { schema: { response: { 200: SessionConfig, ...refusals } } }, async (request, reply) => {
    const session = parseCookies(request.headers.cookie).get(sessionCookie);
    const { cookie, config } = await dbsc.register(session, header(request.headers['secure-session-response']));
    return reply.header('cache-control', 'no-store').header('set-cookie', cookie).send(config);
  });

  app.post(DBSC_REFRESH_PATH, { schema: { response: { 200: SessionConfig, 403: Challenge, ...refusals } } }, async (request, reply) => {
    const session = parseCookies(request.headers.cookie).get(sessionCookie);
    const outcome = await dbsc.refresh(
      session,
      header(request.headers['sec-secure-session-id']),
      header(request.headers['secure-session-response']),
    );
    reply.header('cache-control', 'no-store');
    // The draft's challenge: an sf-string and the session's id as a parameter.
    if (outcome.kind === 'challenge')
      return reply.code(403).header('secure-session-challenge', `"${outcome.challenge}";id="${outcome.id}"`).send(null);
    return reply.header('set-cookie', outcome.cookie).send(outcome.config);
  });
};
