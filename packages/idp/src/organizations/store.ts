import type { AdminGrant, AdminOrganization, AdminOrganizationMember, AdminOrganizationRole } from 'service-protocol';
import { isForeignKeyViolation, isPostgres, isUniqueViolation } from '../storage/database.js';
import { afterRow, type PageStart } from '../storage/pagination.js';
import type { Db } from '../storage/schema.js';

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Replaces a member's roles inside the caller's transaction; false (nothing changed) for one who is not a member. */
async function replaceMemberRoles(tx: Db, organizationId: string, userId: string, roleIds: readonly string[]): Promise<boolean> {
  const member = await tx
    .selectFrom('organization_members')
    .select('user_id')
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (!member) return false;
  await tx.deleteFrom('organization_member_roles').where('organization_id', '=', organizationId).where('user_id', '=', userId).execute();
  if (roleIds.length > 0)
    await tx
      .insertInto('organization_member_roles')
      .values(roleIds.map((role_id) => ({ organization_id: organizationId, user_id: userId, role_id })))
      .execute();
  return true;
}

type OrganizationRow = {
  id: string;
  name: string;
  external_id: string | null;
  mfa_required: number;
  created_at: number;
  updated_at: number;
};
/** What a member holds in one organization: its roles, and whether one of them manages it. */
export interface HeldMembership {
  organization: AdminOrganization;
  roles: string[];
  manages: boolean;
}
/** Thrown inside a transaction to undo it: the change would leave the organization with no admin. */
class LastAdmin extends Error {}
const organizationOf = (row: OrganizationRow): AdminOrganization => ({
  id: row.id,
  name: row.name,
  externalId: row.external_id,
  mfaRequired: Number(row.mfa_required) !== 0,
  createdAt: Number(row.created_at),
  updatedAt: Number(row.updated_at),
});

export type OrganizationChange = { name?: string; externalId?: string | null; mfaRequired?: boolean };
export type ResolvedGrant = AdminGrant & { apiId: string };

/**
 * Organizations, members, organization roles (organizations/). Rows that hang on an organization,
 * a user, a role or an API go with it by their foreign keys; a statement naming one that does not
 * exist is refused by the database itself (isForeignKeyViolation), so no check-then-write race.
 * The member lists read users (their addresses), one of the exceptions schema.ts lists.
 */
export function createOrganizationStore(db: Db) {
  async function rolesOf(roleIds: string[]): Promise<AdminOrganizationRole[]> {
    if (roleIds.length === 0) return [];
    const [roles, grants] = await Promise.all([
      db.selectFrom('organization_roles').selectAll().where('id', 'in', roleIds).orderBy('name').execute(),
      db
        .selectFrom('organization_role_permissions')
        .innerJoin('apis', 'apis.id', 'organization_role_permissions.api_id')
        .innerJoin('api_permissions', (join) =>
          join
            .onRef('api_permissions.api_id', '=', 'organization_role_permissions.api_id')
            .onRef('api_permissions.name', '=', 'organization_role_permissions.permission'),
        )
        .select(['organization_role_permissions.role_id', 'apis.identifier', 'organization_role_permissions.permission'])
        .where('organization_role_permissions.role_id', 'in', roleIds)
        .execute(),
    ]);
    return roles.map((role) => ({
      id: role.id,
      name: role.name,
      permissions: grants
        .filter((grant) => grant.role_id === role.id)
        .map((grant) => ({ api: grant.identifier, permission: grant.permission }))
        .sort((a, b) => byText(a.api, b.api) || byText(a.permission, b.permission)),
      managesOrganization: Number(role.manages_organization) !== 0,
      createdAt: Number(role.created_at),
      updatedAt: Number(role.updated_at),
    }));
  }

  const memberRows = (organizationId: string) =>
    db
      .selectFrom('organization_members')
      .innerJoin('users', 'users.id', 'organization_members.user_id')
      .select([
        'organization_members.organization_id',
        'organization_members.user_id',
        'organization_members.external_id',
        'organization_members.created_at',
        'organization_members.added_by',
        'users.email',
      ])
      .where('organization_members.organization_id', '=', organizationId);

  async function membersFrom(rows: Awaited<ReturnType<ReturnType<typeof memberRows>['execute']>>): Promise<AdminOrganizationMember[]> {
    if (rows.length === 0) return [];
    const held = await db
      .selectFrom('organization_member_roles')
      .innerJoin('organization_roles', 'organization_roles.id', 'organization_member_roles.role_id')
      .select(['organization_member_roles.user_id', 'organization_roles.name'])
      .where('organization_member_roles.organization_id', '=', rows[0]?.organization_id as string)
      .where(
        'organization_member_roles.user_id',
        'in',
        rows.map((row) => row.user_id),
      )
      .execute();
    return rows.map((row) => ({
      organizationId: row.organization_id,
      userId: row.user_id,
      email: row.email,
      roles: held
        .filter((h) => h.user_id === row.user_id)
        .map((h) => h.name)
        .sort(byText),
      externalId: row.external_id,
      createdAt: Number(row.created_at),
      addedBy: row.added_by,
    }));
  }

  return {
    async insertOrganization(organization: AdminOrganization): Promise<'inserted' | 'external id taken'> {
      try {
        await db
          .insertInto('organizations')
          .values({
            id: organization.id,
            name: organization.name,
            external_id: organization.externalId,
            mfa_required: organization.mfaRequired ? 1 : 0,
            created_at: organization.createdAt,
            updated_at: organization.updatedAt,
          })
          .execute();
        return 'inserted';
      } catch (error) {
        if (isUniqueViolation(error)) return 'external id taken';
        throw error;
      }
    },

    async getOrganization(id: string): Promise<AdminOrganization | undefined> {
      const row = await db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
      return row ? organizationOf(row) : undefined;
    },

    async pageOrganizations(after: PageStart, limit: number): Promise<AdminOrganization[]> {
      let query = db.selectFrom('organizations').selectAll().orderBy('created_at').orderBy('id').limit(limit);
      if (after) query = query.where(afterRow(after));
      return (await query.execute()).map(organizationOf);
    },

    async updateOrganization(id: string, change: OrganizationChange, at: number): Promise<'updated' | 'gone' | 'external id taken'> {
      try {
        const updated = await db
          .updateTable('organizations')
          .set({
            updated_at: at,
            ...(change.name !== undefined ? { name: change.name } : {}),
            ...(change.externalId !== undefined ? { external_id: change.externalId } : {}),
            ...(change.mfaRequired !== undefined ? { mfa_required: change.mfaRequired ? 1 : 0 } : {}),
          })
          .where('id', '=', id)
          .executeTakeFirst();
        return Number(updated.numUpdatedRows) > 0 ? 'updated' : 'gone';
      } catch (error) {
        if (isUniqueViolation(error)) return 'external id taken';
        throw error;
      }
    },

    async deleteOrganization(id: string): Promise<boolean> {
      return Number((await db.deleteFrom('organizations').where('id', '=', id).executeTakeFirst()).numDeletedRows) > 0;
    },

    /** The organizations a user belongs to, by name. */
    async organizationsOf(userId: string): Promise<AdminOrganization[]> {
      const rows = await db
        .selectFrom('organizations')
        .innerJoin('organization_members', 'organization_members.organization_id', 'organizations.id')
        .selectAll('organizations')
        .where('organization_members.user_id', '=', userId)
        .orderBy('organizations.name')
        .execute();
      return rows.map(organizationOf);
    },

    /** A user's organization role names in each of their organizations (the picker lists them). */
    async roleNamesOf(userId: string): Promise<Array<{ organizationId: string; name: string }>> {
      const rows = await db
        .selectFrom('organization_member_roles')
        .innerJoin('organization_roles', 'organization_roles.id', 'organization_member_roles.role_id')
        .select(['organization_member_roles.organization_id', 'organization_roles.name'])
        .where('organization_member_roles.user_id', '=', userId)
        .execute();
      return rows.map((row) => ({ organizationId: row.organization_id, name: row.name })).sort((a, b) => byText(a.name, b.name));
    },

    /** A member and the roles given, in one transaction: 'no organization', 'no user' or 'member already' change nothing. */
    async addMember(
      member: { organizationId: string; userId: string; externalId: string | null; addedBy: string; at: number },
      roleIds: string[],
    ): Promise<'added' | 'member already' | 'no organization' | 'no user' | 'external id taken'> {
      const organization = await this.getOrganization(member.organizationId);
      if (!organization) return 'no organization';
      try {
        return await db.transaction().execute(async (tx) => {
          const inserted = await tx
            .insertInto('organization_members')
            .values({
              organization_id: member.organizationId,
              user_id: member.userId,
              external_id: member.externalId,
              created_at: member.at,
              added_by: member.addedBy,
            })
            .onConflict((oc) => oc.columns(['organization_id', 'user_id']).doNothing())
            .executeTakeFirst();
          if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) return 'member already';
          if (roleIds.length > 0)
            await tx
              .insertInto('organization_member_roles')
              .values(roleIds.map((role_id) => ({ organization_id: member.organizationId, user_id: member.userId, role_id })))
              .execute();
          return 'added';
        });
      } catch (error) {
        if (isForeignKeyViolation(error)) return (await this.getOrganization(member.organizationId)) ? 'no user' : 'no organization';
        if (isUniqueViolation(error)) return 'external id taken';
        throw error;
      }
    },

    /** Replaces a member's roles in one transaction; 'not a member' changes nothing. */
    async setMemberRoles(organizationId: string, userId: string, roleIds: string[]): Promise<'set' | 'not a member'> {
      return db
        .transaction()
        .execute(async (tx) => ((await replaceMemberRoles(tx, organizationId, userId, roleIds)) ? 'set' : 'not a member'));
    },

    async removeMember(organizationId: string, userId: string): Promise<boolean> {
      const deleted = await db
        .deleteFrom('organization_members')
        .where('organization_id', '=', organizationId)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return Number(deleted.numDeletedRows) > 0;
    },

    async members(organizationId: string): Promise<AdminOrganizationMember[]> {
      return membersFrom(await memberRows(organizationId).orderBy('users.email').execute());
    },

    async member(organizationId: string, userId: string): Promise<AdminOrganizationMember | undefined> {
      return (await membersFrom(await memberRows(organizationId).where('organization_members.user_id', '=', userId).execute()))[0];
    },

    /** What a member's organization roles grant on one API (only permissions the API still defines). */
    async memberPermissions(organizationId: string, userId: string, apiIdentifier: string): Promise<string[]> {
      const rows = await db
        .selectFrom('organization_member_roles')
        .innerJoin('organization_role_permissions', 'organization_role_permissions.role_id', 'organization_member_roles.role_id')
        .innerJoin('apis', 'apis.id', 'organization_role_permissions.api_id')
        .innerJoin('api_permissions', (join) =>
          join
            .onRef('api_permissions.api_id', '=', 'organization_role_permissions.api_id')
            .onRef('api_permissions.name', '=', 'organization_role_permissions.permission'),
        )
        .select('organization_role_permissions.permission')
        .distinct()
        .where('organization_member_roles.organization_id', '=', organizationId)
        .where('organization_member_roles.user_id', '=', userId)
        .where('apis.identifier', '=', apiIdentifier)
        .execute();
      return rows.map((row) => row.permission).sort(byText);
    },

    /** The (API id, identifier, permission) of each grant, or the grants that name no permission of a registered API. */
    async resolveGrants(grants: readonly AdminGrant[]): Promise<{ grants: ResolvedGrant[] } | { missing: AdminGrant[] }> {
      if (grants.length === 0) return { grants: [] };
      const known = await db
        .selectFrom('api_permissions')
        .innerJoin('apis', 'apis.id', 'api_permissions.api_id')
        .select(['apis.id', 'apis.identifier', 'api_permissions.name'])
        .where(
          'apis.identifier',
          'in',
          grants.map((grant) => grant.api),
        )
        .execute();
      const resolved: ResolvedGrant[] = [];
      const missing: AdminGrant[] = [];
      for (const grant of grants) {
        const row = known.find((k) => k.identifier === grant.api && k.name === grant.permission);
        if (row) resolved.push({ ...grant, apiId: row.id });
        else missing.push(grant);
      }
      return missing.length > 0 ? { missing } : { grants: resolved };
    },

    async insertRole(
      role: { id: string; name: string; managesOrganization: boolean; at: number },
      grants: ResolvedGrant[],
    ): Promise<'inserted' | 'name taken'> {
      try {
        await db.transaction().execute(async (tx) => {
          await tx
            .insertInto('organization_roles')
            .values({
              id: role.id,
              name: role.name,
              manages_organization: role.managesOrganization ? 1 : 0,
              created_at: role.at,
              updated_at: role.at,
            })
            .execute();
          if (grants.length > 0)
            await tx
              .insertInto('organization_role_permissions')
              .values(grants.map((g) => ({ role_id: role.id, api_id: g.apiId, permission: g.permission })))
              .onConflict((oc) => oc.doNothing())
              .execute();
        });
        return 'inserted';
      } catch (error) {
        if (isUniqueViolation(error)) return 'name taken';
        throw error;
      }
    },

    /** Replaces a role's grants (when given) and renames it (when asked). */
    async updateRole(
      id: string,
      change: { name?: string; grants?: ResolvedGrant[]; managesOrganization?: boolean },
      at: number,
    ): Promise<'updated' | 'gone' | 'name taken'> {
      try {
        return await db.transaction().execute(async (tx) => {
          const updated = await tx
            .updateTable('organization_roles')
            .set({
              updated_at: at,
              ...(change.name !== undefined ? { name: change.name } : {}),
              ...(change.managesOrganization !== undefined ? { manages_organization: change.managesOrganization ? 1 : 0 } : {}),
            })
            .where('id', '=', id)
            .executeTakeFirst();
          if (Number(updated.numUpdatedRows) === 0) return 'gone';
          if (change.grants) {
            await tx.deleteFrom('organization_role_permissions').where('role_id', '=', id).execute();
            if (change.grants.length > 0)
              await tx
                .insertInto('organization_role_permissions')
                .values(change.grants.map((g) => ({ role_id: id, api_id: g.apiId, permission: g.permission })))
                .onConflict((oc) => oc.doNothing())
                .execute();
          }
          return 'updated';
        });
      } catch (error) {
        if (isUniqueViolation(error)) return 'name taken';
        throw error;
      }
    },

    async deleteRole(id: string): Promise<boolean> {
      return Number((await db.deleteFrom('organization_roles').where('id', '=', id).executeTakeFirst()).numDeletedRows) > 0;
    },

    async roles(): Promise<AdminOrganizationRole[]> {
      const ids = await db.selectFrom('organization_roles').select('id').execute();
      return rolesOf(ids.map((row) => row.id));
    },

    /** Roles by name or id: the ids found, and the keys that are none. */
    async roleIds(keys: readonly string[]): Promise<{ ids: string[]; unknown: string[] }> {
      if (keys.length === 0) return { ids: [], unknown: [] };
      const rows = await db
        .selectFrom('organization_roles')
        .select(['id', 'name'])
        .where((eb) => eb.or([eb('id', 'in', [...keys]), eb('name', 'in', [...keys])]))
        .execute();
      const ids = new Set<string>();
      const unknown: string[] = [];
      for (const key of keys) {
        const row = rows.find((r) => r.id === key || r.name === key);
        if (row) ids.add(row.id);
        else unknown.push(key);
      }
      return { ids: [...ids], unknown };
    },
    rolesOf,

    /** The user's organizations by name, each with the roles they hold there and whether one manages it. */
    async membershipsOf(userId: string): Promise<HeldMembership[]> {
      const [organizations, held] = await Promise.all([
        this.organizationsOf(userId),
        db
          .selectFrom('organization_member_roles')
          .innerJoin('organization_roles', 'organization_roles.id', 'organization_member_roles.role_id')
          .select(['organization_member_roles.organization_id', 'organization_roles.name', 'organization_roles.manages_organization'])
          .where('organization_member_roles.user_id', '=', userId)
          .execute(),
      ]);
      return organizations.map((organization) => {
        const mine = held.filter((h) => h.organization_id === organization.id);
        return {
          organization,
          roles: mine.map((h) => h.name).sort(byText),
          manages: mine.some((h) => Number(h.manages_organization) !== 0),
        };
      });
    },

    /** Whether the user holds a role that manages this organization (its admin there). */
    async manages(organizationId: string, userId: string): Promise<boolean> {
      const row = await db
        .selectFrom('organization_member_roles')
        .innerJoin('organization_roles', 'organization_roles.id', 'organization_member_roles.role_id')
        .select('organization_member_roles.user_id')
        .where('organization_member_roles.organization_id', '=', organizationId)
        .where('organization_member_roles.user_id', '=', userId)
        .where('organization_roles.manages_organization', '=', 1)
        .executeTakeFirst();
      return row !== undefined;
    },

    /** The organizations a user made in the account center (the self-service limit counts them). */
    async createdBy(userId: string): Promise<number> {
      const row = await db
        .selectFrom('organizations')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('created_by', '=', userId)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    /**
     * A user's own organization (self-service) with them as its first member holding `roleIds`,
     * in one transaction, unless they made `limit` already. The user's row is locked first on
     * PostgreSQL (SQLite serialises writers), so two creations at once cannot both pass the count.
     */
    async insertOwnedOrganization(
      organization: AdminOrganization,
      userId: string,
      roleIds: string[],
      limit: number,
    ): Promise<'inserted' | 'limit reached'> {
      return db.transaction().execute(async (tx) => {
        if (isPostgres(db)) await tx.selectFrom('users').select('id').where('id', '=', userId).forUpdate().execute();
        const made = await tx
          .selectFrom('organizations')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('created_by', '=', userId)
          .executeTakeFirstOrThrow();
        if (Number(made.n) >= limit) return 'limit reached';
        await tx
          .insertInto('organizations')
          .values({
            id: organization.id,
            name: organization.name,
            external_id: null,
            mfa_required: 0,
            created_at: organization.createdAt,
            updated_at: organization.updatedAt,
            created_by: userId,
          })
          .execute();
        await tx
          .insertInto('organization_members')
          .values({
            organization_id: organization.id,
            user_id: userId,
            external_id: null,
            created_at: organization.createdAt,
            added_by: `user:${userId}`,
          })
          .execute();
        if (roleIds.length > 0)
          await tx
            .insertInto('organization_member_roles')
            .values(roleIds.map((role_id) => ({ organization_id: organization.id, user_id: userId, role_id })))
            .execute();
        return 'inserted';
      });
    },

    /**
     * Removes a member, or replaces their roles, unless that leaves the organization with no
     * member holding a managing role (its last admin). One transaction that first locks the
     * organization's row on PostgreSQL (SQLite serialises writers): of two last admins leaving at
     * once, the second sees the first gone and is refused. 'last admin' and 'not a member' change nothing.
     */
    async changeKeepingAdmin(
      organizationId: string,
      userId: string,
      change: { remove: true } | { roleIds: string[] },
    ): Promise<'changed' | 'not a member' | 'last admin'> {
      try {
        return await db.transaction().execute(async (tx) => {
          let lock = tx.selectFrom('organizations').select('id').where('id', '=', organizationId);
          if (isPostgres(db)) lock = lock.forUpdate();
          if (!(await lock.executeTakeFirst())) return 'not a member';
          const managerOf = (member?: string) => {
            let query = tx
              .selectFrom('organization_member_roles')
              .innerJoin('organization_roles', 'organization_roles.id', 'organization_member_roles.role_id')
              .select('organization_member_roles.user_id')
              .where('organization_member_roles.organization_id', '=', organizationId)
              .where('organization_roles.manages_organization', '=', 1);
            if (member !== undefined) query = query.where('organization_member_roles.user_id', '=', member);
            return query.executeTakeFirst();
          };
          // Only a change to an admin can leave none (an organization the operator made may have none at all).
          const wasAdmin = (await managerOf(userId)) !== undefined;
          if ('remove' in change) {
            const deleted = await tx
              .deleteFrom('organization_members')
              .where('organization_id', '=', organizationId)
              .where('user_id', '=', userId)
              .executeTakeFirst();
            if (Number(deleted.numDeletedRows) === 0) return 'not a member';
          } else {
            if (!(await replaceMemberRoles(tx, organizationId, userId, change.roleIds))) return 'not a member';
          }
          if (wasAdmin && !(await managerOf())) throw new LastAdmin();
          return 'changed';
        });
      } catch (error) {
        if (error instanceof LastAdmin) return 'last admin';
        throw error;
      }
    },
  };
}

export type OrganizationStore = ReturnType<typeof createOrganizationStore>;
