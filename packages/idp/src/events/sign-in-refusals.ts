import type { FastifyInstance } from 'fastify';
import { BROWSER_PREFIX, BrowserPaths, PasskeyPaths } from 'service-protocol';
import { ServiceError } from '../errors.js';
import type { EventLog } from './service.js';

/** The browser steps of a sign-in; a refusal on any of them is a failed sign-in. */
const SIGN_IN_PATHS = new Set(
  [
    BrowserPaths.authenticate,
    BrowserPaths.verifyEmailOtp,
    BrowserPaths.verifyDevice,
    BrowserPaths.mfaInitiate,
    BrowserPaths.mfaVerify,
    PasskeyPaths.authenticate,
  ].map((path) => `${BROWSER_PREFIX}${path}`),
);

/**
 * Records `sign_in.failed` with the refusal's code for every sign-in step the service refuses,
 * in the one place every refusal passes. The user is not named: most refusals come before the
 * address is proven, and the trail must not collect addresses of people who are not users.
 */
export function recordSignInRefusals(scope: FastifyInstance, events: EventLog): void {
  scope.addHook('onError', async (request, _reply, error) => {
    if (!(error instanceof ServiceError) || !SIGN_IN_PATHS.has(request.routeOptions.url ?? '')) return;
    await events.record({
      type: 'sign_in.failed',
      ...(request.client ? { clientId: request.client.id } : {}),
      detail: { reason: error.code, step: (request.routeOptions.url ?? '').slice(BROWSER_PREFIX.length) },
    });
  });
}
