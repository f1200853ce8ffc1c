import type { Db } from '../storage/schema.js';

/** A console session as the service reads it (keyed by a hash of the cookie). */
export interface ConsoleSessionRecord {
  idHash: string;
  operatorId: string;
  userId: string;
  deviceId: string;
  createdAt: number;
  lastUsedAt: number;
  expiresAt: number;
}

/** The operator console's sessions. */
export function createConsoleSessionStore(db: Db) {
  return {
    async insert(session: ConsoleSessionRecord): Promise<void> {
      await db
        .insertInto('console_sessions')
        .values({
          id: session.idHash,
          operator_id: session.operatorId,
          user_id: session.userId,
          device_id: session.deviceId,
          created_at: session.createdAt,
          last_used_at: session.lastUsedAt,
          expires_at: session.expiresAt,
          ended_at: null,
        })
        .execute();
    },

    /** The session if not ended, not past its absolute limit and used after `usedSince` (its idle limit). */
    async findLive(idHash: string, now: number, usedSince: number): Promise<ConsoleSessionRecord | undefined> {
      const row = await db
        .selectFrom('console_sessions')
        .selectAll()
        .where('id', '=', idHash)
        .where('ended_at', 'is', null)
        .where('expires_at', '>', now)
        .where('last_used_at', '>', usedSince)
        .executeTakeFirst();
      return (
        row && {
          idHash: row.id,
          operatorId: row.operator_id,
          userId: row.user_id,
          deviceId: row.device_id,
          createdAt: Number(row.created_at),
          lastUsedAt: Number(row.last_used_at),
          expiresAt: Number(row.expires_at),
        }
      );
    },

    async touch(idHash: string, now: number): Promise<void> {
      await db.updateTable('console_sessions').set({ last_used_at: now }).where('id', '=', idHash).execute();
    },

    async end(idHash: string, now: number): Promise<void> {
      await db.updateTable('console_sessions').set({ ended_at: now }).where('id', '=', idHash).where('ended_at', 'is', null).execute();
    },

    /** Sessions past their absolute limit, or ended, go. */
    async deleteExpired(now: number): Promise<void> {
      await db
        .deleteFrom('console_sessions')
        .where((eb) => eb.or([eb('expires_at', '<=', now), eb('ended_at', 'is not', null)]))
        .execute();
    },
  };
}

export type ConsoleSessionStore = ReturnType<typeof createConsoleSessionStore>;
