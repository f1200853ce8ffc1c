import type { Branding } from '../branding/service.js';
import { defineWing } from '../composition/wing.js';
import type { SecretHasher } from '../crypto/secrets.js';
import type { EventLog } from '../events/service.js';
import type { MailTemplates } from '../mail/templates.js';
import type { Db } from '../storage/schema.js';
import type { Throttle } from '../throttle/service.js';
import { createInvitationStore } from './invitation-store.js';
import { createInvitations } from './invitations.js';
import { invitationAdminRoutes, organizationAdminRoutes } from './routes.js';
import { createOrganizationSelfService } from './self-service.js';
import { createOrganizations, type OrganizationAccess } from './service.js';
import { createOrganizationStore } from './store.js';

interface OrganizationsNeeds {
  db: Db;
  events: EventLog;
  now: () => number;
  hash: SecretHasher;
  throttle: Throttle;
  config: { issuer: string; organizationSelfService: { enabled: boolean; creatorRole: string; perUser: number } };
  mailer: Parameters<typeof createInvitations>[0]['mailer'];
  templates: MailTemplates;
  branding: Pick<Branding, 'productName'>;
}

/**
 * Organizations, their members, organization roles and invitations (docs/organizations.md):
 * `organizations` for the operator's changes, `organizationAccess` for what a sign-in and a token
 * may carry, `invitations` for the invitee's page (the account center), `organizationSelfService`
 * for what users do with their own organizations there (self-service.ts).
 */
export const organizationsWing = defineWing('organizations', (deps: OrganizationsNeeds) => {
  const { db, events, now } = deps;
  const store = createOrganizationStore(db);
  const organizations = createOrganizations({ store, events, now });
  const organizationAccess: OrganizationAccess = organizations;
  const invitations = createInvitations({
    ...{ store: createInvitationStore(db), organizations: store, hash: deps.hash, events, throttle: deps.throttle, now },
    ...{ issuer: deps.config.issuer, mailer: deps.mailer, templates: deps.templates, productName: () => deps.branding.productName() },
  });
  const organizationSelfService = createOrganizationSelfService({
    ...{ store, invitations, events, now },
    config: deps.config.organizationSelfService,
  });
  return {
    services: { organizations, organizationAccess, invitations, organizationSelfService },
    routes: {
      admin: async (app) => {
        await app.register(organizationAdminRoutes(organizations));
        await app.register(invitationAdminRoutes(invitations));
      },
    },
    sweep: (at: number) => invitations.sweep(at),
  };
});
