import { defineWing } from '../composition/wing.js';
import { DOMAIN_DNS_TIMEOUT_MS } from '../defaults.js';
import type { EventLog } from '../events/service.js';
import type { Db } from '../storage/schema.js';
import type { Throttle } from '../throttle/service.js';
import type { EnabledUserStore } from '../users/enabled-store.js';
import { joinByVerifiedDomain } from './auto-join.js';
import { createTxtLookup } from './dns-proof.js';
import { domainAdminRoutes } from './routes.js';
import { createOrganizationDomains, type DomainRouting } from './service.js';
import { createDomainStore } from './store.js';

interface DomainsNeeds {
  db: Db;
  events: EventLog;
  throttle: Throttle;
  enabledUsers: EnabledUserStore;
  now: () => number;
  config: { dnsServers?: readonly string[] | undefined };
}

/**
 * Verified domains and where their addresses sign in (docs/organizations.md):
 * `organizationDomains` for the operator's changes, `domainRouting` for the sign-in (the
 * first factor's routing, the upstream provider's trust); new users of a verified domain join its
 * organization when it chose a join role (auto-join.ts).
 */
export const organizationDomainsWing = defineWing(
  'organization-domains',
  ({ db, events, throttle, enabledUsers, now, config }: DomainsNeeds) => {
    enabledUsers.onCreated(joinByVerifiedDomain(events));
    const organizationDomains = createOrganizationDomains({
      store: createDomainStore(db),
      lookup: createTxtLookup(config.dnsServers, DOMAIN_DNS_TIMEOUT_MS),
      events,
      throttle,
      now,
    });
    const domainRouting: DomainRouting = organizationDomains;
    return { services: { organizationDomains, domainRouting }, routes: { admin: domainAdminRoutes(organizationDomains) } };
  },
);
