import type { Db } from '../storage/database.js';

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
