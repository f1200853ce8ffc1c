import type { Kysely, Migration } from 'kysely';

/** Branding (issue 28): the service's settings and each application's branding. */
export const migrations0021: Record<string, Migration> = {};

// The operator's service-wide settings (the product name), and per application its display
// name, accent colour, terms and privacy pages, mail sender name and logo (base64 text, so the
// same column serves SQLite and PostgreSQL; at most LOGO_MAX_BYTES), found by its content hash.
migrations0021['0021_branding'] = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('settings')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('client_branding')
      .addColumn('client_id', 'text', (c) => c.primaryKey())
      .addColumn('display_name', 'text')
      .addColumn('accent', 'text')
      .addColumn('terms_url', 'text')
      .addColumn('privacy_url', 'text')
      .addColumn('mail_sender_name', 'text')
      .addColumn('logo_base64', 'text')
      .addColumn('logo_type', 'text')
      .addColumn('logo_sha256', 'text')
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('client_branding_logo').on('client_branding').column('logo_sha256').execute();
  },
};
