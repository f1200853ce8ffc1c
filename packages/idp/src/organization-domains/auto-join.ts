import type { EventLog } from '../events/service.js';
import type { Db } from '../storage/schema.js';
import type { NewUserStep } from '../users/enabled-store.js';
import { domainOfAddress } from './dns-proof.js';
import { createDomainStore } from './store.js';

/**
 * Automatic joining by verified domain (docs/organizations.md): a user created with an address
 * at a domain an organization holds verified, with a join role chosen, becomes its member with
 * that role, in the transaction that creates the user (users/enabled-store.ts onCreated). Only
 * new users join: an existing user at the domain is invited like anyone else. The membership
 * rows are written here rather than through organizations/ because that service opens its own
 * transaction; the event is organizations/'s own `organization.member_added`, by `domain:<domain>`.
 */
export function joinByVerifiedDomain(events: EventLog): NewUserStep {
  return async (tx: Db, user, at) => {
    const domain = domainOfAddress(user.email);
    const route = domain ? await createDomainStore(tx).route(domain) : undefined;
    if (!route?.joinRole) return;
    const actor = `domain:${route.domain}`;
    await tx
      .insertInto('organization_members')
      .values({ organization_id: route.organizationId, user_id: user.id, external_id: null, created_at: at, added_by: actor })
      .execute();
    // A join role renamed or deleted since it was chosen joins the user with no role (the organization's admins see it).
    const role = await tx.selectFrom('organization_roles').select('id').where('name', '=', route.joinRole).executeTakeFirst();
    if (role)
      await tx
        .insertInto('organization_member_roles')
        .values({ organization_id: route.organizationId, user_id: user.id, role_id: role.id })
        .execute();
    await events.recordIn(tx, {
      type: 'organization.member_added',
      actor,
      userId: user.id,
      detail: { organizationId: route.organizationId, roles: role ? route.joinRole : '' },
    });
  };
}
