import type { JWK } from 'jose';
import type { Db } from '../storage/database.js';

export interface Device {
  id: string;
  userId: string;
  clientId: string;
  publicJwk: JWK;
  cryptoVersion: string;
  lastUsedAt?: number | null;
}

/** Registered device keys and the single-use challenges they sign. */
export function createDeviceStore(db: Db) {
  return {
    async insert(device: Device, now: number): Promise<void> {
      await db
        .insertInto('devices')
        .values({
          id: device.id,
          user_id: device.userId,
          client_id: device.clientId,
          public_jwk: JSON.stringify(device.publicJwk),
          crypto_version: device.cryptoVersion,
          created_at: now,
          last_used_at: null,
          removed_at: null,
        })
        .execute();
    },

    async findActive(id: string): Promise<Device | undefined> {
      const row = await db.selectFrom('devices').selectAll().where('id', '=', id).where('removed_at', 'is', null).executeTakeFirst();
      return (
        row && {
          id: row.id,
          userId: row.user_id,
          clientId: row.client_id,
          publicJwk: JSON.parse(row.public_jwk) as JWK,
          cryptoVersion: row.crypto_version,
          lastUsedAt: row.last_used_at == null ? null : Number(row.last_used_at),
        }
      );
    },

    async touch(id: string, now: number): Promise<void> {
      await db.updateTable('devices').set({ last_used_at: now }).where('id', '=', id).execute();
    },

    async remove(id: string, now: number): Promise<void> {
      await db.updateTable('devices').set({ removed_at: now }).where('id', '=', id).execute();
    },

    async deleteExpiredChallenges(now: number): Promise<void> {
      await db.deleteFrom('device_challenges').where('expires_at', '<', now).execute();
    },

    /**
     * Records a spent challenge; true only for the first caller (the primary key makes the
     * insert atomic). Kept until the challenge would have expired anyway.
     */
    async spendChallenge(idHash: string, clientId: string, expiresAt: number, now: number): Promise<boolean> {
      const row = await db
        .insertInto('device_challenges')
        .values({ id: idHash, client_id: clientId, expires_at: expiresAt, consumed_at: now })
        .onConflict((oc) => oc.column('id').doNothing())
        .returning('id')
        .executeTakeFirst();
      return row !== undefined;
    },
  };
}

export type DeviceStore = ReturnType<typeof createDeviceStore>;
