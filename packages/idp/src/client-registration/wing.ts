import type { ClientService } from '../clients/service.js';
import { defineWing } from '../composition/wing.js';
import type { SecretHasher } from '../crypto/secrets.js';
import type { EventLog } from '../events/service.js';
import type { Db } from '../storage/schema.js';
import type { Throttle } from '../throttle/service.js';
import { createClientRegistration, type RegistrationPolicy } from './registration.js';
import { registrationRoutes } from './routes.js';

interface RegistrationNeeds {
  db: Db;
  now: () => number;
  hash: SecretHasher;
  config: { issuer: string; clientRegistration: RegistrationPolicy; registeredClientUnusedDays: number };
  clients: ClientService;
  throttle: Throttle;
  events: EventLog;
}

/**
 * Clients that register themselves (RFC 7591, RFC 7592; client-registration/registration.ts): the endpoint
 * exists only when the operator allows it; initial access tokens are made whatever the policy
 * (`clients registration-token`), and unused registered clients are swept.
 */
export const clientRegistrationWing = defineWing('client-registration', (deps: RegistrationNeeds) => {
  const { config } = deps;
  const clientRegistration = createClientRegistration({
    ...deps,
    issuer: config.issuer,
    policy: config.clientRegistration,
    unusedDays: config.registeredClientUnusedDays,
  });
  return {
    services: { clientRegistration },
    ...(config.clientRegistration === 'off'
      ? {}
      : { routes: { root: () => async (app) => app.register(registrationRoutes, { registration: clientRegistration }) } }),
    sweep: async (at: number) => {
      await clientRegistration.sweepUnused(at);
    },
  };
});
