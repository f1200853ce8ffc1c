import type { Database, Db } from '../../storage/schema.js';
import { deleteBefore } from '../../storage/sweeper.js';

export interface LinkedIdentity {
  connectionId: string;
  subject: string;
  userId: string;
  email: string | null;
  /** The person's name as the provider gave it; a provider that sends it once (Apple) keeps the first. */
  name: string | null;
  linkedAt: number;
  lastUsedAt: number | null;
}

export interface LinkProof {
  idHash: string;
  clientId: string;
  connectionId: string;
  subject: string;
  userId: string;
  email: string;
  name: string | null;
  tokensSealed: string | null;
  codeChallenge: string;
  attempts: number;
  otpHash: string | null;
  expiresAt: number;
}

const identityOf = (row: {
  connection_id: string;
  subject: string;
  user_id: string;
  email: string | null;
  name: string | null;
  linked_at: number;
  last_used_at: number | null;
}): LinkedIdentity => ({
  connectionId: row.connection_id,
  subject: row.subject,
  userId: row.user_id,
  email: row.email,
  name: row.name,
  linkedAt: Number(row.linked_at),
  lastUsedAt: row.last_used_at === null ? null : Number(row.last_used_at),
});

const IDENTITY_COLUMNS = ['connection_id', 'subject', 'user_id', 'email', 'name', 'linked_at', 'last_used_at'] as const;

/**
 * Linked identities, keyed by (connection, the provider's subject): the address is shown, never
 * matched on, so an address changed at the provider changes nothing here. And the link proofs:
 * an identity waiting for the emailed code of the account it would join (one challenge each,
 * guesses counted atomically, completed once).
 */
export function createUpstreamStore(db: Db) {
  return {
    async find(connectionId: string, subject: string): Promise<LinkedIdentity | undefined> {
      const row = await db
        .selectFrom('linked_identities')
        .select(IDENTITY_COLUMNS)
        .where('connection_id', '=', connectionId)
        .where('subject', '=', subject)
        .executeTakeFirst();
      return row && identityOf(row);
    },

    /** Links once; false when this identity is already linked (to anyone). */
    async link(identity: LinkedIdentity & { tokensSealed: string | null }): Promise<boolean> {
      const inserted = await db
        .insertInto('linked_identities')
        .values({
          connection_id: identity.connectionId,
          subject: identity.subject,
          user_id: identity.userId,
          email: identity.email,
          name: identity.name,
          tokens_sealed: identity.tokensSealed,
          linked_at: identity.linkedAt,
          last_used_at: identity.lastUsedAt,
        })
        .onConflict((oc) => oc.columns(['connection_id', 'subject']).doNothing())
        .returning('user_id')
        .executeTakeFirst();
      return inserted !== undefined;
    },

    /** A sign-in by the identity: the address and tokens as given now; the name only when one is given (Apple sends it once). */
    async touch(
      connectionId: string,
      subject: string,
      at: number,
      given: { email: string | null; name: string | null; tokensSealed: string | null },
    ): Promise<void> {
      await db
        .updateTable('linked_identities')
        .set({
          last_used_at: at,
          email: given.email,
          tokens_sealed: given.tokensSealed,
          ...(given.name !== null ? { name: given.name } : {}),
        })
        .where('connection_id', '=', connectionId)
        .where('subject', '=', subject)
        .execute();
    },

    async listForUser(userId: string): Promise<LinkedIdentity[]> {
      const rows = await db
        .selectFrom('linked_identities')
        .select(IDENTITY_COLUMNS)
        .where('user_id', '=', userId)
        .orderBy('linked_at')
        .execute();
      return rows.map(identityOf);
    },

    async listForConnection(connectionId: string): Promise<LinkedIdentity[]> {
      const rows = await db
        .selectFrom('linked_identities')
        .select(IDENTITY_COLUMNS)
        .where('connection_id', '=', connectionId)
        .orderBy('linked_at')
        .execute();
      return rows.map(identityOf);
    },

    async unlink(userId: string, connectionId: string, subject: string): Promise<boolean> {
      const deleted = await db
        .deleteFrom('linked_identities')
        .where('user_id', '=', userId)
        .where('connection_id', '=', connectionId)
        .where('subject', '=', subject)
        .returning('user_id')
        .executeTakeFirst();
      return deleted !== undefined;
    },

    async insertProof(proof: Omit<LinkProof, 'attempts' | 'otpHash'>, at: number): Promise<void> {
      await db
        .insertInto('upstream_link_proofs')
        .values({
          id: proof.idHash,
          client_id: proof.clientId,
          connection_id: proof.connectionId,
          subject: proof.subject,
          user_id: proof.userId,
          email: proof.email,
          name: proof.name,
          tokens_sealed: proof.tokensSealed,
          code_challenge: proof.codeChallenge,
          otp_hash: null,
          attempts: 0,
          created_at: at,
          expires_at: proof.expiresAt,
          completed_at: null,
        })
        .execute();
    },

    async armProof(idHash: string, otpHash: string, expiresAt: number): Promise<boolean> {
      const armed = await db
        .updateTable('upstream_link_proofs')
        .set({ otp_hash: otpHash, expires_at: expiresAt })
        .where('id', '=', idHash)
        .where('completed_at', 'is', null)
        .returning('id')
        .executeTakeFirst();
      return armed !== undefined;
    },

    async findProof(idHash: string, at: number): Promise<LinkProof | undefined> {
      const row = await db
        .selectFrom('upstream_link_proofs')
        .selectAll()
        .where('id', '=', idHash)
        .where('completed_at', 'is', null)
        .where('expires_at', '>', at)
        .executeTakeFirst();
      return row && proofOf(row);
    },

    /** One guess, counted before the code is compared: undefined when none is left, the proof is done or expired. */
    async spendProofAttempt(idHash: string, max: number, at: number): Promise<LinkProof | undefined> {
      const row = await db
        .updateTable('upstream_link_proofs')
        .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
        .where('id', '=', idHash)
        .where('completed_at', 'is', null)
        .where('expires_at', '>', at)
        .where('attempts', '<', max)
        .returningAll()
        .executeTakeFirst();
      return row && proofOf(row);
    },

    async completeProof(idHash: string, at: number): Promise<boolean> {
      const done = await db
        .updateTable('upstream_link_proofs')
        .set({ completed_at: at })
        .where('id', '=', idHash)
        .where('completed_at', 'is', null)
        .returning('id')
        .executeTakeFirst();
      return done !== undefined;
    },

    async expireProof(idHash: string, at: number): Promise<void> {
      await db.updateTable('upstream_link_proofs').set({ expires_at: at }).where('id', '=', idHash).execute();
    },

    async deleteExpired(at: number): Promise<void> {
      await deleteBefore(db, 'upstream_link_proofs', 'expires_at', at);
    },
  };
}

function proofOf(row: Omit<Database['upstream_link_proofs'], 'created_at' | 'completed_at'>): LinkProof {
  return {
    idHash: row.id,
    clientId: row.client_id,
    connectionId: row.connection_id,
    subject: row.subject,
    userId: row.user_id,
    email: row.email,
    name: row.name,
    tokensSealed: row.tokens_sealed,
    codeChallenge: row.code_challenge,
    attempts: Number(row.attempts),
    otpHash: row.otp_hash,
    expiresAt: Number(row.expires_at),
  };
}

export type UpstreamStore = ReturnType<typeof createUpstreamStore>;
