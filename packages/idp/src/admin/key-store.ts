import { afterRow, type PageStart } from '../storage/pagination.js';
import type { Db } from '../storage/schema.js';

/** An admin key as operators see it: never the key itself. */
export interface AdminKeyRecord {
  id: string;
  name: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

const toRecord = (row: {
  id: string;
  name: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}): AdminKeyRecord => ({
  id: row.id,
  name: row.name,
  createdAt: Number(row.created_at),
  lastUsedAt: row.last_used_at === null ? null : Number(row.last_used_at),
  revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
});

/** Admin keys: a keyed hash of each key, its name and its last use. */
export function createAdminKeyStore(db: Db) {
  const columns = ['id', 'name', 'created_at', 'last_used_at', 'revoked_at'] as const;
  return {
    async insert(key: { id: string; name: string; keyHash: string; createdAt: number }): Promise<void> {
      await db
        .insertInto('admin_keys')
        .values({ id: key.id, name: key.name, key_hash: key.keyHash, created_at: key.createdAt, last_used_at: null, revoked_at: null })
        .execute();
    },

    /** The live (not revoked) key with this hash. */
    async findLive(keyHash: string): Promise<AdminKeyRecord | undefined> {
      const row = await db
        .selectFrom('admin_keys')
        .select(columns)
        .where('key_hash', '=', keyHash)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return row && toRecord(row);
    },

    async list(): Promise<AdminKeyRecord[]> {
      return (await db.selectFrom('admin_keys').select(columns).orderBy('created_at').orderBy('id').execute()).map(toRecord);
    },

    async page(after: PageStart, limit: number): Promise<AdminKeyRecord[]> {
      let query = db.selectFrom('admin_keys').select(columns).orderBy('created_at').orderBy('id').limit(limit);
      if (after) query = query.where(afterRow(after));
      return (await query.execute()).map(toRecord);
    },

    /** True when the key was live until now. */
    async revoke(id: string, now: number): Promise<boolean> {
      const result = await db
        .updateTable('admin_keys')
        .set({ revoked_at: now })
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async touch(id: string, now: number): Promise<void> {
      await db.updateTable('admin_keys').set({ last_used_at: now }).where('id', '=', id).execute();
    },
  };
}

export type AdminKeyStore = ReturnType<typeof createAdminKeyStore>;
