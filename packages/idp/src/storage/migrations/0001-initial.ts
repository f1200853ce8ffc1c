import type { Kysely, Migration } from 'kysely';

/** The first release's tables: clients, users, devices, registrations, codes, throttling, keys, the dev mailbox. */
export const initialMigrations: Record<string, Migration> = {
  '0001_initial': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('clients')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('publishable_key_hash', 'text', (c) => c.notNull().unique())
        .addColumn('secret_key_hash', 'text', (c) => c.notNull())
        .addColumn('origins', 'text', (c) => c.notNull())
        .addColumn('mfa_policy', 'text', (c) => c.notNull().defaultTo('optional'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('users')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('account_failures')
        .addColumn('user_key', 'text', (c) => c.primaryKey())
        .addColumn('failures', 'integer', (c) => c.notNull())
        .addColumn('locked_until', 'bigint')
        .execute();
      await db.schema
        .createTable('devices')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
        .addColumn('client_id', 'text', (c) => c.notNull().references('clients.id'))
        .addColumn('public_jwk', 'text', (c) => c.notNull())
        .addColumn('crypto_version', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_used_at', 'bigint')
        .addColumn('removed_at', 'bigint')
        .execute();
      await db.schema.createIndex('devices_user').on('devices').column('user_id').execute();
      await db.schema
        .createTable('device_challenges')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('client_id', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('consumed_at', 'bigint')
        .execute();
      await db.schema
        .createTable('registrations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('client_id', 'text', (c) => c.notNull())
        .addColumn('email', 'text', (c) => c.notNull())
        .addColumn('otp_hash', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('remember_device', 'integer', (c) => c.notNull())
        .addColumn('crypto_version', 'text', (c) => c.notNull())
        .addColumn('code_challenge', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('otp_expires_at', 'bigint', (c) => c.notNull())
        .addColumn('verified_at', 'bigint')
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('completed_at', 'bigint')
        .execute();
      await db.schema
        .createTable('auth_codes')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('client_id', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('code_challenge', 'text')
        .addColumn('amr', 'text', (c) => c.notNull())
        .addColumn('auth_time', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('consumed_at', 'bigint')
        .execute();
      await db.schema
        .createTable('rate_counters')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('window_start', 'bigint', (c) => c.notNull())
        .addColumn('count', 'integer', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('signing_keys')
        .addColumn('kid', 'text', (c) => c.primaryKey())
        .addColumn('alg', 'text', (c) => c.notNull())
        .addColumn('public_jwk', 'text', (c) => c.notNull())
        .addColumn('private_jwk_sealed', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('retired_at', 'bigint')
        .execute();
      await db.schema
        .createTable('mailbox')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('recipient', 'text', (c) => c.notNull())
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('text_body', 'text', (c) => c.notNull())
        .addColumn('html_body', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      for (const table of ['device_challenges', 'registrations', 'auth_codes', 'rate_counters']) {
        await db.schema.createIndex(`${table}_expires`).on(table).column('expires_at').execute();
      }
      await db.schema.createIndex('mailbox_created').on('mailbox').column('created_at').execute();
    },
  },
};
