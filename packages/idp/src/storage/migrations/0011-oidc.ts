import type { Kysely, Migration } from 'kysely';

export const migrations0011: Record<string, Migration> = {};

// Issue 14: OIDC clients (redirect URIs, public clients), the authorization endpoint's pending
// requests, codes bound to a redirect URI and nonce, and the service's sign-in sessions (oidc/).
migrations0011['0011_oidc'] = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('clients')
      .addColumn('redirect_uris', 'text', (c) => c.notNull().defaultTo('[]'))
      .execute();
    await db.schema
      .alterTable('clients')
      .addColumn('client_type', 'text', (c) => c.notNull().defaultTo('confidential'))
      .execute();
    await db.schema.alterTable('auth_codes').addColumn('redirect_uri', 'text').execute();
    await db.schema.alterTable('auth_codes').addColumn('nonce', 'text').execute();
    await db.schema
      .createTable('authorization_requests')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('browser_binding_hash', 'text', (c) => c.notNull())
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('redirect_uri', 'text', (c) => c.notNull())
      .addColumn('state', 'text')
      .addColumn('nonce', 'text')
      .addColumn('code_challenge', 'text')
      .addColumn('prompt', 'text')
      .addColumn('max_age_seconds', 'bigint')
      .addColumn('login_hint', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('consumed_at', 'bigint')
      .execute();
    await db.schema
      .createTable('sign_in_sessions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('device_id', 'text', (c) => c.notNull())
      .addColumn('amr', 'text', (c) => c.notNull())
      .addColumn('auth_time', 'bigint', (c) => c.notNull())
      .addColumn('last_used_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('ended_at', 'bigint')
      .execute();
    await db.schema.createIndex('sign_in_sessions_device').on('sign_in_sessions').column('device_id').execute();
  },
};
