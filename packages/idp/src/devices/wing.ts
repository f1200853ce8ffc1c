import type { Branding } from '../branding/service.js';
import type { ClientService } from '../clients/service.js';
import { defineWing } from '../composition/wing.js';
import type { SecretHasher } from '../crypto/secrets.js';
import type { EventLog } from '../events/service.js';
import type { EventStore } from '../events/store.js';
import type { Mailer } from '../mail/mailer.js';
import type { MailTemplates } from '../mail/templates.js';
import type { SpentTokenStore } from '../spent-tokens/store.js';
import type { Db } from '../storage/schema.js';
import type { EnabledUserStore } from '../users/enabled-store.js';
import { createDeviceNotices } from './notice.js';
import { deviceNoticeRoutes } from './notice-routes.js';
import type { SessionEnder } from './service.js';
import { createDeviceStore } from './store.js';

interface DevicesNeeds {
  db: Db;
  now: () => number;
  hash: SecretHasher;
  idleMs: number;
  config: { issuer: string };
  spentTokens: SpentTokenStore;
  enabledUsers: EnabledUserStore;
  clients: ClientService;
  mailer: Mailer;
  templates: MailTemplates;
  events: EventLog;
  eventStore: EventStore;
  sessions: SessionEnder;
  branding: Branding;
}

/**
 * The remembered devices (docs/protocol.md, "Devices"): their store, the mail that tells a
 * user of a new one with its "this wasn't me" link and page, and the idle expiry the sweep runs.
 * The device service over them (revoke, rename) is opened with the factors (factors/wing.ts).
 */
export const devicesWing = defineWing('devices', (deps: DevicesNeeds) => {
  const { db, now, hash, idleMs, config, events, eventStore, branding } = deps;
  const devices = createDeviceStore(db);
  const notices = createDeviceNotices({
    ...{ store: devices, spent: deps.spentTokens, enabledUsers: deps.enabledUsers, clients: deps.clients },
    ...{ mailer: deps.mailer, templates: deps.templates, hash, events, issuer: config.issuer, now, sessions: deps.sessions },
  });
  return {
    services: { devices, notices },
    routes: {
      root:
        ({ languages }) =>
        async (app) => {
          await app.register(deviceNoticeRoutes, { notices, languages, brandOf: (client) => branding.brandOf(client) });
        },
    },
    async sweep(at: number) {
      await devices.expireIdle(at - idleMs, at, eventStore);
    },
  };
});
