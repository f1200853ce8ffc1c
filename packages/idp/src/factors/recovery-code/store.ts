import type { Db } from '../../storage/schema.js';

/** The recovery_codes table. Only factors/recovery-code/ uses it (users/ exports and deletes every row of a person). */
export function createRecoveryCodeStore(db: Db) {
  return {
    /** Replaces the user's whole set in one transaction: no moment where old and new both work, or neither. */
    async replaceSet(userId: string, rows: Array<{ id: string; codeHash: string }>, now: number): Promise<void> {
      await db.transaction().execute(async (tx) => {
        await tx.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
        await tx
          .insertInto('recovery_codes')
          .values(rows.map((r) => ({ id: r.id, user_id: userId, code_hash: r.codeHash, created_at: now, used_at: null })))
          .execute();
      });
    },

    /**
     * Uses one code: a single UPDATE … WHERE used_at IS NULL, so of parallel requests with the
     * same code exactly one gets the row back. The lookup is by keyed hash (equality on an
     * HMAC the caller cannot choose reveals nothing about the code).
     */
    async consume(userId: string, codeHash: string, now: number): Promise<boolean> {
      const row = await db
        .updateTable('recovery_codes')
        .set({ used_at: now })
        .where('code_hash', '=', codeHash)
        .where('user_id', '=', userId)
        .where('used_at', 'is', null)
        .returning('id')
        .executeTakeFirst();
      return row !== undefined;
    },

    async remaining(userId: string): Promise<number> {
      const row = await db
        .selectFrom('recovery_codes')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('user_id', '=', userId)
        .where('used_at', 'is', null)
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    },

    async removeAll(userId: string): Promise<void> {
      await db.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
    },
  };
}

export type RecoveryCodeStore = ReturnType<typeof createRecoveryCodeStore>;
