import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyInstance } from 'fastify';
import { EVENT_USER_AGENT_MAX_LENGTH } from '../defaults.js';

/** Where a request came from, for the events it causes; flows need not pass it along. */
export interface RequestOrigin {
  ip: string;
  userAgent: string | null;
}

const storage = new AsyncLocalStorage<RequestOrigin>();

/** The origin of the request being served, if any (none for the CLI and background work). */
export const currentRequest = (): RequestOrigin | undefined => storage.getStore();

/** Makes each request's IP (after trustProxy) and User-Agent available to currentRequest(). */
export function trackRequestOrigin(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    const userAgent = request.headers['user-agent']?.slice(0, EVENT_USER_AGENT_MAX_LENGTH) ?? null;
    storage.run({ ip: request.ip, userAgent }, done);
  });
}
