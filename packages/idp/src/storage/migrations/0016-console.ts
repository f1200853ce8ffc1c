import type { Kysely, Migration } from 'kysely';

/** The operator console (issue 24). */
export const migrations0016: Record<string, Migration> = {};

// Issue 24: who may enter the operator console at /admin (by address, with a role), and the
// console's own sessions (keyed hashes; bound to the device that signed in, like the SSO session).
migrations0016['0016_operators'] = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('operators')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('email', 'text', (c) => c.notNull().unique())
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('added_by', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('console_sessions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('operator_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('device_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('last_used_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('ended_at', 'bigint')
      .execute();
    await db.schema.createIndex('console_sessions_operator').on('console_sessions').column('operator_id').execute();
  },
};
