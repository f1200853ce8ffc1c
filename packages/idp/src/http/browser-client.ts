import cors from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { BROWSER_PREFIX, BrowserPaths, PUBLISHABLE_KEY_HEADER } from 'service-protocol';
import type { ClientService } from '../clients/service.js';
import type { ClientRecord } from '../clients/store.js';
import { notFound } from './error-handler.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The client application behind a browser request, set by the browser-client hook. */
    client: ClientRecord;
  }
}

/**
 * Routes that authenticate their client themselves, with the same checks and errors: the
 * trusted-device login folds the client's read into its own (login/store.ts).
 */
const CLIENT_IN_HANDLER = new Set([`${BROWSER_PREFIX}${BrowserPaths.authenticate}`]);

/** The publishable key and Origin of a browser request. */
export function browserCredentials(request: FastifyRequest): { publishableKey?: string; origin?: string } {
  const key = request.headers[PUBLISHABLE_KEY_HEADER];
  const origin = request.headers.origin;
  return { ...(typeof key === 'string' ? { publishableKey: key } : {}), ...(origin !== undefined ? { origin } : {}) };
}

/**
 * For every route registered inside `scope`: CORS only for origins some client registered
 * (a preflight carries no key, so it can only be checked against all of them), then the
 * publishable key must name a client whose origins include the request's Origin.
 */
export async function browserClient(scope: FastifyInstance, { clients }: { clients: ClientService }): Promise<void> {
  const origins = registeredOrigins(clients);
  await scope.register(cors, {
    origin: (origin, callback) => {
      if (!origin) return callback(null, false);
      origins.has(origin).then(
        (ok) => {
          callback(null, ok);
        },
        (error: Error) => {
          callback(error, false);
        },
      );
    },
    methods: ['GET', 'POST'],
    allowedHeaders: ['content-type', PUBLISHABLE_KEY_HEADER],
    maxAge: 600,
  });
  scope.decorateRequest('client', null as unknown as ClientRecord);
  // Answers carry codes and device tokens: never store them in any cache.
  scope.addHook('onSend', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
  });
  scope.setNotFoundHandler(notFound);
  scope.addHook('preHandler', async (request: FastifyRequest) => {
    if (CLIENT_IN_HANDLER.has(request.routeOptions.url ?? '')) return;
    const { publishableKey, origin } = browserCredentials(request);
    request.client = await clients.authenticateBrowser(publishableKey, origin);
  });
}

/** A cached set of every client's origins; an unknown origin triggers at most one reload per second. */
function registeredOrigins(clients: ClientService) {
  let known = new Set<string>();
  let loadedAt = 0;
  return {
    async has(origin: string): Promise<boolean> {
      if (known.has(origin)) return true;
      if (Date.now() - loadedAt < 1000) return false;
      loadedAt = Date.now();
      known = new Set((await clients.list()).flatMap((c) => c.origins));
      return known.has(origin);
    },
  };
}
