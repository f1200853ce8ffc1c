import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorBody } from 'service-protocol';
import { OAuthError, ServiceError } from '../errors.js';
import { isDatabaseUnavailable } from '../storage/database.js';

/**
 * The one place errors become responses. Exposed errors send `{ code, message }` (or the
 * RFC 6749 body for OAuth errors); an unreachable database becomes 503 ERR_UNAVAILABLE;
 * anything unexpected becomes a bare 500 and is logged without the request body.
 */
export function registerErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    reply.header('cache-control', 'no-store');
    if (error instanceof OAuthError) {
      if (error.error === 'invalid_client' && request.headers.authorization?.startsWith('Basic ')) {
        reply.header('www-authenticate', 'Basic realm="service-idp"');
      }
      return reply.code(error.status).send({ error: error.error, error_description: error.message });
    }
    if (error instanceof ServiceError && error.expose) {
      if (error.details.retryAfter !== undefined) reply.header('retry-after', String(error.details.retryAfter));
      if (error.status >= 500) request.log.warn({ code: error.code, cause: String(error.cause ?? '') }, error.message);
      const body: ErrorBody = { code: error.code, message: error.message, ...error.details };
      return reply.code(error.status).send(body);
    }
    if (error.validation || (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500)) {
      const message = error.validation ? `Invalid request: ${error.message}` : error.message;
      const body: ErrorBody = { code: 'ERR_REQUEST_INVALID', message };
      if (request.routeOptions.config.oauthErrors) {
        return reply.code(400).send({ error: 'invalid_request', error_description: message });
      }
      return reply.code(error.statusCode && error.statusCode !== 422 ? error.statusCode : 400).send(body);
    }
    if (isDatabaseUnavailable(error)) {
      // Fail fast and say so: the node recovers by itself once the database answers again.
      request.log.warn({ cause: error.message }, 'database unavailable');
      reply.header('retry-after', '1');
      const body: ErrorBody = { code: 'ERR_UNAVAILABLE', message: 'The service is temporarily unavailable. Try again shortly.' };
      return reply.code(503).send(body);
    }
    request.log.error({ err: error }, 'unhandled error');
    const body: ErrorBody = { code: 'ERR_INTERNAL', message: 'Internal error.' };
    return reply.code(500).send(body);
  });

  app.setNotFoundHandler(notFound);
}

/** Typed 404; also set inside the browser scope so its CORS headers reach the page. */
export function notFound(_request: FastifyRequest, reply: FastifyReply) {
  const body: ErrorBody = { code: 'ERR_NOT_FOUND', message: 'No such endpoint.' };
  return reply.code(404).send(body);
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Routes that must answer errors in the RFC 6749 5.2 shape. */
    oauthErrors?: boolean;
  }
}
