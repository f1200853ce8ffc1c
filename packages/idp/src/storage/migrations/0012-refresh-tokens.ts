import type { Kysely, Migration } from 'kysely';

export const migrations0012: Record<string, Migration> = {};

// Issue 14: refresh tokens (families rotated on every use, revoked as a whole on reuse), the
// scope a code was granted (offline_access), and each client's post-logout redirect URIs.
migrations0012['0012_refresh_tokens'] = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('auth_codes').addColumn('scope', 'text').execute();
    await db.schema.alterTable('authorization_requests').addColumn('scope', 'text').execute();
    await db.schema
      .alterTable('clients')
      .addColumn('post_logout_redirect_uris', 'text', (c) => c.notNull().defaultTo('[]'))
      .execute();
    await db.schema
      .createTable('refresh_token_families')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('device_id', 'text', (c) => c.notNull())
      .addColumn('scope', 'text', (c) => c.notNull())
      .addColumn('amr', 'text', (c) => c.notNull())
      .addColumn('auth_time', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('revoked_at', 'bigint')
      .addColumn('revoked_reason', 'text')
      .execute();
    await db.schema.createIndex('refresh_token_families_user').on('refresh_token_families').column('user_id').execute();
    await db.schema.createIndex('refresh_token_families_expires').on('refresh_token_families').column('expires_at').execute();
    await db.schema
      .createTable('refresh_tokens')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('family_id', 'text', (c) => c.notNull())
      .addColumn('access_token_jti', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('family_expires_at', 'bigint', (c) => c.notNull())
      .addColumn('used_at', 'bigint')
      .execute();
    await db.schema.createIndex('refresh_tokens_family').on('refresh_tokens').column('family_id').execute();
    await db.schema.createIndex('refresh_tokens_family_expires').on('refresh_tokens').column('family_expires_at').execute();
  },
};
