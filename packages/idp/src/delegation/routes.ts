import type { FastifyPluginAsync } from 'fastify';
import { DELEGATION_CONTENT_TYPE, Paths } from 'service-protocol';
import { BODY_ERRORS, errorResponses, rawResponse, SERVER_ERRORS } from '../http/schemas.js';
import type { DelegationService } from './service.js';

const DelegationSchema = {
  body: { content: { [DELEGATION_CONTENT_TYPE]: { schema: { type: 'string', description: 'compact JWE (docs/delegation.md)' } } } },
  response: {
    200: rawResponse(DELEGATION_CONTENT_TYPE, 'the answer: a compact JWE sealed to the caller (docs/delegation.md)'),
    // 401: the envelope or the bearer key is refused; 403: no delegation keys; 404, 409, 423, 429: the operation's own.
    ...errorResponses(...BODY_ERRORS, 401, 403, 404, 409, 423, 429, ...SERVER_ERRORS),
  },
};

/**
 * POST /v1/delegation: backend to backend, never CORS. The body is a compact JWE (the content
 * type `application/jose`, RFC 7515 9.2.1); so is a 200 answer. Errors are `{ code, message }`.
 */
export const delegationRoutes: FastifyPluginAsync<{ delegation: DelegationService }> = async (app, { delegation }) => {
  app.addContentTypeParser(DELEGATION_CONTENT_TYPE, { parseAs: 'string' }, (_request, body, done) => done(null, body));
  app.post(Paths.delegation, { schema: DelegationSchema }, async (request, reply) => {
    const auth = request.headers.authorization;
    const jwe = typeof request.body === 'string' ? request.body.trim() : '';
    const answer = await delegation.handle(jwe, auth?.startsWith('Bearer ') ? auth.slice(7) : undefined);
    return reply.header('cache-control', 'no-store').type(DELEGATION_CONTENT_TYPE).send(answer);
  });
};
