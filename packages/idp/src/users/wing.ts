import { defineWing } from '../composition/wing.js';
import type { SecretHasher } from '../crypto/secrets.js';
import type { SessionEnder } from '../devices/service.js';
import type { DeviceStore } from '../devices/store.js';
import type { EventLog } from '../events/service.js';
import type { EventStore } from '../events/store.js';
import type { FactorModule } from '../factors/module.js';
import type { PasskeyFallback } from '../factors/passkey/fallback.js';
import type { PasskeyStore } from '../factors/passkey/store.js';
import type { UpstreamService } from '../factors/upstream/service.js';
import type { RefreshTokens } from '../oidc/refresh-tokens.js';
import type { MfaStep } from '../sign-in/mfa-step.js';
import type { Db } from '../storage/schema.js';
import { createEnabledUserStore } from './enabled-store.js';
import { createUserService } from './service.js';
import { createUserStore } from './store.js';

/** The users as every sign-in path reads them: a disabled user is absent from every lookup (users/enabled-store.ts). */
export const enabledUsersWing = defineWing('enabled-users', ({ db, events }: { db: Db; events: EventLog }) => ({
  services: { enabledUsers: createEnabledUserStore(db, events) },
}));

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
