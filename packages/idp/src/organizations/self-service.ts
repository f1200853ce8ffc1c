import type {
  AdminOrganization,
  AdminOrganizationInvitation,
  AdminOrganizationMember,
  AdminOrganizationRole,
  ErrorCode,
} from 'service-protocol';
import { randomToken } from '../crypto/secrets.js';
import { ORGANIZATION_NAME_MAX_LENGTH } from '../defaults.js';
import { ServiceError } from '../errors.js';
import type { EventLog } from '../events/service.js';
import { CONTROL_CHARACTERS } from '../storage/pagination.js';
import type { Invitations } from './invitations.js';
import type { HeldMembership, OrganizationStore } from './store.js';

/** Why the self-service side refused; the account center shows each in the user's language. Nothing changed. */
export type RefusalReason =
  | 'off'
  | 'not configured'
  | 'limit'
  | 'name'
  | 'unknown'
  | 'last admin'
  | 'unknown role'
  | 'not a member'
  | 'invitation'
  | 'email'
  | 'too many';

const STATUS_CODE: Record<RefusalReason, ErrorCode> = {
  off: 'ERR_FORBIDDEN',
  'not configured': 'ERR_UNAVAILABLE',
  limit: 'ERR_FORBIDDEN',
  name: 'ERR_REQUEST_INVALID',
  unknown: 'ERR_NOT_FOUND',
  'last admin': 'ERR_FORBIDDEN',
  'unknown role': 'ERR_REQUEST_INVALID',
  'not a member': 'ERR_NOT_FOUND',
  invitation: 'ERR_REQUEST_INVALID',
  email: 'ERR_EMAIL_INVALID',
  'too many': 'ERR_RATE_LIMITED',
};

export class OrganizationRefusal extends ServiceError {
  constructor(
    readonly reason: RefusalReason,
    message: string,
    readonly values: Record<string, string | number> = {},
  ) {
    super(STATUS_CODE[reason], message);
  }
}

/** What an organization's admin sees on its page. */
export interface ManagedOrganization {
  organization: AdminOrganization;
  members: AdminOrganizationMember[];
  invitations: AdminOrganizationInvitation[];
  /** The template's roles, which the admin may give. */
  roles: AdminOrganizationRole[];
}

/** The account center's side of organizations: each call acts for one signed-in user, within what they may do. */
export interface OrganizationSelfService {
  /** Whether users may create organizations here (SERVICE_IDP_ORGANIZATION_SELF_SERVICE). */
  readonly creationOffered: boolean;
  mine(userId: string): Promise<HeldMembership[]>;
  create(userId: string, name: string): Promise<AdminOrganization>;
  leave(userId: string, organizationId: string): Promise<void>;
  /** The page of an organization `adminId` manages; any other (or none by that id) is 'unknown', one answer. */
  managed(adminId: string, organizationId: string): Promise<ManagedOrganization>;
  setMemberRoles(adminId: string, organizationId: string, memberId: string, roles: readonly string[]): Promise<void>;
  removeMember(adminId: string, organizationId: string, memberId: string): Promise<void>;
  invite(adminId: string, organizationId: string, email: string, roles: readonly string[]): Promise<void>;
  resend(adminId: string, organizationId: string, invitationId: string): Promise<void>;
  revoke(adminId: string, organizationId: string, invitationId: string): Promise<void>;
}

/** The actor events name for a user acting on their own organizations. */
export const userActor = (userId: string) => `user:${userId}`;

/**
 * Organizations users run themselves (docs/organizations.md, "Organization admins and self-service"):
 * a member holding a role that manages organizations is that organization's admin, there and
 * nowhere else. Every admin call first checks that its caller manages the organization named
 * in the path (else the same 'unknown' as for no organization, so ids reveal nothing), and acts
 * only on rows of that organization (members, invitations by organization id and id). A change
 * that would leave the organization with no admin is refused, atomically (store.changeKeepingAdmin).
 */
export function createOrganizationSelfService({
  store,
  invitations,
  events,
  now,
  config,
}: {
  store: OrganizationStore;
  invitations: Invitations;
  events: EventLog;
  now: () => number;
  config: { enabled: boolean; creatorRole: string; perUser: number };
}): OrganizationSelfService {
  async function asAdmin(adminId: string, organizationId: string) {
    if (!(await store.manages(organizationId, adminId)))
      throw new OrganizationRefusal('unknown', 'No organization you manage has this id.');
  }
  async function roleIdsOf(keys: readonly string[]) {
    // By name only: the page offers names; ids are the operator's.
    const roles = await store.roles();
    const ids = keys.map((key) => roles.find((role) => role.name === key)?.id);
    if (ids.some((id) => id === undefined)) throw new OrganizationRefusal('unknown role', 'No organization role has this name.');
    return [...new Set(ids as string[])];
  }
  const refusedBy = (error: unknown, map: Partial<Record<ErrorCode, RefusalReason>>) => {
    if (error instanceof ServiceError && !(error instanceof OrganizationRefusal)) {
      const reason = map[error.code];
      if (reason) return new OrganizationRefusal(reason, error.message);
    }
    return error;
  };
  const keepingAdmin = async (organizationId: string, userId: string, change: Parameters<OrganizationStore['changeKeepingAdmin']>[2]) => {
    const outcome = await store.changeKeepingAdmin(organizationId, userId, change);
    if (outcome === 'not a member') throw new OrganizationRefusal('not a member', 'This user is not a member of this organization.');
    if (outcome === 'last admin')
      throw new OrganizationRefusal('last admin', 'The organization would have no admin left; make another member admin first.');
  };

  return {
    creationOffered: config.enabled,
    mine: (userId) => store.membershipsOf(userId),

    async create(userId, raw) {
      if (!config.enabled) throw new OrganizationRefusal('off', 'Creating organizations is not offered here.');
      const name = typeof raw === 'string' ? raw.trim() : '';
      if (name.length === 0 || name.length > ORGANIZATION_NAME_MAX_LENGTH || CONTROL_CHARACTERS.test(name))
        throw new OrganizationRefusal('name', `An organization name is 1 to ${ORGANIZATION_NAME_MAX_LENGTH} characters.`, {
          max: ORGANIZATION_NAME_MAX_LENGTH,
        });
      const role = (await store.roles()).find((r) => r.name === config.creatorRole);
      // Refused rather than made: a role that manages organizations is the operator's decision
      // (the template is shared by every organization), so the service never adds one itself.
      if (!role?.managesOrganization)
        throw new OrganizationRefusal(
          'not configured',
          `Creating organizations is not set up: the operator must create the organization role ${config.creatorRole} ` +
            `that manages organizations (service-idp orgs roles create ${config.creatorRole} --manages-organization yes).`,
          { role: config.creatorRole },
        );
      const at = now();
      const made: AdminOrganization = {
        id: randomToken('org_', 12),
        name,
        externalId: null,
        mfaRequired: false,
        createdAt: at,
        updatedAt: at,
      };
      if ((await store.insertOwnedOrganization(made, userId, [role.id], config.perUser)) === 'limit reached')
        throw new OrganizationRefusal('limit', `You created ${config.perUser} organizations, the most one account may.`, {
          limit: config.perUser,
        });
      const actor = userActor(userId);
      await events.record({ type: 'organization.created', actor, userId, detail: { organizationId: made.id, name } });
      await events.record({ type: 'organization.member_added', actor, userId, detail: { organizationId: made.id, roles: role.name } });
      return made;
    },

    async leave(userId, organizationId) {
      await keepingAdmin(organizationId, userId, { remove: true });
      await events.record({
        type: 'organization.member_removed',
        actor: userActor(userId),
        userId,
        detail: { organizationId, left: 'yes' },
      });
    },

    async managed(adminId, organizationId) {
      await asAdmin(adminId, organizationId);
      const organization = await store.getOrganization(organizationId);
      if (!organization) throw new OrganizationRefusal('unknown', 'No organization you manage has this id.');
      const [members, invited, roles] = await Promise.all([store.members(organizationId), invitations.list(organizationId), store.roles()]);
      return { organization, members, invitations: invited, roles };
    },

    async setMemberRoles(adminId, organizationId, memberId, keys) {
      await asAdmin(adminId, organizationId);
      const roleIds = await roleIdsOf(keys);
      await keepingAdmin(organizationId, memberId, { roleIds });
      const changed = await store.member(organizationId, memberId);
      await events.record({
        type: 'organization.member_roles_changed',
        actor: userActor(adminId),
        userId: memberId,
        detail: { organizationId, roles: changed?.roles.join(',') ?? '' },
      });
    },

    async removeMember(adminId, organizationId, memberId) {
      await asAdmin(adminId, organizationId);
      await keepingAdmin(organizationId, memberId, { remove: true });
      await events.record({ type: 'organization.member_removed', actor: userActor(adminId), userId: memberId, detail: { organizationId } });
    },

    async invite(adminId, organizationId, email, keys) {
      await asAdmin(adminId, organizationId);
      const roleIds = await roleIdsOf(keys);
      try {
        await invitations.invite(organizationId, email, roleIds, userActor(adminId));
      } catch (error) {
        throw refusedBy(error, { ERR_EMAIL_INVALID: 'email', ERR_REQUEST_INVALID: 'email', ERR_RATE_LIMITED: 'too many' });
      }
    },

    async resend(adminId, organizationId, invitationId) {
      await asAdmin(adminId, organizationId);
      try {
        await invitations.resend(organizationId, invitationId, userActor(adminId));
      } catch (error) {
        throw refusedBy(error, { ERR_NOT_FOUND: 'invitation', ERR_REQUEST_INVALID: 'invitation', ERR_RATE_LIMITED: 'too many' });
      }
    },

    async revoke(adminId, organizationId, invitationId) {
      await asAdmin(adminId, organizationId);
      try {
        await invitations.revoke(organizationId, invitationId, userActor(adminId));
      } catch (error) {
        throw refusedBy(error, { ERR_NOT_FOUND: 'invitation', ERR_REQUEST_INVALID: 'invitation' });
      }
    },
  };
}
