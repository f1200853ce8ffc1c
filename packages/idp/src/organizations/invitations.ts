import type { AdminOrganizationInvitation } from 'service-protocol';
import { randomToken, type SecretHasher } from '../crypto/secrets.js';
import { ORGANIZATION_INVITATION_TTL_HOURS, ORGANIZATION_INVITATIONS_PER_ORGANIZATION } from '../defaults.js';
import { ServiceError } from '../errors.js';
import type { EventLog } from '../events/service.js';
import { emailOf } from '../http/schemas.js';
import type { LocalizableMail } from '../mail/templates.js';
import type { Throttle } from '../throttle/service.js';
import type { InvitationRow, InvitationStore } from './invitation-store.js';
import type { OrganizationStore } from './store.js';

/** Where an invitation's link leads (the account center's page, account-center/invitation-routes.ts). */
export const INVITATION_ACCEPT_PATH = '/account/invitations/accept';

export interface InvitationDeps {
  store: InvitationStore;
  organizations: OrganizationStore;
  hash: SecretHasher;
  events: EventLog;
  throttle: Throttle;
  issuer: string;
  now: () => number;
  /** The branded, localized mailer and its templates (branding/, mail/). */
  mailer: { send(mail: LocalizableMail): Promise<void> };
  templates: { render(name: 'organization-invitation', to: string, values: { client: string } & Record<string, string>): LocalizableMail };
  productName: () => Promise<string>;
}

/** What the invitee's page shows before they accept: whose invitation, for which address, and whether it still works. */
export interface InvitationView {
  organization: string;
  email: string;
  roles: string[];
  state: AdminOrganizationInvitation['state'] | 'unknown';
}

export type AcceptOutcome =
  | { joined: true; organizationId: string; organization: string }
  | { joined: false; why: 'other address' | 'spent' };

export interface Invitations {
  invite(organizationId: string, email: string, roles: readonly string[], actor: string): Promise<AdminOrganizationInvitation>;
  list(organizationId: string): Promise<AdminOrganizationInvitation[]>;
  /** A new link by mail (the old one stops working) and a new expiry. */
  resend(organizationId: string, id: string, actor: string): Promise<AdminOrganizationInvitation>;
  revoke(organizationId: string, id: string, actor: string): Promise<void>;
  view(token: string): Promise<InvitationView>;
  /** Joins the signed-in user, if the invitation is live and for their address; otherwise nothing changes. */
  accept(token: string, user: { id: string; email: string }): Promise<AcceptOutcome>;
  sweep(at: number): Promise<void>;
}

const HOUR_MS = 60 * 60 * 1000;
const TOKEN = /^oinv_[A-Za-z0-9_-]{20,100}$/;

/**
 * Passwordless invitations (docs/organizations.md): an operator (or, later, an organization's
 * admin) invites an address with organization roles; the mail carries a single-use, expiring
 * link to the account center, where the invitee signs in the usual way (a new device proves the
 * address by its emailed code) and joins. The link's token is kept only as a keyed hash.
 */
export function createInvitations(deps: InvitationDeps): Invitations {
  const { store, organizations, hash, events, now } = deps;
  const hashOf = (token: string) => hash('organization-invitation', token);
  const stateOf = (row: InvitationRow, at: number): AdminOrganizationInvitation['state'] =>
    row.acceptedAt !== null ? 'accepted' : row.revokedAt !== null ? 'revoked' : row.expiresAt <= at ? 'expired' : 'pending';

  async function toAdmin(row: InvitationRow): Promise<AdminOrganizationInvitation> {
    const roles = (await organizations.rolesOf(row.roleIds)).map((role) => role.name).sort();
    return {
      id: row.id,
      organizationId: row.organizationId,
      email: row.email,
      roles,
      state: stateOf(row, now()),
      invitedBy: row.invitedBy,
      createdAt: row.createdAt,
      expiresAt: row.expiresAt,
      acceptedAt: row.acceptedAt,
    };
  }

  async function organizationNamed(id: string) {
    const found = await organizations.getOrganization(id);
    if (!found) throw new ServiceError('ERR_NOT_FOUND', 'No organization has this id.');
    return found;
  }

  /** Mails the link (in the invitee's language when the service knows it), naming the product and the organization. */
  async function mail(row: InvitationRow, token: string, organization: string, roles: string[]) {
    const link = `${deps.issuer}${INVITATION_ACCEPT_PATH}?token=${encodeURIComponent(token)}`;
    const client = await deps.productName();
    await deps.mailer.send(
      deps.templates.render('organization-invitation', row.email, {
        client,
        organization,
        link,
        roles: roles.join(', ') || '-',
        hours: String(ORGANIZATION_INVITATION_TTL_HOURS),
      }),
    );
  }

  async function existing(organizationId: string, id: string) {
    const row = /^inv_[A-Za-z0-9_-]{1,100}$/.test(id) ? await store.byId(organizationId, id) : undefined;
    if (!row) throw new ServiceError('ERR_NOT_FOUND', 'This organization has no such invitation.');
    return row;
  }

  const bounded = (organizationId: string) =>
    deps.throttle.consume(
      `org-invitations:${organizationId}`,
      ORGANIZATION_INVITATIONS_PER_ORGANIZATION,
      'Too many invitations. Try again later.',
    );

  return {
    async invite(organizationId, raw, roleKeys, actor) {
      const email = emailOf(raw);
      const organization = await organizationNamed(organizationId);
      const { ids, unknown } = await organizations.roleIds(roleKeys);
      if (unknown.length > 0) throw new ServiceError('ERR_NOT_FOUND', `No organization role is named ${unknown.join(', ')}.`);
      await bounded(organizationId);
      const token = randomToken('oinv_');
      const at = now();
      const row: InvitationRow = {
        idHash: hashOf(token),
        id: randomToken('inv_', 12),
        organizationId,
        email,
        roleIds: ids,
        invitedBy: actor,
        createdAt: at,
        expiresAt: at + ORGANIZATION_INVITATION_TTL_HOURS * HOUR_MS,
        acceptedAt: null,
        acceptedUserId: null,
        revokedAt: null,
      };
      await store.insert(row);
      const made = await toAdmin(row);
      await mail(row, token, organization.name, made.roles);
      await events.record({ type: 'organization.invitation_sent', actor, detail: { organizationId, invitationId: row.id } });
      return made;
    },

    list: async (organizationId) => {
      await organizationNamed(organizationId);
      return Promise.all((await store.list(organizationId)).map(toAdmin));
    },

    async resend(organizationId, id, actor) {
      const row = await existing(organizationId, id);
      const organization = await organizationNamed(organizationId);
      await bounded(organizationId);
      const token = randomToken('oinv_');
      const expiresAt = now() + ORGANIZATION_INVITATION_TTL_HOURS * HOUR_MS;
      if (!(await store.relink(organizationId, row.id, hashOf(token), expiresAt)))
        throw new ServiceError('ERR_REQUEST_INVALID', 'This invitation was accepted or revoked; send a new one.');
      const fresh = { ...row, idHash: hashOf(token), expiresAt };
      const made = await toAdmin(fresh);
      await mail(fresh, token, organization.name, made.roles);
      await events.record({ type: 'organization.invitation_sent', actor, detail: { organizationId, invitationId: row.id, resent: 'yes' } });
      return made;
    },

    async revoke(organizationId, id, actor) {
      const row = await existing(organizationId, id);
      if (!(await store.revoke(organizationId, row.id, now())))
        throw new ServiceError('ERR_REQUEST_INVALID', 'This invitation was accepted or revoked already.');
      await events.record({ type: 'organization.invitation_revoked', actor, detail: { organizationId, invitationId: row.id } });
    },

    async view(token) {
      const row = TOKEN.test(token) ? await store.byHash(hashOf(token)) : undefined;
      if (!row) return { organization: '', email: '', roles: [], state: 'unknown' };
      const organization = await organizations.getOrganization(row.organizationId);
      const admin = await toAdmin(row);
      return { organization: organization?.name ?? '', email: row.email, roles: admin.roles, state: admin.state };
    },

    async accept(token, user) {
      const idHash = TOKEN.test(token) ? hashOf(token) : undefined;
      const accepted = idHash ? await store.accept(idHash, user, now()) : undefined;
      if (!accepted) {
        const row = idHash ? await store.byHash(idHash) : undefined;
        return { joined: false, why: row && stateOf(row, now()) === 'pending' && row.email !== user.email ? 'other address' : 'spent' };
      }
      const organization = await organizations.getOrganization(accepted.organizationId);
      await events.record({
        type: 'organization.member_added',
        actor: `invitation:${accepted.id}`,
        userId: user.id,
        detail: { organizationId: accepted.organizationId, invitationId: accepted.id },
      });
      return { joined: true, organizationId: accepted.organizationId, organization: organization?.name ?? '' };
    },

    sweep: (at) => store.deleteExpired(at - 30 * 24 * HOUR_MS),
  };
}
