import { withMigrationLock } from '../storage/migrations.js';
import type { Db } from '../storage/schema.js';

export interface SigningKeyRow {
  kid: string;
  alg: string;
  publicJwk: string;
  privateJwkSealed: string;
  createdAt: number;
  retiredAt: number | null;
}

export function createKeyStore(db: Db) {
  return {
    async insert(key: SigningKeyRow): Promise<void> {
      await db
        .insertInto('signing_keys')
        .values({
          kid: key.kid,
          alg: key.alg,
          public_jwk: key.publicJwk,
          private_jwk_sealed: key.privateJwkSealed,
          created_at: key.createdAt,
          retired_at: key.retiredAt,
        })
        .execute();
    },

    /** Keys still worth publishing: current, or retired less than `graceMs` ago. */
    async listPublishable(now: number, graceMs: number): Promise<SigningKeyRow[]> {
      const rows = await db
        .selectFrom('signing_keys')
        .selectAll()
        .where((eb) => eb.or([eb('retired_at', 'is', null), eb('retired_at', '>', now - graceMs)]))
        .orderBy('created_at', 'desc')
        .execute();
      return rows.map((r) => ({
        kid: r.kid,
        alg: r.alg,
        publicJwk: r.public_jwk,
        privateJwkSealed: r.private_jwk_sealed,
        createdAt: Number(r.created_at),
        retiredAt: r.retired_at == null ? null : Number(r.retired_at),
      }));
    },

    /**
     * The algorithms of `algs` without a current key get the keys `make` returns for them, all in
     * one transaction under the migration lock: nodes starting together on one empty database
     * make one key set (the others wait, then find it). Returns the algorithms it made keys for.
     */
    async addMissing(algs: readonly string[], make: (missing: string[]) => Promise<SigningKeyRow[]>): Promise<string[]> {
      return withMigrationLock(db, async (tx) => {
        const current = await tx.selectFrom('signing_keys').select('alg').where('retired_at', 'is', null).execute();
        const missing = algs.filter((alg) => !current.some((row) => row.alg === alg));
        if (missing.length === 0) return [];
        for (const key of await make(missing)) await createKeyStore(tx).insert(key);
        return missing;
      });
    },

    /** Retires every current key and inserts the new ones (one per algorithm), in one transaction. */
    async rotate(next: SigningKeyRow[]): Promise<void> {
      const retiredAt = Math.min(...next.map((k) => k.createdAt));
      await db.transaction().execute(async (tx) => {
        await tx.updateTable('signing_keys').set({ retired_at: retiredAt }).where('retired_at', 'is', null).execute();
        for (const key of next) await createKeyStore(tx).insert(key);
      });
    },
  };
}

export type KeyStore = ReturnType<typeof createKeyStore>;
