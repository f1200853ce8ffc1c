import type { Kysely, Migration } from 'kysely';

export const migrations0008: Record<string, Migration> = {};

// Issue 13: operators disable users, every security-relevant event is kept (events/), admin keys (admin/).
migrations0008['0008_users_events'] = {
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
