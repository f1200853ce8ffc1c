import type { Kysely, Migration } from 'kysely';

/** APIs, roles and permissions (issue 37). */
export const migrations0026: Record<string, Migration> = {};

// Issue 37: the APIs an operator registers (their identifier is an access token's audience,
// unique), the permissions each defines, roles (named sets of (API, permission) pairs) and the
// roles each user holds. No foreign keys, as elsewhere: apis/store.ts removes what hangs on a
// deleted API, permission or role in the same transaction, and users/store.ts a deleted user's roles.
migrations0026['0026_apis'] = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('apis')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('identifier', 'text', (c) => c.notNull().unique())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('api_permissions')
      .addColumn('api_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('api_permissions_pk', ['api_id', 'name'])
      .execute();
    await db.schema
      .createTable('roles')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('role_permissions')
      .addColumn('role_id', 'text', (c) => c.notNull())
      .addColumn('api_id', 'text', (c) => c.notNull())
      .addColumn('permission', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('role_permissions_pk', ['role_id', 'api_id', 'permission'])
      .execute();
    await db.schema.createIndex('role_permissions_api').on('role_permissions').columns(['api_id', 'permission']).execute();
    await db.schema
      .createTable('user_roles')
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('role_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('assigned_by', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('user_roles_pk', ['user_id', 'role_id'])
      .execute();
    await db.schema.createIndex('user_roles_role').on('user_roles').column('role_id').execute();
  },
};
