import type { JWK } from 'jose';
import type { EventStore } from '../events/store.js';
import type { Database, Db } from '../storage/schema.js';

export interface Device {
  id: string;
  userId: string;
  clientId: string;
  publicJwk: JWK;
  cryptoVersion: string;
  lastUsedAt?: number | null;
}

export interface NewDevice extends Device {
  browser: string | null;
  os: string | null;
}

/** A devices row as the proof check sees it (also for reads that join it, factors/device-key/sign-in-store.ts). */
export function deviceOf(
  row: Pick<Database['devices'], 'id' | 'user_id' | 'client_id' | 'public_jwk' | 'crypto_version' | 'last_used_at'>,
): Device {
  return {
    id: row.id,
    userId: row.user_id,
    clientId: row.client_id,
    publicJwk: JSON.parse(row.public_jwk) as JWK,
    cryptoVersion: row.crypto_version,
    lastUsedAt: row.last_used_at == null ? null : Number(row.last_used_at),
  };
}

/** A device as its owner sees it. */
export interface DeviceRow {
  id: string;
  userId: string;
  clientId: string;
  name: string | null;
  browser: string | null;
  os: string | null;
  createdAt: number;
  lastUsedAt: number | null;
  removedAt: number | null;
}

/** The user's and client's devices a change may touch: not revoked, used since `usedSince`. */
export interface DeviceScope {
  userId: string;
  clientId: string;
  usedSince: number;
}

/**
 * Registered device keys and the single-use challenges they sign. A device is trusted while
 * `removed_at` is null and it was used (or registered) after the caller's idle cut-off: both
 * are checked in the query that reads the key, so a revocation or an expiry holds on every
 * node from the next request on.
 */
export function createDeviceStore(db: Db) {
  const lastActivity = db.fn.coalesce('last_used_at', 'created_at');
  const rowOf = (row: {
    id: string;
    user_id: string;
    client_id: string;
    name: string | null;
    browser: string | null;
    os: string | null;
    created_at: number;
    last_used_at: number | null;
    removed_at: number | null;
  }): DeviceRow => ({
    id: row.id,
    userId: row.user_id,
    clientId: row.client_id,
    name: row.name,
    browser: row.browser,
    os: row.os,
    createdAt: Number(row.created_at),
    lastUsedAt: row.last_used_at == null ? null : Number(row.last_used_at),
    removedAt: row.removed_at == null ? null : Number(row.removed_at),
  });
  const inScope = (scope: DeviceScope) =>
    db
      .updateTable('devices')
      .where('user_id', '=', scope.userId)
      .where('client_id', '=', scope.clientId)
      .where('removed_at', 'is', null)
      .where(lastActivity, '>', scope.usedSince);

  return {
    async insert(device: NewDevice, now: number): Promise<void> {
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
          name: null,
          browser: device.browser,
          os: device.os,
        })
        .execute();
    },

    /** The device's key when it is trusted: not revoked, and used (or registered) after `usedSince`. */
    async findActive(id: string, usedSince: number): Promise<Device | undefined> {
      const row = await db
        .selectFrom('devices')
        .selectAll()
        .where('id', '=', id)
        .where('removed_at', 'is', null)
        .where(lastActivity, '>', usedSince)
        .executeTakeFirst();
      return row && deviceOf(row);
    },

    /** Any device by id, revoked or not (the "this wasn't me" page names it either way). */
    async find(id: string): Promise<DeviceRow | undefined> {
      const row = await db.selectFrom('devices').selectAll().where('id', '=', id).executeTakeFirst();
      return row && rowOf(row);
    },

    /** The user's trusted devices for one client, newest first. */
    async list(scope: DeviceScope): Promise<DeviceRow[]> {
      const rows = await db
        .selectFrom('devices')
        .selectAll()
        .where('user_id', '=', scope.userId)
        .where('client_id', '=', scope.clientId)
        .where('removed_at', 'is', null)
        .where(lastActivity, '>', scope.usedSince)
        .orderBy('created_at', 'desc')
        .orderBy('id')
        .execute();
      return rows.map(rowOf);
    },

    /** True when the device was in scope and is renamed. */
    async rename(scope: DeviceScope, id: string, name: string): Promise<boolean> {
      const result = await inScope(scope).set({ name }).where('id', '=', id).executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /** Revokes one device of the scope; true when it was trusted until now. */
    async revoke(scope: DeviceScope, id: string, now: number): Promise<boolean> {
      const result = await inScope(scope).set({ removed_at: now }).where('id', '=', id).executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /** Revokes every device of the scope but `keepId` (none kept when undefined); returns how many. */
    async revokeAll(scope: DeviceScope, now: number, keepId?: string): Promise<number> {
      let query = inScope(scope).set({ removed_at: now });
      if (keepId !== undefined) query = query.where('id', '!=', keepId);
      return Number((await query.executeTakeFirst()).numUpdatedRows);
    },

    /** Revokes a device by id alone (the "this wasn't me" link, whose signature names it). */
    async revokeById(id: string, now: number): Promise<boolean> {
      const result = await db
        .updateTable('devices')
        .set({ removed_at: now })
        .where('id', '=', id)
        .where('removed_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async touch(id: string, now: number): Promise<void> {
      await db.updateTable('devices').set({ last_used_at: now }).where('id', '=', id).execute();
    },

    /**
     * Takes idle devices out of use for good: stamps `removed_at` on every device not used since
     * `usedSince` and records one `device.expired` per device in the same transaction. The
     * conditional UPDATE hands each device to exactly one of the nodes sweeping at once (the
     * others find `removed_at` set). Returns how many expired.
     */
    async expireIdle(usedSince: number, now: number, events: EventStore): Promise<number> {
      return db.transaction().execute(async (tx) => {
        const expired = await tx
          .updateTable('devices')
          .set({ removed_at: now })
          .where('removed_at', 'is', null)
          .where(lastActivity, '<=', usedSince)
          .returning(['id', 'user_id', 'client_id', 'created_at', 'last_used_at'])
          .execute();
        for (const device of expired) {
          const lastActiveAt = Number(device.last_used_at ?? device.created_at);
          const event = { type: 'device.expired', userId: device.user_id, clientId: device.client_id, deviceId: device.id };
          await events.append({ ...event, detail: { lastActiveAt } }, now, tx);
        }
        return expired.length;
      });
    },
  };
}

export type DeviceStore = ReturnType<typeof createDeviceStore>;
