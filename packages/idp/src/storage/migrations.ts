import { type Kysely, type Migration, type MigrationProvider, Migrator, PostgresAdapter, sql } from 'kysely';

/**
 * Versioned migrations, applied in name order. A migration never changes once released;
 * a change of schema is a new entry. Written with Kysely's schema builder only, so each
 * runs unchanged on SQLite and PostgreSQL.
 */
const migrations: Record<string, Migration> = {
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

migrations['0002_mfa'] = {
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

migrations['0003_delegation'] = {
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

migrations['0004_device_lifecycle'] = {
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

migrations['0005_mfa_change_current_factor'] = {
  async up(db: Kysely<unknown>) {
    // A change of method first proves the current factor: the method asked for waits here.
    await db.schema.alterTable('mfa_sessions').addColumn('change_to', 'text').execute();
  },
};

migrations['0006_code_reuse_revocation'] = {
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

// Issue 12: a client may ask for ES256 or EdDSA ID tokens (OIDC Dynamic Client Registration
// `id_token_signed_response_alg`); existing clients keep RS256, the spec's default.
migrations['0007_id_token_alg'] = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('clients')
      .addColumn('id_token_signed_response_alg', 'text', (c) => c.notNull().defaultTo('RS256'))
      .execute();
  },
};

// Issue 13: operators disable users, every security-relevant event is kept (events/), admin keys (admin/).
migrations['0008_users_events'] = {
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
migrations['0009_webhooks'] = {
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
migrations['0010_recovery_codes'] = {
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

// Issue 14: OIDC clients (redirect URIs, public clients), the authorization endpoint's pending
// requests, codes bound to a redirect URI and nonce, and the service's sign-in sessions (oidc/).
migrations['0011_oidc'] = {
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

// Issue 14: refresh tokens (families rotated on every use, revoked as a whole on reuse), the
// scope a code was granted (offline_access), and each client's post-logout redirect URIs.
migrations['0012_refresh_tokens'] = {
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

// Issue 15: passkeys (webauthn/).
migrations['0013_passkeys'] = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('passkeys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('rp_id', 'text', (c) => c.notNull())
      .addColumn('credential_id', 'text', (c) => c.notNull().unique())
      .addColumn('public_key', 'text', (c) => c.notNull())
      .addColumn('user_handle', 'text', (c) => c.notNull())
      .addColumn('sign_count', 'bigint', (c) => c.notNull())
      .addColumn('transports', 'text', (c) => c.notNull())
      .addColumn('backup_eligible', 'integer', (c) => c.notNull())
      .addColumn('backed_up', 'integer', (c) => c.notNull())
      .addColumn('aaguid', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('last_used_at', 'bigint')
      .addColumn('removed_at', 'bigint')
      .execute();
    await db.schema.createIndex('passkeys_user').on('passkeys').columns(['user_id', 'client_id']).execute();
    await db.schema
      .createTable('passkey_challenges_spent')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('consumed_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('passkey_challenges_spent_expires').on('passkey_challenges_spent').column('expires_at').execute();
    // 1: a passkey sign-in (user verification required) also passes the app's MFA; 0: MFA follows it.
    await db.schema
      .alterTable('clients')
      .addColumn('passkey_satisfies_mfa', 'integer', (c) => c.notNull().defaultTo(1))
      .execute();
  },
};

// Issue 15 on the hosted pages: a sign-in that issued recovery codes is held on its pending
// request (the hosted code redeemed at once) while the user copies them, then continued; and
// the sessions' user index for deleting a user.
migrations['0014_held_sign_in'] = {
  async up(db: Kysely<unknown>) {
    for (const [column, type] of [
      ['held_user_id', 'text'],
      ['held_device_id', 'text'],
      ['held_amr', 'text'],
      ['held_auth_time', 'bigint'],
    ] as const) {
      await db.schema.alterTable('authorization_requests').addColumn(column, type).execute();
    }
    await db.schema.createIndex('authorization_requests_held_user').on('authorization_requests').column('held_user_id').execute();
    // Deleting a user deletes their service sessions by user.
    await db.schema.createIndex('sign_in_sessions_user').on('sign_in_sessions').column('user_id').execute();
  },
};

// Issue 22: one replay table (spent-tokens/) in place of four. The rows already spent are
// copied under their purpose's prefix (the keyed hashes are unchanged), so a token refused
// before the upgrade stays refused after it; device_challenges rows with no consumed_at are
// challenges stored at issue by an early release, never spent, and are not copied. The
// delegation cache kept no time of spending: the migration's time stands for it.
migrations['0015_spent_tokens'] = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('spent_tokens')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('purpose', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('consumed_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('spent_tokens_expires').on('spent_tokens').column('expires_at').execute();
    const copies = [
      ['device_challenges', 'device-challenge', sql`consumed_at`, sql`where consumed_at is not null`],
      ['device_notice_spent', 'device-notice', sql`consumed_at`, sql``],
      ['passkey_challenges_spent', 'passkey-challenge', sql`consumed_at`, sql``],
      ['delegation_replay', 'delegation-request', sql.lit(Date.now()), sql``],
    ] as const;
    for (const [table, purpose, consumedAt, where] of copies) {
      await sql`insert into spent_tokens (id, purpose, expires_at, consumed_at)
        select ${sql.lit(`${purpose}:`)} || id, ${sql.lit(purpose)}, expires_at, ${consumedAt} from ${sql.table(table)} ${where}`.execute(
        db,
      );
      await db.schema.dropTable(table).execute();
    }
  },
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

export const KNOWN_MIGRATIONS = Object.keys(migrations).sort();

/**
 * SQLSTATEs of Kysely's all-schema look-up meeting another schema changed meanwhile (see
 * migrate): a table (42P01), a schema (3F000) or a column (42703) dropped under it.
 */
const SCHEMA_DROPPED_MEANWHILE = new Set(['42P01', '3F000', '42703']);

/**
 * Brings the schema to the newest version this build knows (or, for the tests of a migration,
 * to `target`, one of KNOWN_MIGRATIONS). Refuses a database that has migrations this build
 * does not know (a newer release ran against it).
 */
export async function migrate(db: Kysely<any>, target?: string): Promise<string[]> {
  const migrator = new Migrator({ db, provider, ...(await migrationTableSchema(db)) });
  const unknown = await appliedButUnknown(db);
  if (unknown.length > 0) {
    throw new Error(`database schema is newer than this build (unknown migrations: ${unknown.join(', ')}); upgrade service-idp`);
  }
  for (let attempt = 1; ; attempt++) {
    const { error, results } = target === undefined ? await migrator.migrateToLatest() : await migrator.migrateTo(target);
    // Kysely looks for its migration table through an introspection of every schema's tables;
    // a schema dropped meanwhile by another client (another tenant, a test run beside this one)
    // fails that look-up with "relation", "schema" or "column does not exist". Nothing was
    // applied: try again, twice at most (a migration's own error comes back each time and is thrown).
    const applied = (results ?? []).some((r) => r.status === 'Success');
    if (error && !applied && SCHEMA_DROPPED_MEANWHILE.has((error as { code?: string }).code ?? '') && attempt < 3) continue;
    if (error) throw error;
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  }
}

/**
 * On PostgreSQL, the schema the tables go to (the first of search_path, usually public).
 * Kysely looks for its migration tables in every schema unless told which one, so another
 * schema's kysely_migration (a second application, or a test schema) would be taken for ours.
 */
async function migrationTableSchema(db: Kysely<any>): Promise<{ migrationTableSchema?: string }> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return {};
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  const schema = rows[0]?.schema;
  if (!schema) throw new Error('PostgreSQL has no current schema: the first schema of search_path must exist');
  return { migrationTableSchema: schema };
}

async function appliedButUnknown(db: Kysely<any>): Promise<string[]> {
  try {
    const rows = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
    return rows.rows.map((r) => r.name).filter((name) => !KNOWN_MIGRATIONS.includes(name));
  } catch {
    return []; // no migration table yet: a fresh database
  }
}
