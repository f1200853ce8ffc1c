import type { Kysely, Migration } from 'kysely';

export const migrations0002: Record<string, Migration> = {};

migrations0002['0002_mfa'] = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('mfa_methods')
      .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id'))
      .addColumn('method', 'text', (c) => c.notNull())
      .addColumn('phone', 'text')
      .addColumn('totp_secret_sealed', 'text')
      .addColumn('last_totp_step', 'bigint')
      .addColumn('version', 'text', (c) => c.notNull())
      .addColumn('confirmed_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('mfa_sessions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('purpose', 'text', (c) => c.notNull())
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('method', 'text', (c) => c.notNull())
      .addColumn('phone', 'text')
      .addColumn('totp_secret_sealed', 'text')
      .addColumn('device_id', 'text')
      .addColumn('pending_device', 'text')
      .addColumn('code_challenge', 'text')
      .addColumn('amr', 'text', (c) => c.notNull())
      .addColumn('auth_time', 'bigint', (c) => c.notNull())
      .addColumn('otp_hash', 'text')
      .addColumn('otp_expires_at', 'bigint')
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('initiated_at', 'bigint')
      .addColumn('verified_at', 'bigint')
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('mfa_sessions_expires').on('mfa_sessions').column('expires_at').execute();
    await db.schema
      .createTable('mfa_remembered')
      .addColumn('device_id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('method_version', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('sms_outbox')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('recipient', 'text', (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('sms_outbox_created').on('sms_outbox').column('created_at').execute();
  },
};
