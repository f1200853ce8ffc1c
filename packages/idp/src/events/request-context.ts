import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyInstance } from 'fastify';
import { CHALLENGE_SOLUTION_HEADER } from 'service-protocol';
import { EVENT_USER_AGENT_MAX_LENGTH } from '../defaults.js';

/** Where a request came from, for the events it causes; flows need not pass it along. */
export interface RequestOrigin {
  ip: string;
  userAgent: string | null;
  /** The route's path pattern (e.g. `/v1/authenticate`): a send challenge is bound to it (otp/send-challenge.ts). */
  route: string | undefined;
  /** The solved send challenge the request carries (CHALLENGE_SOLUTION_HEADER), read only where a code is sent. */
  challengeSolution: string | undefined;
  /** The Origin header: the page a CAPTCHA token must have been solved on (otp/send-captcha.ts). */
  pageOrigin: string | undefined;
}

const storage = new AsyncLocalStorage<RequestOrigin>();

/** The origin of the request being served, if any (none for the CLI and background work). */
export const currentRequest = (): RequestOrigin | undefined => storage.getStore();

/** Makes each request's IP (after trustProxy), User-Agent, route and send-challenge solution available to currentRequest(). */
export function trackRequestOrigin(app: FastifyInstance): void {
  app.addHook('onRequest', (request, _reply, done) => {
    const userAgent = request.headers['user-agent']?.slice(0, EVENT_USER_AGENT_MAX_LENGTH) ?? null;
    const solution = request.headers[CHALLENGE_SOLUTION_HEADER];
    storage.run(
      {
        ip: request.ip,
        userAgent,
        route: request.routeOptions.url,
        challengeSolution: typeof solution === 'string' ? solution : undefined,
        pageOrigin: request.headers.origin,
      },
      done,
    );
  });
}
