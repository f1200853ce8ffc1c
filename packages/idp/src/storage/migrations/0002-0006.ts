import type { Kysely, Migration } from 'kysely';

/** MFA, delegation, the device lifecycle, the change of MFA method, code-reuse revocation. */
export const migrations0002To0006: Record<string, Migration> = {};

migrations0002To0006['0002_mfa'] = {
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

migrations0002To0006['0003_delegation'] = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('client_users')
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('first_signed_in_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('client_users_pk', ['client_id', 'user_id'])
      .execute();
    await db.schema
      .createTable('delegation_idp_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('signing_private_sealed', 'text', (c) => c.notNull())
      .addColumn('signing_public_pem', 'text', (c) => c.notNull())
      .addColumn('encryption_private_sealed', 'text', (c) => c.notNull())
      .addColumn('encryption_public_pem', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('delegation_sp_keys')
      .addColumn('client_id', 'text', (c) => c.primaryKey().references('clients.id'))
      .addColumn('verify_public_pem', 'text', (c) => c.notNull())
      .addColumn('encryption_public_pem', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('delegation_replay')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('delegation_replay_expires').on('delegation_replay').column('expires_at').execute();
  },
};

migrations0002To0006['0004_device_lifecycle'] = {
  async up(db: Kysely<unknown>) {
    for (const column of ['name', 'browser', 'os']) {
      await db.schema.alterTable('devices').addColumn(column, 'text').execute();
    }
    await db.schema.alterTable('auth_codes').addColumn('device_id', 'text').execute();
    await db.schema
      .createTable('device_notice_spent')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('consumed_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('device_notice_spent_expires').on('device_notice_spent').column('expires_at').execute();
  },
};

migrations0002To0006['0005_mfa_change_current_factor'] = {
  async up(db: Kysely<unknown>) {
    // A change of method first proves the current factor: the method asked for waits here.
    await db.schema.alterTable('mfa_sessions').addColumn('change_to', 'text').execute();
  },
};

migrations0002To0006['0006_code_reuse_revocation'] = {
  async up(db: Kysely<unknown>) {
    // RFC 6749 4.1.2: a code redeemed twice revokes the access token of its first redemption.
    await db.schema.alterTable('auth_codes').addColumn('access_token_jti', 'text').execute();
    await db.schema
      .createTable('revoked_access_tokens')
      .addColumn('jti', 'text', (c) => c.primaryKey())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('revoked_access_tokens_expires').on('revoked_access_tokens').column('expires_at').execute();
  },
};
