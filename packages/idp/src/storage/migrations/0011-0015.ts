import { type Kysely, type Migration, sql } from 'kysely';

/** OIDC, refresh tokens, passkeys, the held sign-in, the one spent-token table. */
export const migrations0011To0015: Record<string, Migration> = {};

// Issue 14: OIDC clients (redirect URIs, public clients), the authorization endpoint's pending
// requests, codes bound to a redirect URI and nonce, and the service's sign-in sessions (oidc/).
migrations0011To0015['0011_oidc'] = {
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
migrations0011To0015['0012_refresh_tokens'] = {
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
migrations0011To0015['0013_passkeys'] = {
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
migrations0011To0015['0014_held_sign_in'] = {
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
migrations0011To0015['0015_spent_tokens'] = {
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
