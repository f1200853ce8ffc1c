import { defineWing } from '../composition/wing.js';
import type { EventLog } from '../events/service.js';
import type { Db } from '../storage/schema.js';
import { organizationAdminRoutes } from './routes.js';
import { createOrganizations, type OrganizationAccess } from './service.js';
import { createOrganizationStore } from './store.js';

interface OrganizationsNeeds {
  db: Db;
  events: EventLog;
  now: () => number;
}

/**
 * Organizations, their members and organization roles (docs/organizations.md): `organizations`
 * for the operator's changes, `organizationAccess` for what a sign-in and a token may carry.
 */
export const organizationsWing = defineWing('organizations', ({ db, events, now }: OrganizationsNeeds) => {
  const organizations = createOrganizations({ store: createOrganizationStore(db), events, now });
  const organizationAccess: OrganizationAccess = organizations;
  return { services: { organizations, organizationAccess }, routes: { admin: organizationAdminRoutes(organizations) } };
});
