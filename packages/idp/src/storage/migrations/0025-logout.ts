import type { Kysely, Migration } from 'kysely';

/** Back-channel and front-channel logout (issue 36). */
export const migrations0025: Record<string, Migration> = {};

// Issue 36: each SSO session gets a `sid` (random and public, OIDC Front-/Back-Channel Logout),
// carried by the codes issued in it and the refresh token families they start; which clients
// got a code in which session (session_clients); the clients' logout URIs; and the webhook
// outbox also carries back-channel logout tokens (`kind`), so they share its leases and retries.
// Rows from before have no sid: their sessions end without a logout token naming one.
migrations0025['0025_logout'] = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('sign_in_sessions').addColumn('sid', 'text').execute();
    await db.schema.alterTable('auth_codes').addColumn('sid', 'text').execute();
    await db.schema.alterTable('refresh_token_families').addColumn('sid', 'text').execute();
    await db.schema.alterTable('clients').addColumn('backchannel_logout_uri', 'text').execute();
    await db.schema
      .alterTable('clients')
      .addColumn('backchannel_logout_session_required', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.alterTable('clients').addColumn('frontchannel_logout_uri', 'text').execute();
    await db.schema
      .alterTable('clients')
      .addColumn('frontchannel_logout_session_required', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createTable('session_clients')
      .addColumn('sid', 'text', (c) => c.notNull())
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('session_clients_pk', ['sid', 'client_id'])
      .execute();
    await db.schema.createIndex('session_clients_user').on('session_clients').column('user_id').execute();
    await db.schema.createIndex('sign_in_sessions_sid').on('sign_in_sessions').column('sid').execute();
    await db.schema
      .alterTable('webhook_deliveries')
      .addColumn('kind', 'text', (c) => c.notNull().defaultTo('webhook'))
      .execute();
  },
};
