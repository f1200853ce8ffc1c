import { type Kysely, type Migration, sql } from 'kysely';

export const migrations0015: Record<string, Migration> = {};

// Issue 22: one replay table (spent-tokens/) in place of four. The rows already spent are
// copied under their purpose's prefix (the keyed hashes are unchanged), so a token refused
// before the upgrade stays refused after it; device_challenges rows with no consumed_at are
// challenges stored at issue by an early release, never spent, and are not copied. The
// delegation cache kept no time of spending: the migration's time stands for it.
migrations0015['0015_spent_tokens'] = {
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
