import type { AdminOrganizationDomain } from 'service-protocol';
import { randomToken } from '../crypto/secrets.js';
import { DOMAIN_ROUTES_CACHE_MS, DOMAIN_VERIFY_PER_ORGANIZATION, ORGANIZATION_DOMAINS_MAX } from '../defaults.js';
import { ServiceError } from '../errors.js';
import type { EventLog } from '../events/service.js';
import type { Throttle } from '../throttle/service.js';
import { domainOfAddress, normalizeDomain, publishesToken, recordName, recordValue, type TxtLookup } from './dns-proof.js';
import type { ClaimChange, DomainClaim, DomainRoute, DomainStore } from './store.js';

export interface OrganizationDomainsDeps {
  store: DomainStore;
  lookup: TxtLookup;
  events: EventLog;
  throttle: Throttle;
  now: () => number;
}

/** The operator's side (CLI, admin API, console): claims, their proof and their routing. */
export interface OrganizationDomains {
  claim(organizationId: string, domain: string, actor: string): Promise<AdminOrganizationDomain>;
  list(organizationId: string): Promise<AdminOrganizationDomain[]>;
  get(organizationId: string, domain: string): Promise<AdminOrganizationDomain>;
  /** Looks the TXT record up now; ERR_REQUEST_INVALID (nothing changed) when it is not there. */
  verify(organizationId: string, domain: string, actor: string): Promise<AdminOrganizationDomain>;
  /** The operator vouches for the organization's ownership, without DNS. */
  vouch(organizationId: string, domain: string, actor: string): Promise<AdminOrganizationDomain>;
  update(organizationId: string, domain: string, change: ClaimChange, actor: string): Promise<AdminOrganizationDomain>;
  remove(organizationId: string, domain: string, actor: string): Promise<void>;
}

/** The sign-in's side: where an address must sign in, and which addresses a connection may vouch for. */
export interface DomainRouting {
  /** The connection an address must sign in with: its domain is verified, routed, and mailed codes are not allowed there. */
  upstreamFor(email: string): Promise<string | undefined>;
  /** The verified domains routed to a connection: [] for a connection no organization routes to. */
  domainsOf(connectionId: string): Promise<string[]>;
  /** The verified claim an address falls under, if any. */
  routeOf(email: string): Promise<DomainRoute | undefined>;
}

const invalid = (message: string) => new ServiceError('ERR_REQUEST_INVALID', message);
const notFound = () => new ServiceError('ERR_NOT_FOUND', 'This organization claims no such domain.');

const toAdmin = (claim: DomainClaim): AdminOrganizationDomain => ({
  organizationId: claim.organizationId,
  domain: claim.domain,
  verified: claim.verifiedAt !== null,
  verifiedAt: claim.verifiedAt,
  verifiedBy: claim.verifiedBy,
  record: { type: 'TXT', name: recordName(claim.domain), value: recordValue(claim.verificationToken) },
  connectionId: claim.connectionId,
  allowEmailCode: claim.allowEmailCode,
  joinRole: claim.joinRole,
  createdAt: claim.createdAt,
  updatedAt: claim.updatedAt,
});

/**
 * Verified domains (docs/organizations.md): an organization claims a domain, proves it with a
 * TXT record carrying its claim's random token (dns-proof.ts), or an operator vouches; only then
 * may the domain's addresses be routed to the organization's own provider or join it. Many
 * organizations may claim a domain; one holds it verified.
 */
export function createOrganizationDomains({
  store,
  lookup,
  events,
  throttle,
  now,
}: OrganizationDomainsDeps): OrganizationDomains & DomainRouting {
  const domainOf = (raw: string) => {
    const domain = normalizeDomain(raw);
    if (!domain) throw invalid('The domain must be a DNS name such as example.com (no scheme, path or IP address).');
    return domain;
  };

  async function existing(organizationId: string, raw: string): Promise<DomainClaim> {
    const domain = normalizeDomain(raw);
    const claim = domain ? await store.get(organizationId, domain) : undefined;
    if (!claim) throw notFound();
    return claim;
  }

  async function verified(organizationId: string, domain: string, by: string, actor: string): Promise<AdminOrganizationDomain> {
    const outcome = await store.markVerified(organizationId, domain, by, now());
    forget();
    if (outcome === 'gone') throw notFound();
    if (outcome === 'taken') throw invalid('Another organization holds this domain verified; it must remove it first.');
    await events.record({
      type: 'organization.domain_verified',
      actor,
      detail: { organizationId, domain, via: by === 'dns' ? 'dns' : 'operator' },
    });
    return toAdmin(await existing(organizationId, domain));
  }

  // The first factor asks on every sign-in: the routing table is read whole (a few rows) and kept
  // DOMAIN_ROUTES_CACHE_MS; this node's own changes drop it at once, another node's show within that time.
  let routes: { readAt: number; upstream: Map<string, string> } | undefined;
  const forget = () => {
    routes = undefined;
  };
  async function upstreamRoutes(): Promise<Map<string, string>> {
    const at = now();
    if (!routes || at - routes.readAt >= DOMAIN_ROUTES_CACHE_MS || at < routes.readAt)
      routes = { readAt: at, upstream: await store.upstreamRoutes() };
    return routes.upstream;
  }

  const routeOf = async (email: string) => {
    const domain = domainOfAddress(email);
    return domain ? store.route(domain) : undefined;
  };

  return {
    async claim(organizationId, raw, actor) {
      const domain = domainOf(raw);
      const at = now();
      const outcome = await store.insert(
        {
          organizationId,
          domain,
          verificationToken: randomToken('', 18),
          verifiedAt: null,
          verifiedBy: null,
          connectionId: null,
          allowEmailCode: false,
          joinRole: null,
          createdAt: at,
          updatedAt: at,
        },
        ORGANIZATION_DOMAINS_MAX,
      );
      if (outcome === 'no organization') throw new ServiceError('ERR_NOT_FOUND', 'No organization has this id.');
      if (outcome === 'too many') throw invalid(`This organization claims ${ORGANIZATION_DOMAINS_MAX} domains, the most it may.`);
      if (outcome === 'claimed') throw invalid('This organization claims this domain already.');
      await events.record({ type: 'organization.domain_added', actor, detail: { organizationId, domain } });
      return toAdmin(await existing(organizationId, domain));
    },

    list: async (organizationId) => (await store.list(organizationId)).map(toAdmin),
    get: async (organizationId, domain) => toAdmin(await existing(organizationId, domain)),

    async verify(organizationId, raw, actor) {
      const claim = await existing(organizationId, raw);
      if (claim.verifiedAt !== null) return toAdmin(claim);
      // Each attempt is a look-up the service makes on the caller's behalf: bounded per organization.
      await throttle.consume(
        `domain-verify:${organizationId}`,
        DOMAIN_VERIFY_PER_ORGANIZATION,
        'Too many verification attempts. Try again later.',
      );
      if (!(await publishesToken(lookup, claim.domain, claim.verificationToken)))
        throw invalid(
          `No TXT record ${recordName(claim.domain)} with the value ${recordValue(claim.verificationToken)} was found. DNS changes can take a while to appear.`,
        );
      return verified(organizationId, claim.domain, 'dns', actor);
    },

    async vouch(organizationId, raw, actor) {
      const claim = await existing(organizationId, raw);
      if (claim.verifiedAt !== null) return toAdmin(claim);
      return verified(organizationId, claim.domain, actor, actor);
    },

    async update(organizationId, raw, change, actor) {
      const claim = await existing(organizationId, raw);
      if (change.joinRole !== undefined && change.joinRole !== null && !/^[A-Za-z0-9_:.-]{1,100}$/.test(change.joinRole))
        throw invalid('joinRole must be an organization role name.');
      if (typeof change.joinRole === 'string') {
        const kind = await store.joinRoleKind(change.joinRole);
        if (kind === 'none') throw invalid(`No organization role is named "${change.joinRole}".`);
        // Anyone who gets a mailbox at the domain would run the organization: admins are made by people.
        if (kind === 'manages') throw invalid('A join role may not manage the organization; choose a role without it.');
      }
      const outcome = await store.update(organizationId, claim.domain, change, now());
      forget();
      if (outcome === 'gone') throw notFound();
      if (outcome === 'no connection') throw new ServiceError('ERR_NOT_FOUND', 'No connection has this id.');
      await events.record({
        type: 'organization.domain_updated',
        actor,
        detail: {
          organizationId,
          domain: claim.domain,
          ...(change.connectionId !== undefined ? { connectionId: change.connectionId ?? 'none' } : {}),
          ...(change.allowEmailCode !== undefined ? { allowEmailCode: change.allowEmailCode ? 'yes' : 'no' } : {}),
          ...(change.joinRole !== undefined ? { joinRole: change.joinRole ?? 'none' } : {}),
        },
      });
      return toAdmin(await existing(organizationId, claim.domain));
    },

    async remove(organizationId, raw, actor) {
      const claim = await existing(organizationId, raw);
      const removed = await store.remove(organizationId, claim.domain);
      forget();
      if (!removed) throw notFound();
      await events.record({ type: 'organization.domain_removed', actor, detail: { organizationId, domain: claim.domain } });
    },

    async upstreamFor(email) {
      const domain = domainOfAddress(email);
      return domain ? (await upstreamRoutes()).get(domain) : undefined;
    },
    domainsOf: (connectionId) => store.routedTo(connectionId),
    routeOf,
  };
}
