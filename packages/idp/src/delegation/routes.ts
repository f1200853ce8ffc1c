import type { FastifyPluginAsync } from 'fastify';
import { DELEGATION_CONTENT_TYPE, Paths } from 'service-protocol';
import type { DelegationService } from './service.js';

/**
 * POST /v1/delegation: backend to backend, never CORS. The body is a compact JWE (the content
 * type `application/jose`, RFC 7515 9.2.1); so is a 200 answer. Errors are `{ code, message }`.
 */
export const delegationRoutes: FastifyPluginAsync<{ delegation: DelegationService }> = async (app, { delegation }) => {
  app.addContentTypeParser(DELEGATION_CONTENT_TYPE, { parseAs: 'string' }, (_request, body, done) => done(null, body));
  app.post(Paths.delegation, async (request, reply) => {
    const auth = request.headers.authorization;
    const jwe = typeof request.body === 'string' ? request.body.trim() : '';
    const answer = await delegation.handle(jwe, auth?.startsWith('Bearer ') ? auth.slice(7) : undefined);
    return reply.header('cache-control', 'no-store').type(DELEGATION_CONTENT_TYPE).send(answer);
  });
};
