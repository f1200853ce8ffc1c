import type { Kysely, Migration } from 'kysely';

/** ID token algorithms, users and events, webhooks, recovery codes. */
export const migrations0007To0010: Record<string, Migration> = {};

// Issue 12: a client may ask for ES256 or EdDSA ID tokens (OIDC Dynamic Client Registration
// `id_token_signed_response_alg`); existing clients keep RS256, the spec's default.
migrations0007To0010['0007_id_token_alg'] = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('clients')
      .addColumn('id_token_signed_response_alg', 'text', (c) => c.notNull().defaultTo('RS256'))
      .execute();
  },
};

// Issue 13: operators disable users, every security-relevant event is kept (events/), admin keys (admin/).
migrations0007To0010['0008_users_events'] = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('users').addColumn('disabled_at', 'bigint').execute();
    await db.schema
      .createTable('events')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('at', 'bigint', (c) => c.notNull())
      .addColumn('user_id', 'text')
      .addColumn('client_id', 'text')
      .addColumn('device_id', 'text')
      .addColumn('ip', 'text')
      .addColumn('user_agent', 'text')
      .addColumn('actor', 'text')
      .addColumn('detail', 'text')
      .execute();
    await db.schema.createIndex('events_at').on('events').columns(['at', 'id']).execute();
    await db.schema.createIndex('events_user').on('events').columns(['user_id', 'at']).execute();
    await db.schema.createIndex('client_users_user').on('client_users').column('user_id').execute();
    await db.schema.createIndex('users_created').on('users').columns(['created_at', 'id']).execute();
    await db.schema
      .createTable('admin_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('key_hash', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('last_used_at', 'bigint')
      .addColumn('revoked_at', 'bigint')
      .execute();
  },
};

// Issue 13: event webhooks (webhooks/): endpoints and the outbox of deliveries.
migrations0007To0010['0009_webhooks'] = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('webhook_endpoints')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('event_types', 'text', (c) => c.notNull())
      .addColumn('secret_sealed', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('disabled_at', 'bigint')
      .addColumn('disabled_reason', 'text')
      .addColumn('failure_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('failing_since', 'bigint')
      .addColumn('last_error', 'text')
      .addColumn('last_error_at', 'bigint')
      .addColumn('last_delivered_at', 'bigint')
      .execute();
    await db.schema
      .createTable('webhook_deliveries')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('endpoint_id', 'text', (c) => c.notNull())
      .addColumn('event_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text')
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
      .addColumn('lease_until', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('lease_owner', 'text')
      .addColumn('done_at', 'bigint')
      .addColumn('delivered', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('last_error', 'text')
      .execute();
    // The claim scans due rows; the ordering check and a user's deletion look rows up by user.
    await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['next_attempt_at']).execute();
    await db.schema
      .createIndex('webhook_deliveries_user')
      .on('webhook_deliveries')
      .columns(['user_id', 'endpoint_id', 'event_id'])
      .execute();
  },
};

// Issue 15: single-use recovery codes, issued at MFA enrollment (recovery-codes/).
migrations0007To0010['0010_recovery_codes'] = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('recovery_codes')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('code_hash', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('used_at', 'bigint')
      .execute();
    await db.schema.createIndex('recovery_codes_user').on('recovery_codes').column('user_id').execute();
  },
};
