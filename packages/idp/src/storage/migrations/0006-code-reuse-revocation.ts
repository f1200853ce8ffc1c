import type { Kysely, Migration } from 'kysely';

export const migrations0006: Record<string, Migration> = {};

migrations0006['0006_code_reuse_revocation'] = {
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
