import { isPostgres } from '../storage/database.js';
import type { Db } from '../storage/schema.js';

/** What a user granted a third-party client: OIDC scope values and permissions of APIs. */
export interface ConsentGrant {
  /** OIDC scope values: openid, email, offline_access. */
  scope: string[];
  /** [API identifier, permission] pairs. */
  permissions: Array<[string, string]>;
}

export interface ConsentRecord extends ConsentGrant {
  clientId: string;
  createdAt: number;
  updatedAt: number;
}

const grantOf = (row: { scope: string; permissions: string }): ConsentGrant => ({
  scope: row.scope.split(' ').filter(Boolean),
  permissions: JSON.parse(row.permissions) as Array<[string, string]>,
});

/** The `consents` table (one row per user and client): what each user granted each third-party client. */
export function createConsentStore(db: Db) {
  const shared = isPostgres(db);
  return {
    async find(userId: string, clientId: string): Promise<ConsentGrant | undefined> {
      const row = await db
        .selectFrom('consents')
        .select(['scope', 'permissions'])
        .where('user_id', '=', userId)
        .where('client_id', '=', clientId)
        .executeTakeFirst();
      return row && grantOf(row);
    },

    /** The user's consents, oldest first. */
    async list(userId: string): Promise<ConsentRecord[]> {
      const rows = await db
        .selectFrom('consents')
        .select(['client_id', 'scope', 'permissions', 'created_at', 'updated_at'])
        .where('user_id', '=', userId)
        .orderBy('created_at')
        .orderBy('client_id')
        .execute();
      return rows.map((row) => ({
        clientId: row.client_id,
        ...grantOf(row),
        createdAt: Number(row.created_at),
        updatedAt: Number(row.updated_at),
      }));
    },

    /**
     * Merges `grant` into what the user granted the client (a new row the first time). In one
     * transaction, so two Allows at once each keep the other's values.
     */
    async merge(userId: string, clientId: string, grant: ConsentGrant, now: number): Promise<ConsentGrant> {
      return db.transaction().execute(async (tx) => {
        let query = tx
          .selectFrom('consents')
          .select(['scope', 'permissions'])
          .where('user_id', '=', userId)
          .where('client_id', '=', clientId);
        // SQLite serialises writers on its own; PostgreSQL locks the row (FOR UPDATE).
        if (shared) query = query.forUpdate();
        const existing = await query.executeTakeFirst();
        const before = existing ? grantOf(existing) : { scope: [], permissions: [] };
        const merged = mergeGrants(before, grant);
        const columns = { scope: merged.scope.join(' '), permissions: JSON.stringify(merged.permissions), updated_at: now };
        if (existing)
          await tx.updateTable('consents').set(columns).where('user_id', '=', userId).where('client_id', '=', clientId).execute();
        else
          await tx
            .insertInto('consents')
            .values({ user_id: userId, client_id: clientId, created_at: now, ...columns })
            .onConflict((oc) => oc.columns(['user_id', 'client_id']).doUpdateSet(columns))
            .execute();
        return merged;
      });
    },

    /** Deletes the user's consent to the client; false when there was none. */
    async delete(userId: string, clientId: string): Promise<boolean> {
      const row = await db
        .deleteFrom('consents')
        .where('user_id', '=', userId)
        .where('client_id', '=', clientId)
        .returning('client_id')
        .executeTakeFirst();
      return row !== undefined;
    },
  };
}

export type ConsentStore = ReturnType<typeof createConsentStore>;

/** Both grants' values, each once, sorted (a stable row whatever the order of the Allows). */
export function mergeGrants(a: ConsentGrant, b: ConsentGrant): ConsentGrant {
  const scope = [...new Set([...a.scope, ...b.scope])].sort();
  const pairs = new Map([...a.permissions, ...b.permissions].map(([api, permission]) => [`${api} ${permission}`, [api, permission]]));
  const permissions = [...pairs.entries()].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)).map(([, pair]) => pair as [string, string]);
  return { scope, permissions };
}
