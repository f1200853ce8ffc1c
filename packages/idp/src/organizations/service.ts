import type { AdminGrant, AdminOrganization, AdminOrganizationMember, AdminOrganizationRole } from 'service-protocol';
import { ROLE_NAME_PATTERN } from '../apis/service.js';
import { randomToken } from '../crypto/secrets.js';
import { ORGANIZATION_NAME_MAX_LENGTH, ORGANIZATION_ROLES_MAX, PAGE_SIZE_MAX, ROLE_PERMISSIONS_MAX } from '../defaults.js';
import { ServiceError } from '../errors.js';
import type { EventLog } from '../events/service.js';
import { CONTROL_CHARACTERS, keysetPage, type PageQuery } from '../storage/pagination.js';
import { EXTERNAL_ID } from '../users/service.js';
import type { OrganizationChange, OrganizationStore } from './store.js';

const ROLE_NAME = new RegExp(ROLE_NAME_PATTERN);
const invalid = (message: string) => new ServiceError('ERR_REQUEST_INVALID', message);
const noOrganization = () => new ServiceError('ERR_NOT_FOUND', 'No organization has this id.');
const notMember = () => new ServiceError('ERR_NOT_FOUND', 'This user is not a member of this organization.');

export interface OrganizationInput {
  name: string;
  externalId?: string | null;
  mfaRequired?: boolean;
}

export interface OrganizationRoleInput {
  name: string;
  permissions?: readonly AdminGrant[];
  managesOrganization?: boolean;
}

/** The operator's side (CLI, admin API, console). */
export interface Organizations {
  create(input: OrganizationInput, actor: string): Promise<AdminOrganization>;
  get(id: string): Promise<AdminOrganization>;
  page(query: PageQuery): Promise<{ items: AdminOrganization[]; nextCursor: string | null }>;
  update(id: string, change: OrganizationChange, actor: string): Promise<AdminOrganization>;
  /** Deletes it with its members, their roles and its domains. */
  delete(id: string, actor: string): Promise<void>;
  /** Adds a user (by id) with organization roles (by name or id). */
  addMember(
    organizationId: string,
    userId: string,
    roles: readonly string[],
    actor: string,
    externalId?: string,
  ): Promise<AdminOrganizationMember>;
  setMemberRoles(organizationId: string, userId: string, roles: readonly string[], actor: string): Promise<AdminOrganizationMember>;
  removeMember(organizationId: string, userId: string, actor: string): Promise<void>;
  members(organizationId: string): Promise<AdminOrganizationMember[]>;
  /** `managesOrganization`: a member holding it is that organization's admin in the account center. */
  createRole(input: OrganizationRoleInput, actor: string): Promise<AdminOrganizationRole>;
  updateRole(key: string, change: Partial<OrganizationRoleInput>, actor: string): Promise<AdminOrganizationRole>;
  deleteRole(key: string, actor: string): Promise<void>;
  roles(): Promise<AdminOrganizationRole[]>;
}

/** What a member may do in one organization, as tokens carry it (oidc/ and token/). */
export interface OrganizationMembership {
  organization: AdminOrganization;
  /** Organization role names, sorted. */
  roles: string[];
}

/** The sign-in's and the token endpoint's side. */
export interface OrganizationAccess {
  /** The membership, or undefined for an unknown organization or a user who is not its member (one answer). */
  membership(userId: string, organizationId: string): Promise<OrganizationMembership | undefined>;
  /** What the member's organization roles grant on one API. */
  memberPermissions(userId: string, organizationId: string, apiIdentifier: string): Promise<string[]>;
  organizationsOf(userId: string): Promise<AdminOrganization[]>;
  /** Each of the user's memberships (the hosted organization picker's list), by organization name. */
  membershipsOf(userId: string): Promise<OrganizationMembership[]>;
  /** The organization, or undefined (the hosted sign-in reads its MFA policy before knowing the user). */
  find(organizationId: string): Promise<AdminOrganization | undefined>;
}

/**
 * Organizations (docs/organizations.md): customer companies, their members, and the organization
 * roles every organization has (one service-wide template: a role means the same in Acme and in
 * Globex; what differs is who holds it where). A member's roles hold in that organization alone.
 */
export function createOrganizations({
  store,
  events,
  now,
}: {
  store: OrganizationStore;
  events: EventLog;
  now: () => number;
}): Organizations & OrganizationAccess {
  const checkName = (raw: string) => {
    const name = typeof raw === 'string' ? raw.trim() : '';
    if (name.length === 0 || name.length > ORGANIZATION_NAME_MAX_LENGTH || CONTROL_CHARACTERS.test(name))
      throw invalid(`An organization name is 1 to ${ORGANIZATION_NAME_MAX_LENGTH} characters, without control characters.`);
    return name;
  };
  const checkExternalId = (raw: string | null | undefined) => {
    if (raw === undefined || raw === null) return raw;
    if (!EXTERNAL_ID.test(raw)) throw invalid('An external id is 1 to 200 printable ASCII characters, without spaces.');
    return raw;
  };
  const checkRoleName = (raw: string) => {
    if (typeof raw !== 'string' || !ROLE_NAME.test(raw))
      throw invalid('An organization role name is letters, digits, and . _ : - (up to 100).');
    return raw;
  };
  async function resolved(grants: readonly AdminGrant[]) {
    if (grants.length > ROLE_PERMISSIONS_MAX) throw invalid(`A role grants at most ${ROLE_PERMISSIONS_MAX} permissions.`);
    const outcome = await store.resolveGrants(grants);
    if ('missing' in outcome)
      throw invalid(`Not a permission of a registered API: ${outcome.missing.map((g) => `${g.api} ${g.permission}`).join(', ')}.`);
    return outcome.grants;
  }
  async function organization(id: string) {
    const found = await store.getOrganization(id);
    if (!found) throw noOrganization();
    return found;
  }
  async function roleIdsOf(keys: readonly string[]) {
    const { ids, unknown } = await store.roleIds(keys);
    if (unknown.length > 0) throw new ServiceError('ERR_NOT_FOUND', `No organization role is named ${unknown.join(', ')}.`);
    return ids;
  }
  async function role(key: string) {
    const [id] = await roleIdsOf([key]);
    return (await store.rolesOf([id as string]))[0] as AdminOrganizationRole;
  }
  async function member(organizationId: string, userId: string) {
    const found = await store.member(organizationId, userId);
    if (!found) throw notMember();
    return found;
  }

  return {
    async create(input, actor) {
      const at = now();
      const made: AdminOrganization = {
        id: randomToken('org_', 12),
        name: checkName(input.name),
        externalId: checkExternalId(input.externalId) ?? null,
        mfaRequired: input.mfaRequired === true,
        createdAt: at,
        updatedAt: at,
      };
      if ((await store.insertOrganization(made)) === 'external id taken') throw invalid('Another organization has this external id.');
      await events.record({ type: 'organization.created', actor, detail: { organizationId: made.id, name: made.name } });
      return made;
    },
    get: organization,
    page: (query) => keysetPage(query, PAGE_SIZE_MAX, (after, limit) => store.pageOrganizations(after, limit)),

    async update(id, change, actor) {
      const checked: OrganizationChange = {
        ...(change.name !== undefined ? { name: checkName(change.name) } : {}),
        ...(change.externalId !== undefined ? { externalId: checkExternalId(change.externalId) ?? null } : {}),
        ...(change.mfaRequired !== undefined ? { mfaRequired: change.mfaRequired === true } : {}),
      };
      const outcome = await store.updateOrganization(id, checked, now());
      if (outcome === 'gone') throw noOrganization();
      if (outcome === 'external id taken') throw invalid('Another organization has this external id.');
      await events.record({
        type: 'organization.updated',
        actor,
        detail: {
          organizationId: id,
          ...(checked.name !== undefined ? { name: checked.name } : {}),
          ...(checked.mfaRequired !== undefined ? { mfaRequired: checked.mfaRequired ? 'yes' : 'no' } : {}),
        },
      });
      return organization(id);
    },

    async delete(id, actor) {
      if (!(await store.deleteOrganization(id))) throw noOrganization();
      await events.record({ type: 'organization.deleted', actor, detail: { organizationId: id } });
    },

    async addMember(organizationId, userId, roles, actor, externalId) {
      const roleIds = await roleIdsOf(roles);
      const outcome = await store.addMember(
        { organizationId, userId, externalId: checkExternalId(externalId) ?? null, addedBy: actor, at: now() },
        roleIds,
      );
      if (outcome === 'no organization') throw noOrganization();
      if (outcome === 'no user') throw new ServiceError('ERR_NOT_FOUND', 'No user has this id.');
      if (outcome === 'member already') throw invalid('This user is a member of this organization already; change their roles instead.');
      if (outcome === 'external id taken') throw invalid('Another member of this organization has this external id.');
      const added = await member(organizationId, userId);
      await events.record({
        type: 'organization.member_added',
        actor,
        userId,
        detail: { organizationId, roles: added.roles.join(',') },
      });
      return added;
    },

    async setMemberRoles(organizationId, userId, roles, actor) {
      const roleIds = await roleIdsOf(roles);
      await organization(organizationId);
      if ((await store.setMemberRoles(organizationId, userId, roleIds)) === 'not a member') throw notMember();
      const changed = await member(organizationId, userId);
      await events.record({
        type: 'organization.member_roles_changed',
        actor,
        userId,
        detail: { organizationId, roles: changed.roles.join(',') },
      });
      return changed;
    },

    async removeMember(organizationId, userId, actor) {
      if (!(await store.removeMember(organizationId, userId))) throw notMember();
      await events.record({ type: 'organization.member_removed', actor, userId, detail: { organizationId } });
    },

    async members(organizationId) {
      await organization(organizationId);
      return store.members(organizationId);
    },

    async createRole(input, actor) {
      const name = checkRoleName(input.name);
      const grants = await resolved(input.permissions ?? []);
      if ((await store.roles()).length >= ORGANIZATION_ROLES_MAX)
        throw invalid(`The template has ${ORGANIZATION_ROLES_MAX} roles, the most it keeps.`);
      const id = randomToken('orole_', 12);
      const managesOrganization = input.managesOrganization === true;
      if ((await store.insertRole({ id, name, managesOrganization, at: now() }, grants)) === 'name taken')
        throw invalid(`An organization role named ${name} exists already.`);
      await events.record({
        type: 'organization_role.created',
        actor,
        detail: { roleId: id, name, ...(managesOrganization ? { managesOrganization: 'yes' } : {}) },
      });
      return role(id);
    },

    async updateRole(key, change, actor) {
      const { id } = await role(key);
      const name = change.name === undefined ? undefined : checkRoleName(change.name);
      const grants = change.permissions === undefined ? undefined : await resolved(change.permissions);
      const manages = change.managesOrganization === undefined ? undefined : change.managesOrganization === true;
      const outcome = await store.updateRole(
        id,
        {
          ...(name !== undefined ? { name } : {}),
          ...(grants ? { grants } : {}),
          ...(manages !== undefined ? { managesOrganization: manages } : {}),
        },
        now(),
      );
      if (outcome === 'gone') throw new ServiceError('ERR_NOT_FOUND', 'No organization role has this name.');
      if (outcome === 'name taken') throw invalid(`An organization role named ${name} exists already.`);
      await events.record({
        type: 'organization_role.updated',
        actor,
        detail: {
          roleId: id,
          ...(name ? { name } : {}),
          ...(manages !== undefined ? { managesOrganization: manages ? 'yes' : 'no' } : {}),
        },
      });
      return role(id);
    },

    async deleteRole(key, actor) {
      const { id, name } = await role(key);
      if (!(await store.deleteRole(id))) throw new ServiceError('ERR_NOT_FOUND', 'No organization role has this name.');
      await events.record({ type: 'organization_role.deleted', actor, detail: { roleId: id, name } });
    },

    roles: () => store.roles(),

    async membership(userId, organizationId) {
      const [found, held] = await Promise.all([store.getOrganization(organizationId), store.member(organizationId, userId)]);
      return found && held ? { organization: found, roles: held.roles } : undefined;
    },
    memberPermissions: (userId, organizationId, api) => store.memberPermissions(organizationId, userId, api),
    organizationsOf: (userId) => store.organizationsOf(userId),
    async membershipsOf(userId) {
      const [organizations, held] = await Promise.all([store.organizationsOf(userId), store.roleNamesOf(userId)]);
      return organizations.map((organization) => ({
        organization,
        roles: held.filter((role) => role.organizationId === organization.id).map((role) => role.name),
      }));
    },
    find: (organizationId) => store.getOrganization(organizationId),
  };
}
