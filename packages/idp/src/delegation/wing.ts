import type { MfaMethod } from 'service-protocol';
import type { ClientService } from '../clients/service.js';
import { defineWing } from '../composition/wing.js';
import type { Sealer } from '../crypto/seal.js';
import type { SecretHasher } from '../crypto/secrets.js';
import type { DeviceService } from '../devices/service.js';
import type { EventLog } from '../events/service.js';
import type { MfaStep } from '../sign-in/mfa-step.js';
import type { SpentTokenStore } from '../spent-tokens/store.js';
import type { Db } from '../storage/schema.js';
import type { EnabledUserStore } from '../users/enabled-store.js';
import { delegationRoutes } from './routes.js';
import { createDelegationService } from './service.js';
import { createDelegationStore } from './store.js';

interface DelegationNeeds {
  db: Db;
  now: () => number;
  hash: SecretHasher;
  sealerFor: (purpose: string) => Sealer;
  config: { issuer: string };
  mfaMethods: MfaMethod[];
  spentTokens: SpentTokenStore;
  clients: ClientService;
  enabledUsers: EnabledUserStore;
  mfa: MfaStep;
  deviceService: DeviceService;
  events: EventLog;
}

/** The MFA delegation API (docs/delegation.md): an application's backend runs the MFA step for its own sign-in. */
export const delegationWing = defineWing('delegation', (deps: DelegationNeeds) => {
  const delegation = createDelegationService({
    ...{ store: createDelegationStore(deps.db), spent: deps.spentTokens, clients: deps.clients, enabledUsers: deps.enabledUsers },
    ...{ mfa: deps.mfa, mfaMethods: deps.mfaMethods, devices: deps.deviceService, hash: deps.hash, events: deps.events },
    ...{ sealer: deps.sealerFor('delegation-key'), issuer: deps.config.issuer, now: deps.now },
  });
  return {
    services: { delegation },
    routes: {
      root: () => async (app) => {
        await app.register(delegationRoutes, { delegation });
      },
    },
  };
});
