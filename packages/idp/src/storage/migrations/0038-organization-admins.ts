import type { Kysely, Migration } from 'kysely';

/** Organization admins and self-service organizations (issue 38, organizations/self-service.ts). */
export const migrations0038: Record<string, Migration> = {};

// manages_organization: a member holding such a role manages that organization (and only that
// one) from the account center. created_by: the user who made the organization from the account
// center (null for the operator's), which the per-user creation limit counts.
migrations0038['0038_organization_admins'] = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('organization_roles')
      .addColumn('manages_organization', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.alterTable('organizations').addColumn('created_by', 'text').execute();
    await db.schema.createIndex('organizations_created_by').on('organizations').column('created_by').execute();
  },
};
