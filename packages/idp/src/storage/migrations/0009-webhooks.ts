import type { Kysely, Migration } from 'kysely';

export const migrations0009: Record<string, Migration> = {};

// Issue 13: event webhooks (webhooks/): endpoints and the outbox of deliveries.
migrations0009['0009_webhooks'] = {
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
