import type { Database, Db } from '../../storage/schema.js';

/** A stored passkey as the ceremonies see it. */
export interface Passkey {
  id: string;
  userId: string;
  clientId: string;
  rpId: string;
  credentialId: string;
  publicKey: string;
  userHandle: string;
  signCount: number;
  transports: string[];
  backupEligible: boolean;
  backedUp: boolean;
  aaguid: string;
  name: string;
  createdAt: number;
  lastUsedAt: number | null;
}

export type NewPasskey = Omit<Passkey, 'lastUsedAt'>;

/** Who may touch a passkey: its user, through the application it was registered with. */
export interface PasskeyScope {
  userId: string;
  clientId: string;
}

const passkeyOf = (row: Database['passkeys']): Passkey => ({
  id: row.id,
  userId: row.user_id,
  clientId: row.client_id,
  rpId: row.rp_id,
  credentialId: row.credential_id,
  publicKey: row.public_key,
  userHandle: row.user_handle,
  signCount: Number(row.sign_count),
  transports: JSON.parse(row.transports) as string[],
  backupEligible: row.backup_eligible === 1,
  backedUp: row.backed_up === 1,
  aaguid: row.aaguid,
  name: row.name,
  createdAt: Number(row.created_at),
  lastUsedAt: row.last_used_at == null ? null : Number(row.last_used_at),
});

/**
 * Passkeys and their spent challenges, over Kysely for SQLite and PostgreSQL alike. A passkey
 * counts while `removed_at` is null: every read that signs in checks it, so a revocation holds
 * on every node from the next request. The two races a ceremony can lose are settled here, each
 * by one conditional statement: a challenge is spent by the first insert of its hash, and a sign
 * counter only moves forward (`UPDATE … WHERE sign_count < new`).
 */
export function createPasskeyStore(db: Db) {
  const active = (scope: PasskeyScope) =>
    db.updateTable('passkeys').where('user_id', '=', scope.userId).where('client_id', '=', scope.clientId).where('removed_at', 'is', null);

  return {
    /** False when the credential id is already registered (the unique index decides, atomically). */
    async insert(passkey: NewPasskey): Promise<boolean> {
      const row = await db
        .insertInto('passkeys')
        .values({
          id: passkey.id,
          user_id: passkey.userId,
          client_id: passkey.clientId,
          rp_id: passkey.rpId,
          credential_id: passkey.credentialId,
          public_key: passkey.publicKey,
          user_handle: passkey.userHandle,
          sign_count: passkey.signCount,
          transports: JSON.stringify(passkey.transports),
          backup_eligible: passkey.backupEligible ? 1 : 0,
          backed_up: passkey.backedUp ? 1 : 0,
          aaguid: passkey.aaguid,
          name: passkey.name,
          created_at: passkey.createdAt,
          last_used_at: null,
          removed_at: null,
        })
        .onConflict((oc) => oc.column('credential_id').doNothing())
        .returning('id')
        .executeTakeFirst();
      return row !== undefined;
    },

    /** The active (not revoked) passkey with this credential id. */
    async findActiveByCredentialId(credentialId: string): Promise<Passkey | undefined> {
      const row = await db
        .selectFrom('passkeys')
        .selectAll()
        .where('credential_id', '=', credentialId)
        .where('removed_at', 'is', null)
        .executeTakeFirst();
      return row && passkeyOf(row);
    },

    /** An active (not revoked) passkey by id: what a hosted SSO session bound to it checks at every use. */
    async findActiveById(id: string): Promise<Passkey | undefined> {
      const row = await db.selectFrom('passkeys').selectAll().where('id', '=', id).where('removed_at', 'is', null).executeTakeFirst();
      return row && passkeyOf(row);
    },

    /** Any passkey by id, revoked or not (the operator's revocation names it either way). */
    async findById(id: string): Promise<Passkey | undefined> {
      const row = await db.selectFrom('passkeys').selectAll().where('id', '=', id).executeTakeFirst();
      return row && passkeyOf(row);
    },

    /** Revokes one passkey by id, whoever holds it (operators); true when it was active until now. */
    async revokeById(id: string, now: number): Promise<boolean> {
      const result = await db
        .updateTable('passkeys')
        .set({ removed_at: now })
        .where('id', '=', id)
        .where('removed_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /** The user's active passkeys for one application, newest first. */
    async list(scope: PasskeyScope): Promise<Passkey[]> {
      const rows = await db
        .selectFrom('passkeys')
        .selectAll()
        .where('user_id', '=', scope.userId)
        .where('client_id', '=', scope.clientId)
        .where('removed_at', 'is', null)
        .orderBy('created_at', 'desc')
        .orderBy('id')
        .execute();
      return rows.map(passkeyOf);
    },

    /**
     * Records a sign-in: the new counter, the backup state and the time. Succeeds only while the
     * passkey is active and the counter moves forward (or both are 0: an authenticator without a
     * counter, WebAuthn L3 6.1.1), so of two assertions racing with one counter value one wins.
     */
    async recordUse(id: string, previousCount: number, newCount: number, backedUp: boolean, now: number): Promise<boolean> {
      let query = db
        .updateTable('passkeys')
        .set({ sign_count: newCount, backed_up: backedUp ? 1 : 0, last_used_at: now })
        .where('id', '=', id)
        .where('removed_at', 'is', null);
      query = newCount === 0 && previousCount === 0 ? query.where('sign_count', '=', 0) : query.where('sign_count', '<', newCount);
      const result = await query.executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async rename(scope: PasskeyScope, id: string, name: string): Promise<boolean> {
      const result = await active(scope).set({ name }).where('id', '=', id).executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /** Revokes one passkey of the scope; true when it was active until now. */
    async revoke(scope: PasskeyScope, id: string, now: number): Promise<boolean> {
      const result = await active(scope).set({ removed_at: now }).where('id', '=', id).executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /** The user's active passkeys for every application, newest first (the MFA step accepts any of them under its rp id). */
    async listForUser(userId: string): Promise<Passkey[]> {
      const rows = await db
        .selectFrom('passkeys')
        .selectAll()
        .where('user_id', '=', userId)
        .where('removed_at', 'is', null)
        .orderBy('created_at', 'desc')
        .orderBy('id')
        .execute();
      return rows.map(passkeyOf);
    },

    /** How many active passkeys the user holds, all applications together (a passkey-MFA user must keep one). */
    async countForUser(userId: string): Promise<number> {
      const row = await db
        .selectFrom('passkeys')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('user_id', '=', userId)
        .where('removed_at', 'is', null)
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    },

    /** How many active passkeys the user holds for the application (the PASSKEYS_PER_USER_MAX cap). */
    async count(scope: PasskeyScope): Promise<number> {
      const row = await db
        .selectFrom('passkeys')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('user_id', '=', scope.userId)
        .where('client_id', '=', scope.clientId)
        .where('removed_at', 'is', null)
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    },
  };
}

export type PasskeyStore = ReturnType<typeof createPasskeyStore>;
