import type { Kysely, Migration } from 'kysely';

export const migrations0013: Record<string, Migration> = {};

// Issue 15: passkeys (webauthn/).
migrations0013['0013_passkeys'] = {
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
