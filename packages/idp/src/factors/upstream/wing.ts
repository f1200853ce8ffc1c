import { UpstreamPaths } from 'service-protocol';
import type { ClientService } from '../../clients/service.js';
import { defineWing } from '../../composition/wing.js';
import { createConnections } from '../../connections/service.js';
import { createConnectionStore } from '../../connections/store.js';
import type { Sealer } from '../../crypto/seal.js';
import type { SecretHasher } from '../../crypto/secrets.js';
import type { DeviceStore } from '../../devices/store.js';
import type { EventLog } from '../../events/service.js';
import type { DomainRouting } from '../../organization-domains/service.js';
import type { OtpService } from '../../otp/service.js';
import type { MfaStep } from '../../sign-in/mfa-step.js';
import type { SignInPipeline } from '../../sign-in/pipeline.js';
import type { SpentTokenStore } from '../../spent-tokens/store.js';
import type { Db } from '../../storage/schema.js';
import type { Throttle } from '../../throttle/service.js';
import type { EnabledUserStore } from '../../users/enabled-store.js';
import { createUpstreamProvider } from './provider.js';
import { createUpstreamService, type UpstreamDeps } from './service.js';
import { createUpstreamStore } from './store.js';

interface UpstreamNeeds {
  db: Db;
  now: () => number;
  hash: SecretHasher;
  idleMs: number;
  domainRouting: DomainRouting;
  sealerFor: (purpose: string) => Sealer;
  config: { issuer: string };
  /** Tests route the providers' real hosts to local servers. */
  overrides: { upstreamFetch?: typeof fetch };
  hostedFor: UpstreamDeps['hostedFor'];
  clients: ClientService;
  enabledUsers: EnabledUserStore;
  devices: DeviceStore;
  mfa: MfaStep;
  pipeline: SignInPipeline;
  otp: OtpService;
  events: EventLog;
  spentTokens: SpentTokenStore;
  throttle: Throttle;
}

/**
 * The connections to upstream identity providers and the upstream first factor (docs/operations.md,
 * "Upstream providers"), which continues into the same flows as the others: the MFA step, the
 * pipeline, a device registered.
 */
export const upstreamWing = defineWing('upstream', (deps: UpstreamNeeds) => {
  const { db, now, events, sealerFor, config } = deps;
  const connections = createConnections({ store: createConnectionStore(db), sealer: sealerFor('connection-secret'), events, now });
  const fetch = deps.overrides.upstreamFetch;
  const provider = createUpstreamProvider({ redirectUri: `${config.issuer}${UpstreamPaths.callback}`, now, ...(fetch ? { fetch } : {}) });
  const upstream = createUpstreamService({
    ...{ issuer: config.issuer, connections, provider, store: createUpstreamStore(db), hostedFor: deps.hostedFor },
    ...{ clients: deps.clients, clientById: deps.clients.findById, enabledUsers: deps.enabledUsers, devices: deps.devices },
    ...{ mfa: deps.mfa, pipeline: deps.pipeline, otp: deps.otp, events, spent: deps.spentTokens, throttle: deps.throttle },
    ...{ hash: deps.hash, now, deviceIdleMs: deps.idleMs, routing: deps.domainRouting },
    flowSealer: sealerFor('upstream-flow'),
    tokenSealer: sealerFor('upstream-tokens'),
    ticketSealer: sealerFor('upstream-device'),
  });
  return { services: { connections, upstream } };
});
