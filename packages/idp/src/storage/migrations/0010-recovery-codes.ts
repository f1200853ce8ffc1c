import type { Kysely, Migration } from 'kysely';

export const migrations0010: Record<string, Migration> = {};

// Issue 15: single-use recovery codes, issued at MFA enrollment (recovery-codes/).
migrations0010['0010_recovery_codes'] = {
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
