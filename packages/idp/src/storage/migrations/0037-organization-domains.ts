import { type Kysely, type Migration, sql } from 'kysely';

/** Verified domains and each company's own sign-in (issue 38, organization-domains/). */
export const migrations0037: Record<string, Migration> = {};

// One row per (organization, domain) claim: many organizations may claim a domain while
// pending, only one may hold it verified (the partial unique index). The connection is the
// organization's own provider; deleting the connection stops the routing, deleting the
// organization drops its claims.
migrations0037['0037_organization_domains'] = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('organization_domains')
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
      .addColumn('domain', 'text', (c) => c.notNull())
      .addColumn('verification_token', 'text', (c) => c.notNull())
      .addColumn('verified_at', 'bigint')
      .addColumn('verified_by', 'text')
      .addColumn('connection_id', 'text', (c) => c.references('connections.id').onDelete('set null'))
      .addColumn('allow_email_code', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('join_role', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('organization_domains_pk', ['organization_id', 'domain'])
      .execute();
    await sql`create unique index organization_domains_verified on organization_domains (domain) where verified_at is not null`.execute(db);
    await db.schema.createIndex('organization_domains_connection').on('organization_domains').column('connection_id').execute();
  },
};
