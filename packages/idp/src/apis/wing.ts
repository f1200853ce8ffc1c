import type { ClientService } from '../clients/service.js';
import { defineWing } from '../composition/wing.js';
import type { EventLog } from '../events/service.js';
import type { Db } from '../storage/schema.js';
import { apiAdminRoutes } from './routes.js';
import { type ApiAuthorization, createApis } from './service.js';
import { createApiStore } from './store.js';

/**
 * The APIs operators register, their permissions, roles and who holds them
 * (docs/authorization.md): `apis` for the operator's changes (CLI, admin API, console),
 * `apiAuthorization` for what a token may carry (the token code's need).
 */
interface ApisNeeds {
  db: Db;
  events: EventLog;
  now: () => number;
  clients: Pick<ClientService, 'operated'>;
}

export const apisWing = defineWing('apis', ({ db, events, now, clients }: ApisNeeds) => {
  const apis = createApis({ store: createApiStore(db), events, now });
  const apiAuthorization: ApiAuthorization = apis;
  return {
    services: { apis, apiAuthorization },
    routes: {
      admin: apiAdminRoutes({ apis, isMachineClient: async (id) => (await clients.operated(id))?.type === 'machine' }),
    },
  };
});
