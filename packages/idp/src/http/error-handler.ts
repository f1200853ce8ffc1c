import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorBody } from 'service-protocol';
import { OAuthError, ServiceError } from '../errors.js';
import { isDatabaseUnavailable } from '../storage/database.js';

/**
 * Fastify's own refusals of a request, by code: the status and words this service answers with
 * (`{ code: 'ERR_REQUEST_INVALID', message }`), never the FST_ code or the framework's wording.
 * 413 and 415 keep their status (errorResponses in schemas.ts documents them on body routes).
 */
const FRAMEWORK_REFUSALS: Record<string, { status: 400 | 413 | 415; message: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, message: 'The request body is too large.' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, message: "The request body's media type is not accepted here." },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, message: "The request body's length does not match its Content-Length." },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, message: 'The request body is empty.' },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, message: 'The request body is not valid JSON.' },
  FST_ERR_ROUTE_MISSING_CONTENT_TYPE: { status: 400, message: 'The request has no Content-Type.' },
  FST_ERR_ROUTE_MISSING_CONTENT: { status: 400, message: 'The request has no body.' },
  FST_ERR_BAD_URL: { status: 400, message: 'The URL is malformed.' },
  FST_ERR_MAX_PARAM_LENGTH: { status: 400, message: 'A segment of the URL is too long.' },
};
/** Any other refusal of Fastify's (an FST_ code with a 4xx status). */
const FRAMEWORK_REFUSAL = { status: 400, message: 'The request is malformed.' } as const;

/** The status and message of a 4xx that is not one of ours: a schema's refusal, Fastify's, or a plugin's. */
function refusalOf(error: FastifyError): { status: number; message: string } {
  if (error.validation) return { status: 400, message: `Invalid request: ${error.message}` };
  const known = FRAMEWORK_REFUSALS[error.code];
  if (known) return known;
  if (typeof error.code === 'string' && error.code.startsWith('FST_')) return FRAMEWORK_REFUSAL;
  return { status: error.statusCode && error.statusCode !== 422 ? error.statusCode : 400, message: error.message };
}

/**
 * Fastify's `frameworkErrors`: refusals raised while routing, before any route or hook (a URL
 * that does not decode, a path segment over `maxParamLength`). `gate` runs first and may answer
 * instead (the admin API's key check, so an anonymous caller learns nothing of its routes).
 */
export function frameworkErrors(gate: (request: FastifyRequest) => Promise<void>) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    reply.header('cache-control', 'no-store');
    gate(request).then(
      () => {
        const { status, message } = refusalOf(error);
        const body: ErrorBody = { code: 'ERR_REQUEST_INVALID', message };
        reply.code(status === 413 || status === 415 ? status : 400).send(body);
      },
      (refusal: unknown) => {
        if (refusal instanceof ServiceError && refusal.expose) {
          const body: ErrorBody = { code: refusal.code, message: refusal.message };
          reply.code(refusal.status).send(body);
        } else {
          request.log.error({ err: refusal }, 'unhandled error');
          const body: ErrorBody = { code: 'ERR_INTERNAL', message: 'Internal error.' };
          reply.code(500).send(body);
        }
      },
    );
  };
}

/**
 * Node's `clientError`: a request the HTTP parser refused (a malformed request line or header,
 * headers over the size limit, a request too slow to arrive). No route, hook or key check can
 * run; the answer is still `{ code, message }`, never the framework's body.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'The request headers are too large.']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'The request took too long to arrive.']
        : [400, 'The request is malformed.'];
  const body = JSON.stringify({ code: 'ERR_REQUEST_INVALID', message } satisfies ErrorBody);
  if (socket.writable)
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
    );
  socket.destroy(error);
}

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
      const { status, message } = refusalOf(error);
      if (request.routeOptions.config.oauthErrors) {
        return reply.code(400).send({ error: 'invalid_request', error_description: message });
      }
      const body: ErrorBody = { code: 'ERR_REQUEST_INVALID', message };
      return reply.code(status).send(body);
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
