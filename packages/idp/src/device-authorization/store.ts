import { sql } from 'kysely';
import { resourcesColumn, resourcesOf } from '../authorization-codes/store.js';
import type { Db } from '../storage/schema.js';
import { deleteBefore } from '../storage/sweeper.js';

/** A device authorization as the device asked for it (RFC 8628 3.1), before the user answers. */
export interface NewDeviceAuthorization {
  idHash: string;
  userCodeHash: string;
  clientId: string;
  scope: string;
  resources: readonly string[];
  deviceName: string | null;
  requesterIp: string;
  createdAt: number;
  expiresAt: number;
  intervalSeconds: number;
}

/** A pending device authorization, as the confirmation page shows it. */
export interface PendingDeviceAuthorization {
  idHash: string;
  clientId: string;
  scope: string;
  resources: string[];
  deviceName: string | null;
  requesterIp: string;
  createdAt: number;
  expiresAt: number;
}

/** The sign-in that approved a device authorization: what the device's tokens are issued for. */
export interface DeviceSignIn {
  userId: string;
  deviceId: string | null;
  amr: string[];
  authTime: number;
  sid: string | null;
}

/** An approved device authorization, consumed by the token request that gets its tokens. */
export interface ConsumedDeviceAuthorization {
  signIn: DeviceSignIn;
  scope: string;
  resources: string[];
}

/** Why a device code gives no tokens (yet): RFC 8628 3.5's answers, or unknown (invalid_grant). */
export type PollRefusal = 'authorization_pending' | 'slow_down' | 'access_denied' | 'expired_token' | 'unknown';

const PENDING = 'pending';
const APPROVED = 'approved';
const DENIED = 'denied';
const CONSUMED = 'consumed';

/** The `device_authorizations` table (device-authorization/): every change is one conditional statement. */
export function createDeviceAuthorizationStore(db: Db) {
  return {
    /** Writes a new request; false when its user code's hash is taken (a live code drew the same letters). */
    async insert(row: NewDeviceAuthorization): Promise<boolean> {
      const inserted = await db
        .insertInto('device_authorizations')
        .values({
          id: row.idHash,
          user_code_hash: row.userCodeHash,
          client_id: row.clientId,
          scope: row.scope,
          resources: resourcesColumn(row.resources),
          device_name: row.deviceName,
          requester_ip: row.requesterIp,
          created_at: row.createdAt,
          expires_at: row.expiresAt,
          interval_seconds: row.intervalSeconds,
          last_polled_at: null,
          status: PENDING,
          decided_at: null,
          user_id: null,
          device_id: null,
          amr: null,
          auth_time: null,
          sid: null,
        })
        .onConflict((oc) => oc.column('user_code_hash').doNothing())
        .returning('id')
        .executeTakeFirst();
      return inserted !== undefined;
    },

    /** The live, unanswered request a user code names (by its hash), or undefined. */
    async findPendingByUserCode(userCodeHash: string, at: number): Promise<PendingDeviceAuthorization | undefined> {
      const row = await pendingQuery(db, at).where('user_code_hash', '=', userCodeHash).executeTakeFirst();
      return row && pendingOf(row);
    },

    /** The live, unanswered request by its id (the device code's hash), or undefined. */
    async findPending(idHash: string, at: number): Promise<PendingDeviceAuthorization | undefined> {
      const row = await pendingQuery(db, at).where('id', '=', idHash).executeTakeFirst();
      return row && pendingOf(row);
    },

    /**
     * The user's answer, once: only a live pending request changes (one statement, so of two
     * answers at once one wins). Approval records the sign-in the tokens will be issued for.
     */
    async decide(idHash: string, at: number, answer: { approve: true; signIn: DeviceSignIn } | { approve: false; userId: string }) {
      const decided = await db
        .updateTable('device_authorizations')
        .set(
          answer.approve
            ? {
                status: APPROVED,
                decided_at: at,
                user_id: answer.signIn.userId,
                device_id: answer.signIn.deviceId,
                amr: JSON.stringify(answer.signIn.amr),
                auth_time: answer.signIn.authTime,
                sid: answer.signIn.sid,
              }
            : { status: DENIED, decided_at: at, user_id: answer.userId },
        )
        .where('id', '=', idHash)
        .where('status', '=', PENDING)
        .where('expires_at', '>', at)
        .returning('id')
        .executeTakeFirst();
      return decided !== undefined;
    },

    /**
     * The token request's poll (RFC 8628 3.4, 3.5) for `clientId`'s device code: an approved
     * request is consumed in one conditional UPDATE, so of concurrent polls exactly one gets it
     * (SQLite serialises writers; PostgreSQL's row lock makes the second UPDATE see `consumed`).
     * Otherwise the refusal, the poll's time recorded: a poll sooner than the interval after the
     * last one is slow_down and raises the interval by `slowDownSeconds`.
     */
    async poll(
      idHash: string,
      clientId: string,
      at: number,
      slowDownSeconds: number,
    ): Promise<{ consumed: ConsumedDeviceAuthorization } | { refused: PollRefusal }> {
      const consumed = await db
        .updateTable('device_authorizations')
        .set({ status: CONSUMED, last_polled_at: at })
        .where('id', '=', idHash)
        .where('client_id', '=', clientId)
        .where('status', '=', APPROVED)
        .where('expires_at', '>', at)
        .returning(['user_id', 'device_id', 'amr', 'auth_time', 'sid', 'scope', 'resources'])
        .executeTakeFirst();
      if (consumed?.user_id && consumed.amr !== null && consumed.auth_time !== null) {
        return {
          consumed: {
            signIn: {
              userId: consumed.user_id,
              deviceId: consumed.device_id,
              amr: JSON.parse(consumed.amr) as string[],
              authTime: Number(consumed.auth_time),
              sid: consumed.sid,
            },
            scope: consumed.scope,
            resources: resourcesOf(consumed.resources),
          },
        };
      }
      // Polled on time: the time is recorded, the interval kept.
      const onTime = await db
        .updateTable('device_authorizations')
        .set({ last_polled_at: at })
        .where('id', '=', idHash)
        .where('client_id', '=', clientId)
        .where('status', '=', PENDING)
        .where('expires_at', '>', at)
        .where((eb) => eb.or([eb('last_polled_at', 'is', null), eb(sql<number>`last_polled_at + interval_seconds * 1000`, '<=', at)]))
        .returning('id')
        .executeTakeFirst();
      if (onTime) return { refused: 'authorization_pending' };
      const tooSoon = await db
        .updateTable('device_authorizations')
        .set((eb) => ({ last_polled_at: at, interval_seconds: eb('interval_seconds', '+', slowDownSeconds) }))
        .where('id', '=', idHash)
        .where('client_id', '=', clientId)
        .where('status', '=', PENDING)
        .where('expires_at', '>', at)
        .returning('id')
        .executeTakeFirst();
      if (tooSoon) return { refused: 'slow_down' };
      // Not this client's, consumed, denied or expired: read once to say which.
      const row = await db
        .selectFrom('device_authorizations')
        .select(['status', 'expires_at'])
        .where('id', '=', idHash)
        .where('client_id', '=', clientId)
        .executeTakeFirst();
      if (!row || row.status === CONSUMED) return { refused: 'unknown' };
      if (Number(row.expires_at) <= at) return { refused: 'expired_token' };
      if (row.status === DENIED) return { refused: 'access_denied' };
      return { refused: 'unknown' };
    },

    /** Deletes requests past their life (an answered one no longer matters once its device code has expired). */
    deleteExpired: (at: number) => deleteBefore(db, 'device_authorizations', 'expires_at', at),
  };
}

export type DeviceAuthorizationStore = ReturnType<typeof createDeviceAuthorizationStore>;

const pendingQuery = (db: Db, at: number) =>
  db
    .selectFrom('device_authorizations')
    .select(['id', 'client_id', 'scope', 'resources', 'device_name', 'requester_ip', 'created_at', 'expires_at'])
    .where('status', '=', PENDING)
    .where('expires_at', '>', at);

function pendingOf(row: {
  id: string;
  client_id: string;
  scope: string;
  resources: string | null;
  device_name: string | null;
  requester_ip: string;
  created_at: number;
  expires_at: number;
}): PendingDeviceAuthorization {
  return {
    idHash: row.id,
    clientId: row.client_id,
    scope: row.scope,
    resources: resourcesOf(row.resources),
    deviceName: row.device_name,
    requesterIp: row.requester_ip,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
  };
}
