import { isPostgres } from '../storage/database.js';
import type { Db } from '../storage/schema.js';

/** What a user granted a third-party client: OIDC scope values and permissions of APIs. */
export interface ConsentGrant {
  /** OIDC scope values: openid, email, offline_access. */
  scope: string[];
  /** [API identifier, permission] pairs. */
  permissions: Array<[string, string]>;
}

/**
 * An application a user approved, as the account center lists it: a consent, live refresh
 * tokens, or both. `approvedAt`: the consent's time, else the first live token family's.
 * `lastUsedAt`: when it last got tokens for the user (a code redeemed or a refresh), if ever.
 */
export interface Approval {
  clientId: string;
  grant: ConsentGrant | null;
  approvedAt: number;
  lastUsedAt: number | null;
  /** The user's live refresh token families of the client. */
  liveFamilies: number;
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
  const store = {
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

    /** The user's approvals (Approval): their consents, and the clients holding live refresh tokens of theirs; oldest first. */
    async approvals(userId: string, now: number): Promise<Approval[]> {
      const [granted, families, used] = await Promise.all([
        store.list(userId),
        db
          .selectFrom('refresh_token_families')
          .select((eb) => ['client_id', eb.fn.min('created_at').as('first'), eb.fn.countAll().as('live')])
          .where('user_id', '=', userId)
          .where('revoked_at', 'is', null)
          .where('expires_at', '>', now)
          .groupBy('client_id')
          .execute(),
        db
          .selectFrom('refresh_tokens')
          .innerJoin('refresh_token_families', 'refresh_token_families.id', 'refresh_tokens.family_id')
          .select((eb) => ['refresh_token_families.client_id', eb.fn.max('refresh_tokens.created_at').as('last')])
          .where('refresh_token_families.user_id', '=', userId)
          .groupBy('refresh_token_families.client_id')
          .execute(),
      ]);
      const lastUsed = new Map(used.map((row) => [row.client_id, Number(row.last)]));
      const live = new Map(families.map((row) => [row.client_id, { first: Number(row.first), count: Number(row.live) }]));
      const approvals: Approval[] = granted.map((c) => ({
        clientId: c.clientId,
        grant: { scope: c.scope, permissions: c.permissions },
        approvedAt: c.createdAt,
        lastUsedAt: lastUsed.get(c.clientId) ?? null,
        liveFamilies: live.get(c.clientId)?.count ?? 0,
      }));
      const consented = new Set(granted.map((c) => c.clientId));
      for (const [clientId, family] of live)
        if (!consented.has(clientId))
          approvals.push({
            clientId,
            grant: null,
            approvedAt: family.first,
            lastUsedAt: lastUsed.get(clientId) ?? null,
            liveFamilies: family.count,
          });
      return approvals.sort((a, b) => a.approvedAt - b.approvedAt || (a.clientId < b.clientId ? -1 : a.clientId > b.clientId ? 1 : 0));
    },

    /**
     * Revokes the user's approval of the client in one transaction: the consent deleted, the live
     * refresh token families of the client for the user ended (`consent_revoked`), and `record`
     * (the event, and so its webhook deliveries) written in the same transaction. Undefined, and
     * nothing written, when the user had neither a consent nor a live family of the client.
     */
    async revoke(
      userId: string,
      clientId: string,
      now: number,
      record: (tx: Db, families: number) => Promise<unknown>,
    ): Promise<{ families: number } | undefined> {
      return db.transaction().execute(async (tx) => {
        const deleted = await tx
          .deleteFrom('consents')
          .where('user_id', '=', userId)
          .where('client_id', '=', clientId)
          .returning('client_id')
          .executeTakeFirst();
        const ended = await tx
          .updateTable('refresh_token_families')
          .set({ revoked_at: now, revoked_reason: 'consent_revoked' })
          .where('user_id', '=', userId)
          .where('client_id', '=', clientId)
          .where('revoked_at', 'is', null)
          .where('expires_at', '>', now)
          .executeTakeFirst();
        const families = Number(ended.numUpdatedRows);
        if (!deleted && families === 0) return undefined;
        await record(tx, families);
        return { families };
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
  return store;
}

export type ConsentStore = ReturnType<typeof createConsentStore>;

/** Both grants' values, each once, sorted (a stable row whatever the order of the Allows). */
export function mergeGrants(a: ConsentGrant, b: ConsentGrant): ConsentGrant {
  const scope = [...new Set([...a.scope, ...b.scope])].sort();
  const pairs = new Map([...a.permissions, ...b.permissions].map(([api, permission]) => [`${api} ${permission}`, [api, permission]]));
  const permissions = [...pairs.entries()].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)).map(([, pair]) => pair as [string, string]);
  return { scope, permissions };
}
