import { defineWing } from '../composition/wing.js';
import type { SecretHasher } from '../crypto/secrets.js';
import type { Db } from '../storage/schema.js';
import { createClientService } from './service.js';
import { createClientStore } from './store.js';

/** The applications that sign users in (docs/protocol.md, "Clients"): registered ones and the service's own. */
export const clientsWing = defineWing('clients', ({ db, hash, now }: { db: Db; hash: SecretHasher; now: () => number }) => ({
  services: { clients: createClientService({ store: createClientStore(db), hash, now }) },
}));
