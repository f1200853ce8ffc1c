import { brandingAdminRoutes } from '../branding/routes.js';
import type { Branding } from '../branding/service.js';
import type { ClientService } from '../clients/service.js';
import { defineWing } from '../composition/wing.js';
import type { Connections } from '../connections/service.js';
import type { SecretHasher } from '../crypto/secrets.js';
import type { SessionEnder } from '../devices/service.js';
import type { DeviceStore } from '../devices/store.js';
import type { EventLog } from '../events/service.js';
import type { EventStore } from '../events/store.js';
import type { FactorModule } from '../factors/module.js';
import type { PasskeyFallback } from '../factors/passkey/fallback.js';
import type { PasskeyStore } from '../factors/passkey/store.js';
import type { UpstreamService } from '../factors/upstream/service.js';
import type { Keyring } from '../keys/keyring.js';
import type { RefreshTokens } from '../oidc/refresh-tokens.js';
import type { MfaStep } from '../sign-in/mfa-step.js';
import type { Db } from '../storage/schema.js';
import type { UserService } from '../users/service.js';
import { createUserService } from '../users/service.js';
import { createUserStore } from '../users/store.js';
import { clientAdminRoutes } from './client-routes.js';
import { connectionAdminRoutes } from './connections-routes.js';
import { consoleAdminRoutes } from './console-api.js';
import { eventAdminRoutes } from './event-routes.js';
import { keyAdminRoutes } from './key-routes.js';
import { createAdminKeyStore } from './key-store.js';
import { createAdminKeys } from './keys.js';
import { createOperations } from './operations.js';
import type { Operators } from './operators.js';
import { userAdminRoutes } from './user-routes.js';

interface AdminNeeds {
  db: Db;
  now: () => number;
  hash: SecretHasher;
  events: EventLog;
  clients: ClientService;
  keyring: Keyring;
  branding: Branding;
  operators: Operators;
  users: UserService;
  connections: Connections;
  upstream: UpstreamService;
  webhookOutbox: { backlog(): Promise<{ pending: number; oldestCreatedAt: number | null }> };
}

/**
 * The admin API's keys and the operator's changes that several wings share (admin/operations.ts),
 * and the admin route groups of the operator's own objects (http/admin-routes.ts; the webhooks'
 * group is the events wing's).
 */
export const adminWing = defineWing('admin', (deps: AdminNeeds) => {
  const { now, events, clients, keyring, branding } = deps;
  const adminKeys = createAdminKeys({ store: createAdminKeyStore(deps.db), hash: deps.hash, events, now });
  const operations = createOperations({ clients, keyring, events, branding });
  const webhookBacklog = () => deps.webhookOutbox.backlog();
  return {
    services: { adminKeys, operations },
    routes: {
      admin: async (app) => {
        await app.register(brandingAdminRoutes({ branding, operations }));
        await app.register(consoleAdminRoutes({ operators: deps.operators, events, webhookBacklog, now: Date.now }));
        await app.register(keyAdminRoutes({ adminKeys, keyring, operations }));
        await app.register(connectionAdminRoutes({ connections: deps.connections, upstream: deps.upstream }));
        await app.register(userAdminRoutes({ users: deps.users }));
        await app.register(eventAdminRoutes({ events }));
        await app.register(clientAdminRoutes({ clients, operations }));
      },
    },
  };
});

interface UserAdminNeeds {
  db: Db;
  now: () => number;
  hash: SecretHasher;
  factors: readonly FactorModule[];
  eventStore: EventStore;
  events: EventLog;
  sessions: SessionEnder;
  devices: DeviceStore;
  passkeyStore: PasskeyStore;
  mfa: MfaStep;
  fallback: PasskeyFallback;
  refreshTokens: RefreshTokens;
  upstream: UpstreamService;
}

/**
 * The operator's users (what `service-idp users` and the admin API do): find, disable, export,
 * delete with every row a factor holds (its tables, from the registry), reset MFA; opened after
 * the wings whose rows and sessions it ends.
 */
export const userAdminWing = defineWing('user-admin', (deps: UserAdminNeeds) => {
  const { mfa, fallback, refreshTokens, upstream } = deps;
  const users = createUserService({
    store: createUserStore(
      deps.db,
      deps.eventStore,
      deps.factors.flatMap((factor) => factor.tables),
    ),
    ...{ sessions: deps.sessions, devices: deps.devices, passkeys: deps.passkeyStore, events: deps.events, hash: deps.hash, now: deps.now },
    regenerateRecoveryCodes: (email, actor) => mfa.regenerateRecoveryCodesByOperator(email, actor),
    resetMfa: (email, actor) => mfa.resetByOperator(email, actor),
    onPasskeyRevoked: (userId, context) => fallback.revoked(userId, context),
    revokeRefreshTokens: (userId) => refreshTokens.revokeUser(userId),
    identitiesOf: (userId) => upstream.list(userId),
  });
  return { services: { users } };
});
