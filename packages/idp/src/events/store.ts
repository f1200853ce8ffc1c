import { sql } from 'kysely';
import { randomToken } from '../crypto/secrets.js';
import type { Database, Db } from '../storage/schema.js';
import { deleteBefore } from '../storage/sweeper.js';

/** One entry of the audit trail. Never holds a secret, a code or a key. */
export interface AuditEvent {
  id: string;
  type: string;
  at: number;
  userId: string | null;
  clientId: string | null;
  deviceId: string | null;
  ip: string | null;
  userAgent: string | null;
  /** Who acted when not the user: 'cli', or an admin key's id. */
  actor: string | null;
  /** Non-secret facts: a reason code, a count. */
  detail: Record<string, string | number | boolean> | null;
}

export type NewEvent = Pick<AuditEvent, 'type'> & Partial<Omit<AuditEvent, 'id' | 'type' | 'at'>>;

export interface EventFilter {
  userId?: string;
  type?: string;
  /** Events at or after this time. */
  since?: number;
  /** Newest first; continue after this event (a cursor from the previous page). */
  before?: { at: number; id: string };
  limit: number;
}

type EventRow = Database['events'];

export const toEvent = (row: EventRow): AuditEvent => ({
  id: row.id,
  type: row.type,
  at: Number(row.at),
  userId: row.user_id,
  clientId: row.client_id,
  deviceId: row.device_id,
  ip: row.ip,
  userAgent: row.user_agent,
  actor: row.actor,
  detail: row.detail === null ? null : JSON.parse(row.detail),
});

let sequence = 0;
/**
 * Ids sort in the order this process wrote them, also within one millisecond: the time, a
 * wrapping counter, then randomness (ids of different nodes in the same millisecond interleave).
 */
function eventId(at: number): string {
  sequence = (sequence + 1) % 36 ** 4;
  return `evt_${at.toString(36).padStart(9, '0')}${sequence.toString(36).padStart(4, '0')}${randomToken('', 8)}`;
}

/** The row of a new event (also written by the login's folded statement, factors/device-key/sign-in-store.ts). */
export function eventRow(event: NewEvent, at: number): EventRow {
  return {
    id: eventId(at),
    type: event.type,
    at,
    user_id: event.userId ?? null,
    client_id: event.clientId ?? null,
    device_id: event.deviceId ?? null,
    ip: event.ip ?? null,
    user_agent: event.userAgent ?? null,
    actor: event.actor ?? null,
    detail: event.detail ? JSON.stringify(event.detail) : null,
  };
}

/** An event row and its webhook outbox rows, written together by the caller. */
export interface PreparedEvent {
  event: EventRow;
  deliveries: Database['webhook_deliveries'][];
}

/** What is written with an event and goes with a user's events: the webhook outbox (webhooks/fan-out.ts). */
export interface EventFanOut {
  /** Endpoints subscribed to the type, from memory: an event nobody subscribes to costs no statement. */
  endpointsFor(type: string): string[];
  enqueue(event: AuditEvent, endpointIds: string[], tx: Db): Promise<void>;
  /** The outbox rows of an event, for a statement that writes the event itself (the trusted login's); none when unsubscribed. */
  deliveriesFor(event: AuditEvent): Database['webhook_deliveries'][];
  /** Told after such a statement wrote rows. */
  enqueued(): void;
  deleteForUser(userId: string, tx: Db): Promise<void>;
}

/** The events table: appended to, read newest first, swept after the retention period. Nothing updates a row. */
export function createEventStore(db: Db, fanOut?: EventFanOut) {
  return {
    /**
     * Appends one event; `tx` writes it in the caller's transaction (a deletion and its record).
     * Webhook deliveries of the event are written in the same transaction, so a node that dies
     * loses neither or both.
     */
    async append(event: NewEvent, at: number, tx: Db = db): Promise<AuditEvent> {
      const row = eventRow(event, at);
      const recorded = toEvent(row);
      const endpoints = fanOut?.endpointsFor(row.type) ?? [];
      const write = async (t: Db) => {
        await t.insertInto('events').values(row).execute();
        if (fanOut && endpoints.length > 0) await fanOut.enqueue(recorded, endpoints, t);
      };
      if (endpoints.length === 0 || tx.isTransaction) await write(tx);
      else await db.transaction().execute(write);
      return recorded;
    },

    /**
     * An event and its outbox rows, for a caller that writes them in its own statement (the
     * trusted login's, factors/device-key/sign-in-store.ts): both or neither, as `append` does.
     */
    prepare(event: NewEvent, at: number): PreparedEvent {
      const row = eventRow(event, at);
      return { event: row, deliveries: fanOut?.deliveriesFor(toEvent(row)) ?? [] };
    },

    /** After a prepared event with deliveries was written. */
    enqueued(): void {
      fanOut?.enqueued();
    },

    /** Newest first, by (at, id). */
    async list(filter: EventFilter): Promise<AuditEvent[]> {
      let query = db.selectFrom('events').selectAll().orderBy('at', 'desc').orderBy('id', 'desc').limit(filter.limit);
      if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId);
      if (filter.type !== undefined) query = query.where('type', '=', filter.type);
      if (filter.since !== undefined) query = query.where('at', '>=', filter.since);
      const before = filter.before;
      if (before)
        query = query.where((eb) => eb.or([eb('at', '<', before.at), eb.and([eb('at', '=', before.at), eb('id', '<', before.id)])]));
      return (await query.execute()).map(toEvent);
    },

    /**
     * How many events of these types fell in each bucket of `bucketMs` from `since` (the
     * dashboard): `[bucket index, count]` pairs; `detailLike` narrows to a detail substring.
     */
    async countByBucket(types: string[], since: number, bucketMs: number, detailLike?: string): Promise<Array<[number, number]>> {
      // Grouped by the output column's name, not by the expression again: PostgreSQL sees the
      // expression's parameters twice as different placeholders and refuses `at` outside GROUP BY.
      const bucket = sql<number>`cast((at - ${since}) / ${bucketMs} as integer)`;
      let query = db
        .selectFrom('events')
        .select([bucket.as('bucket'), (eb) => eb.fn.countAll<number>().as('n')])
        .where('type', 'in', types)
        .where('at', '>=', since)
        .groupBy(sql.ref('bucket'));
      if (detailLike !== undefined) query = query.where('detail', 'like', `%${detailLike}%`);
      return (await query.execute()).map((row) => [Number(row.bucket), Number(row.n)]);
    },

    /** Drops the user's events and their pending webhook deliveries (their deletion); in the deleting transaction. */
    async deleteForUser(userId: string, tx: Db): Promise<void> {
      await tx.deleteFrom('events').where('user_id', '=', userId).execute();
      await fanOut?.deleteForUser(userId, tx);
    },

    /** Retention: events older than `cutoff` go. */
    async deleteOlderThan(cutoff: number): Promise<void> {
      await deleteBefore(db, 'events', 'at', cutoff);
    },
  };
}

export type EventStore = ReturnType<typeof createEventStore>;
