import { defineWing } from '../composition/wing.js';
import type { EventLog } from '../events/service.js';
import type { Db } from '../storage/schema.js';
import { createEnabledUserStore } from './enabled-store.js';
/** The users as every sign-in path reads them: a disabled user is absent from every lookup (users/enabled-store.ts). */
export const enabledUsersWing = defineWing('enabled-users', ({ db, events }: { db: Db; events: EventLog }) => ({
  services: { enabledUsers: createEnabledUserStore(db, events) },
}));
