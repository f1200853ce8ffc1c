import type { AdminApi, AdminGrant, AdminRole } from 'service-protocol';
import { isPostgres } from '../storage/database.js';
import { afterRow, type PageStart } from '../storage/pagination.js';
import type { Db } from '../storage/schema.js';

/** An API as the store holds it: the operator's view (AdminApi). */
export type ApiRecord = AdminApi;
/** A role with the (API identifier, permission) pairs it grants. */
export type RoleRecord = AdminRole;

/** Code-unit order, the same on SQLite and PostgreSQL (whose collations differ). */
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const byGrant = (a: AdminGrant, b: AdminGrant) => byText(a.api, b.api) || byText(a.permission, b.permission);

/** A role's grants resolved to their API's id, or those that name no permission of an existing API. */
type GrantResolution = { grants: Array<{ apiId: string } & AdminGrant> } | { missing: AdminGrant[] };

/** Why an assignment was not made. */
export type AssignOutcome = 'assigned' | 'held already' | 'no user' | 'no role' | 'too many';

/**
 * APIs, their permissions, roles and assignments (apis/). Each change is one transaction; on
 * PostgreSQL the rows a change relies on are read FOR SHARE and removals delete the row others
 * rely on first, so a role never keeps a permission removed meanwhile, nor a user a role deleted
 * meanwhile (SQLite runs one writer at a time). Reads join through the permissions and roles
 * that exist, so a row left behind could grant nothing either.
 */
export function createApiStore(db: Db) {
  /** What a user's roles grant on one API: their (role, permission) rows, only permissions the API still defines. */
  const userGrantsOn = (userId: string, apiIdentifier: string) =>
    db
      .selectFrom('user_roles')
      .innerJoin('roles', 'roles.id', 'user_roles.role_id')
      .innerJoin('role_permissions', 'role_permissions.role_id', 'roles.id')
      .innerJoin('apis', 'apis.id', 'role_permissions.api_id')
      .innerJoin('api_permissions', (join) =>
        join
          .onRef('api_permissions.api_id', '=', 'role_permissions.api_id')
          .onRef('api_permissions.name', '=', 'role_permissions.permission'),
      )
      .where('user_roles.user_id', '=', userId)
      .where('apis.identifier', '=', apiIdentifier);

  const shared = isPostgres(db);

  async function permissionsOf(apiIds: string[], tx: Db = db): Promise<Map<string, string[]>> {
    const byApi = new Map<string, string[]>(apiIds.map((id) => [id, []]));
    if (apiIds.length === 0) return byApi;
    const rows = await tx.selectFrom('api_permissions').select(['api_id', 'name']).where('api_id', 'in', apiIds).execute();
    for (const row of rows) byApi.get(row.api_id)?.push(row.name);
    for (const names of byApi.values()) names.sort(byText);
    return byApi;
  }

  async function apisFrom(
    rows: Array<{
      id: string;
      identifier: string;
      name: string;
      resource_server_client_id: string | null;
      roles_in_token: number;
      created_at: number;
      updated_at: number;
    }>,
    tx: Db = db,
  ) {
    const permissions = await permissionsOf(
      rows.map((row) => row.id),
      tx,
    );
    return rows.map(
      (row): ApiRecord => ({
        id: row.id,
        identifier: row.identifier,
        name: row.name,
        permissions: permissions.get(row.id) ?? [],
        resourceServerClientId: row.resource_server_client_id,
        rolesInToken: Number(row.roles_in_token ?? 0) !== 0,
        createdAt: Number(row.created_at),
        updatedAt: Number(row.updated_at),
      }),
    );
  }

  async function rolesFrom(rows: Array<{ id: string; name: string; created_at: number; updated_at: number }>, tx: Db = db) {
    const grants = new Map<string, AdminGrant[]>(rows.map((row) => [row.id, []]));
    if (rows.length > 0) {
      const granted = await tx
        .selectFrom('role_permissions')
        .innerJoin('apis', 'apis.id', 'role_permissions.api_id')
        .innerJoin('api_permissions', (join) =>
          join
            .onRef('api_permissions.api_id', '=', 'role_permissions.api_id')
            .onRef('api_permissions.name', '=', 'role_permissions.permission'),
        )
        .select(['role_permissions.role_id', 'apis.identifier', 'role_permissions.permission'])
        .where('role_permissions.role_id', 'in', [...grants.keys()])
        .execute();
      for (const row of granted) grants.get(row.role_id)?.push({ api: row.identifier, permission: row.permission });
    }
    return rows.map(
      (row): RoleRecord => ({
        id: row.id,
        name: row.name,
        permissions: (grants.get(row.id) ?? []).sort(byGrant),
        createdAt: Number(row.created_at),
        updatedAt: Number(row.updated_at),
      }),
    );
  }

  /** The grants as (API id, identifier, permission), or those naming no permission of an existing API; read FOR SHARE on PostgreSQL. */
  async function resolveGrants(tx: Db, wanted: AdminGrant[]): Promise<GrantResolution> {
    const identifiers = [...new Set(wanted.map((grant) => grant.api))];
    if (identifiers.length === 0) return { grants: [] };
    let query = tx
      .selectFrom('apis')
      .innerJoin('api_permissions', 'api_permissions.api_id', 'apis.id')
      .select(['apis.id', 'apis.identifier', 'api_permissions.name'])
      .where('apis.identifier', 'in', identifiers);
    if (shared) query = query.forShare();
    const known = new Map((await query.execute()).map((row) => [`${row.identifier} ${row.name}`, row.id]));
    const missing = wanted.filter((grant) => !known.has(`${grant.api} ${grant.permission}`));
    if (missing.length > 0) return { missing };
    return { grants: wanted.map((grant) => ({ ...grant, apiId: known.get(`${grant.api} ${grant.permission}`) as string })) };
  }

  /** A role's row; `lock`: FOR UPDATE on PostgreSQL (inside a change's transaction). */
  async function roleRow(tx: Db, where: { id: string } | { name: string }, lock = false) {
    let query = tx.selectFrom('roles').selectAll();
    query = 'id' in where ? query.where('id', '=', where.id) : query.where('name', '=', where.name);
    if (lock && shared) query = query.forUpdate();
    return query.executeTakeFirst();
  }

  /**
   * A client an API's resource server may authenticate as (RFC 7662 4): one that exists and is
   * confidential or a machine (a public client cannot authenticate at the introspection endpoint). Read FOR
   * SHARE on PostgreSQL, so a client deleted meanwhile (clients/store.ts clears the column) waits.
   */
  async function isAuthenticatingClient(tx: Db, clientId: string): Promise<boolean> {
    let query = tx.selectFrom('clients').select('id').where('id', '=', clientId).where('client_type', 'in', ['confidential', 'machine']);
    if (shared) query = query.forShare();
    return (await query.executeTakeFirst()) !== undefined;
  }

  return {
    async countApis(): Promise<number> {
      const row = await db
        .selectFrom('apis')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    },

    /** Inserts the API and its permissions; nothing is written when its identifier is taken or its resource server's client is not confidential. */
    async insertApi(api: {
      id: string;
      identifier: string;
      name: string;
      permissions: string[];
      resourceServerClientId: string | null;
      rolesInToken: boolean;
      at: number;
    }): Promise<'created' | 'taken' | 'no client'> {
      return db.transaction().execute(async (tx) => {
        if (api.resourceServerClientId !== null && !(await isAuthenticatingClient(tx, api.resourceServerClientId))) return 'no client';
        const inserted = await tx
          .insertInto('apis')
          .values({
            id: api.id,
            identifier: api.identifier,
            name: api.name,
            resource_server_client_id: api.resourceServerClientId,
            roles_in_token: api.rolesInToken ? 1 : 0,
            created_at: api.at,
            updated_at: api.at,
          })
          .onConflict((oc) => oc.column('identifier').doNothing())
          .returning('id')
          .executeTakeFirst();
        if (!inserted) return 'taken';
        if (api.permissions.length > 0)
          await tx
            .insertInto('api_permissions')
            .values(api.permissions.map((name) => ({ api_id: api.id, name })))
            .execute();
        return 'created';
      });
    },

    async findApi(where: { id: string } | { identifier: string }): Promise<ApiRecord | undefined> {
      let query = db.selectFrom('apis').selectAll();
      query = 'id' in where ? query.where('id', '=', where.id) : query.where('identifier', '=', where.identifier);
      const row = await query.executeTakeFirst();
      return row && (await apisFrom([row]))[0];
    },

    async pageApis(after: PageStart, limit: number): Promise<ApiRecord[]> {
      let query = db.selectFrom('apis').selectAll().orderBy('created_at').orderBy('id').limit(limit);
      if (after) query = query.where(afterRow(after));
      return apisFrom(await query.execute());
    },

    /**
     * Renames the API and/or replaces its permissions: a permission removed leaves every role in
     * the same transaction (the API's row first, so a role change reading it FOR SHARE waits or
     * sees it gone). Undefined when the API is unknown.
     */
    async updateApi(
      id: string,
      change: { name?: string; permissions?: string[]; resourceServerClientId?: string | null; rolesInToken?: boolean },
      at: number,
    ): Promise<{ api: ApiRecord; added: string[]; removed: string[]; rolesChanged: number } | 'no client' | undefined> {
      return db.transaction().execute(async (tx) => {
        let query = tx.selectFrom('apis').selectAll().where('id', '=', id);
        if (shared) query = query.forUpdate();
        const row = await query.executeTakeFirst();
        if (!row) return undefined;
        const resourceServer = change.resourceServerClientId === undefined ? row.resource_server_client_id : change.resourceServerClientId;
        const rolesInToken = change.rolesInToken === undefined ? row.roles_in_token : change.rolesInToken ? 1 : 0;
        if (
          resourceServer !== null &&
          resourceServer !== row.resource_server_client_id &&
          !(await isAuthenticatingClient(tx, resourceServer))
        )
          return 'no client';
        const before = (await permissionsOf([id], tx)).get(id) ?? [];
        const wanted = change.permissions ?? before;
        const removed = before.filter((name) => !wanted.includes(name));
        const added = wanted.filter((name) => !before.includes(name));
        let rolesChanged = 0;
        if (removed.length > 0) {
          await tx.deleteFrom('api_permissions').where('api_id', '=', id).where('name', 'in', removed).execute();
          rolesChanged = await stripGrants(tx, id, removed);
        }
        if (added.length > 0)
          await tx
            .insertInto('api_permissions')
            .values(added.map((name) => ({ api_id: id, name })))
            .execute();
        await tx
          .updateTable('apis')
          .set({ name: change.name ?? row.name, resource_server_client_id: resourceServer, roles_in_token: rolesInToken, updated_at: at })
          .where('id', '=', id)
          .execute();
        const [api] = await apisFrom(
          [
            {
              ...row,
              name: change.name ?? row.name,
              resource_server_client_id: resourceServer,
              roles_in_token: rolesInToken,
              updated_at: at,
            },
          ],
          tx,
        );
        return { api: api as ApiRecord, added, removed, rolesChanged };
      });
    },

    /** Deletes the API; its permissions leave every role in the same transaction. Undefined when unknown. */
    async deleteApi(id: string): Promise<{ api: ApiRecord; rolesChanged: number } | undefined> {
      return db.transaction().execute(async (tx) => {
        const row = await tx.selectFrom('apis').selectAll().where('id', '=', id).executeTakeFirst();
        if (!row) return undefined;
        const [api] = await apisFrom([row], tx);
        await tx.deleteFrom('api_permissions').where('api_id', '=', id).execute();
        const rolesChanged = await stripGrants(tx, id);
        const deleted = await tx.deleteFrom('apis').where('id', '=', id).executeTakeFirst();
        if (Number(deleted.numDeletedRows) !== 1) return undefined;
        return { api: api as ApiRecord, rolesChanged };
      });
    },

    /**
     * Replaces what a machine client is granted (client_credentials): every grant one of a
     * registered API's permissions, or nothing changes and the missing ones are named.
     */
    async setClientGrants(clientId: string, grants: AdminGrant[]): Promise<AdminGrant[] | { missing: AdminGrant[] }> {
      return db.transaction().execute(async (tx) => {
        const resolved = await resolveGrants(tx, grants);
        if ('missing' in resolved) return { missing: resolved.missing };
        await tx.deleteFrom('client_grants').where('client_id', '=', clientId).execute();
        if (resolved.grants.length > 0)
          await tx
            .insertInto('client_grants')
            .values(resolved.grants.map((grant) => ({ client_id: clientId, api_id: grant.apiId, permission: grant.permission })))
            .execute();
        return clientGrantsOf(tx, clientId);
      });
    },

    clientGrants: (clientId: string) => clientGrantsOf(db, clientId),

    /** The permissions granted to a machine client on the API, sorted; only permissions the API still defines. */
    async clientPermissions(clientId: string, apiIdentifier: string): Promise<string[]> {
      const rows = await db
        .selectFrom('client_grants')
        .innerJoin('apis', 'apis.id', 'client_grants.api_id')
        .innerJoin('api_permissions', (join) =>
          join.onRef('api_permissions.api_id', '=', 'client_grants.api_id').onRef('api_permissions.name', '=', 'client_grants.permission'),
        )
        .select('client_grants.permission')
        .where('client_grants.client_id', '=', clientId)
        .where('apis.identifier', '=', apiIdentifier)
        .execute();
      return rows.map((row) => row.permission).sort(byText);
    },

    async countRoles(): Promise<number> {
      const row = await db
        .selectFrom('roles')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    },

    /** Inserts the role with its grants: `taken` when the name is, `missing` the grants no API defines; nothing written then. */
    async insertRole(role: {
      id: string;
      name: string;
      grants: AdminGrant[];
      at: number;
    }): Promise<RoleRecord | 'taken' | { missing: AdminGrant[] }> {
      return db.transaction().execute(async (tx) => {
        const resolved = await resolveGrants(tx, role.grants);
        if ('missing' in resolved) return { missing: resolved.missing };
        const inserted = await tx
          .insertInto('roles')
          .values({ id: role.id, name: role.name, created_at: role.at, updated_at: role.at })
          .onConflict((oc) => oc.column('name').doNothing())
          .returning('id')
          .executeTakeFirst();
        if (!inserted) return 'taken';
        await insertGrants(tx, role.id, resolved.grants);
        const [made] = await rolesFrom([{ id: role.id, name: role.name, created_at: role.at, updated_at: role.at }], tx);
        return made as RoleRecord;
      });
    },

    async findRole(where: { id: string } | { name: string }): Promise<RoleRecord | undefined> {
      const row = await roleRow(db, where);
      return row && (await rolesFrom([row]))[0];
    },

    async pageRoles(after: PageStart, limit: number): Promise<RoleRecord[]> {
      let query = db.selectFrom('roles').selectAll().orderBy('created_at').orderBy('id').limit(limit);
      if (after) query = query.where(afterRow(after));
      return rolesFrom(await query.execute());
    },

    /**
     * Renames the role and/or replaces its grants. Undefined when the role is unknown, `taken`
     * when the new name is another role's, `missing` the grants no API defines; nothing written then.
     */
    async updateRole(
      id: string,
      change: { name?: string; grants?: AdminGrant[] },
      at: number,
    ): Promise<{ before: RoleRecord; role: RoleRecord } | 'taken' | { missing: AdminGrant[] } | undefined> {
      return db.transaction().execute(async (tx) => {
        const row = await roleRow(tx, { id }, true);
        if (!row) return undefined;
        const [before] = await rolesFrom([row], tx);
        if (change.name !== undefined && change.name !== row.name) {
          const other = await tx.selectFrom('roles').select('id').where('name', '=', change.name).executeTakeFirst();
          if (other) return 'taken';
        }
        if (change.grants) {
          const resolved = await resolveGrants(tx, change.grants);
          if ('missing' in resolved) return { missing: resolved.missing };
          await tx.deleteFrom('role_permissions').where('role_id', '=', id).execute();
          await insertGrants(tx, id, resolved.grants);
        }
        const name = change.name ?? row.name;
        await tx.updateTable('roles').set({ name, updated_at: at }).where('id', '=', id).execute();
        const [role] = await rolesFrom([{ ...row, name, updated_at: at }], tx);
        return { before: before as RoleRecord, role: role as RoleRecord };
      });
    },

    /**
     * Deletes the role (its row first, so an assignment reading it FOR SHARE waits or sees it
     * gone), what it grants and every assignment of it. Undefined when unknown.
     */
    async deleteRole(id: string): Promise<{ role: RoleRecord; holders: number } | undefined> {
      return db.transaction().execute(async (tx) => {
        const row = await roleRow(tx, { id }, true);
        if (!row) return undefined;
        const [role] = await rolesFrom([row], tx);
        await tx.deleteFrom('roles').where('id', '=', id).execute();
        await tx.deleteFrom('role_permissions').where('role_id', '=', id).execute();
        const holders = await tx.deleteFrom('user_roles').where('role_id', '=', id).executeTakeFirst();
        return { role: role as RoleRecord, holders: Number(holders.numDeletedRows) };
      });
    },

    /** Whether a user with this id exists (users/ owns the table: a read, schema.ts lists it). */
    async userExists(userId: string): Promise<boolean> {
      return (await db.selectFrom('users').select('id').where('id', '=', userId).executeTakeFirst()) !== undefined;
    },

    /**
     * Gives the user the role: the user and the role are read FOR SHARE on PostgreSQL in the same
     * transaction, so a deletion of either meanwhile waits or is seen (users/store.ts deletes the
     * user's row before their roles).
     */
    async assign(userId: string, roleId: string, at: number, actor: string, max: number): Promise<AssignOutcome> {
      return db.transaction().execute(async (tx) => {
        let user = tx.selectFrom('users').select('id').where('id', '=', userId);
        if (shared) user = user.forShare();
        if (!(await user.executeTakeFirst())) return 'no user';
        let role = tx.selectFrom('roles').select('id').where('id', '=', roleId);
        if (shared) role = role.forShare();
        if (!(await role.executeTakeFirst())) return 'no role';
        const held = await tx.selectFrom('user_roles').select('role_id').where('user_id', '=', userId).execute();
        if (held.some((row) => row.role_id === roleId)) return 'held already';
        if (held.length >= max) return 'too many';
        const inserted = await tx
          .insertInto('user_roles')
          .values({ user_id: userId, role_id: roleId, created_at: at, assigned_by: actor })
          .onConflict((oc) => oc.columns(['user_id', 'role_id']).doNothing())
          .executeTakeFirst();
        return Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1 ? 'assigned' : 'held already';
      });
    },

    /** Takes the role from the user; false when they did not hold it. */
    async unassign(userId: string, roleId: string): Promise<boolean> {
      const deleted = await db.deleteFrom('user_roles').where('user_id', '=', userId).where('role_id', '=', roleId).executeTakeFirst();
      return Number(deleted.numDeletedRows) === 1;
    },

    /** The roles the user holds, by name. */
    async rolesOf(userId: string): Promise<RoleRecord[]> {
      const rows = await db
        .selectFrom('user_roles')
        .innerJoin('roles', 'roles.id', 'user_roles.role_id')
        .select(['roles.id', 'roles.name', 'roles.created_at', 'roles.updated_at'])
        .where('user_roles.user_id', '=', userId)
        .execute();
      return (await rolesFrom(rows)).sort((a, b) => byText(a.name, b.name));
    },

    /** The permissions the user's roles grant on the API, each once, sorted; only permissions the API still defines. */
    async userPermissions(userId: string, apiIdentifier: string): Promise<string[]> {
      const rows = await userGrantsOn(userId, apiIdentifier).select('role_permissions.permission').distinct().execute();
      return rows.map((row) => row.permission).sort(byText);
    },

    /** The names of the roles the user holds, sorted. */
    async userRoleNames(userId: string): Promise<string[]> {
      const rows = await db
        .selectFrom('user_roles')
        .innerJoin('roles', 'roles.id', 'user_roles.role_id')
        .select('roles.name')
        .where('user_roles.user_id', '=', userId)
        .execute();
      return rows.map((row) => row.name).sort(byText);
    },

    /** The names of the user's roles that grant any permission the API still defines, sorted. */
    async userRoleNamesFor(userId: string, apiIdentifier: string): Promise<string[]> {
      const rows = await userGrantsOn(userId, apiIdentifier).select('roles.name').distinct().execute();
      return rows.map((row) => row.name).sort(byText);
    },
  };
}

/** What a machine client is granted, by API identifier then permission. */
async function clientGrantsOf(db: Db, clientId: string): Promise<AdminGrant[]> {
  const rows = await db
    .selectFrom('client_grants')
    .innerJoin('apis', 'apis.id', 'client_grants.api_id')
    .select(['apis.identifier', 'client_grants.permission'])
    .where('client_grants.client_id', '=', clientId)
    .execute();
  return rows
    .map((row) => ({ api: row.identifier, permission: row.permission }))
    .sort((a, b) => byText(a.api, b.api) || byText(a.permission, b.permission));
}

/** Removes an API's permissions (all, or these) from every role and machine client; how many roles changed. */
async function stripGrants(tx: Db, apiId: string, permissions?: string[]): Promise<number> {
  let fromClients = tx.deleteFrom('client_grants').where('api_id', '=', apiId);
  if (permissions) fromClients = fromClients.where('permission', 'in', permissions);
  await fromClients.execute();
  let affected = tx.selectFrom('role_permissions').select('role_id').distinct().where('api_id', '=', apiId);
  if (permissions) affected = affected.where('permission', 'in', permissions);
  const roles = await affected.execute();
  let removal = tx.deleteFrom('role_permissions').where('api_id', '=', apiId);
  if (permissions) removal = removal.where('permission', 'in', permissions);
  await removal.execute();
  return roles.length;
}

async function insertGrants(tx: Db, roleId: string, grants: Array<{ apiId: string; permission: string }>): Promise<void> {
  if (grants.length === 0) return;
  await tx
    .insertInto('role_permissions')
    .values(grants.map((grant) => ({ role_id: roleId, api_id: grant.apiId, permission: grant.permission })))
    .execute();
}

export type ApiStore = ReturnType<typeof createApiStore>;
