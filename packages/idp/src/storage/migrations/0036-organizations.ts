import { type Kysely, type Migration, sql } from 'kysely';

/** Organizations, their members and organization roles (issue 38, organizations/). */
export const migrations0036: Record<string, Migration> = {};

// An organization and its members; organization roles are one service-wide template (every
// organization has the same roles), each a set of (API, permission) pairs like apis/'s roles;
// a member holds roles in each organization apart. external_id: the id a provisioning system
// (SCIM) knows the organization or the membership by. Deleting an organization, a user or a
// role takes what hangs on it with it (the foreign keys cascade, on SQLite and PostgreSQL).
migrations0036['0036_organizations'] = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('organizations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('external_id', 'text')
      .addColumn('mfa_required', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await sql`create unique index organizations_external_id on organizations (external_id) where external_id is not null`.execute(db);
    await db.schema
      .createTable('organization_members')
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('external_id', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('added_by', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('organization_members_pk', ['organization_id', 'user_id'])
      .execute();
    await db.schema.createIndex('organization_members_user').on('organization_members').column('user_id').execute();
    await sql`create unique index organization_members_external_id on organization_members (organization_id, external_id) where external_id is not null`.execute(
      db,
    );
    await db.schema
      .createTable('organization_roles')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('organization_role_permissions')
      .addColumn('role_id', 'text', (c) => c.notNull().references('organization_roles.id').onDelete('cascade'))
      .addColumn('api_id', 'text', (c) => c.notNull().references('apis.id').onDelete('cascade'))
      .addColumn('permission', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('organization_role_permissions_pk', ['role_id', 'api_id', 'permission'])
      .execute();
    await db.schema
      .createTable('organization_member_roles')
      .addColumn('organization_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('role_id', 'text', (c) => c.notNull().references('organization_roles.id').onDelete('cascade'))
      .addPrimaryKeyConstraint('organization_member_roles_pk', ['organization_id', 'user_id', 'role_id'])
      .addForeignKeyConstraint(
        'organization_member_roles_member',
        ['organization_id', 'user_id'],
        'organization_members',
        ['organization_id', 'user_id'],
        (fk) => fk.onDelete('cascade'),
      )
      .execute();
    // An invitation to join an organization: its link's token kept as a keyed hash (id_hash), the
    // public id (inv_…) the operator lists and revokes it by; spent once, by the invited address.
    await db.schema
      .createTable('organization_invitations')
      .addColumn('id_hash', 'text', (c) => c.primaryKey())
      .addColumn('id', 'text', (c) => c.notNull().unique())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('role_ids', 'text', (c) => c.notNull())
      .addColumn('invited_by', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('accepted_at', 'bigint')
      .addColumn('accepted_user_id', 'text')
      .addColumn('revoked_at', 'bigint')
      .execute();
    await db.schema.createIndex('organization_invitations_organization').on('organization_invitations').column('organization_id').execute();
    // The organization an app asked for (`organization` at /authorize), carried from the
    // pending request to its code and the refresh token family: null for none.
    for (const table of ['authorization_requests', 'auth_codes', 'refresh_token_families'])
      await db.schema.alterTable(table).addColumn('organization_id', 'text').execute();
  },
};
