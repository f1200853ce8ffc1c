import { PAGE_SIZE_MAX } from '../defaults.js';
import { ServiceError } from '../errors.js';
import { checkPageSize, checkQueryText, decodeCursor, encodeCursor } from '../storage/pagination.js';
import type { Db } from '../storage/schema.js';
import { currentRequest } from './request-context.js';
import { type AuditEvent, type EventStore, type NewEvent, type PreparedEvent, toEvent } from './store.js';
import { type EventType, isEventType } from './types.js';

export interface EventQuery {
  userId?: string;
  type?: string;
  since?: number;
  cursor?: string;
  limit: number;
}

/** The IP and User-Agent of the request being served fill in unless given. */
function withOrigin(event: NewEvent): NewEvent {
  const origin = currentRequest();
  return origin ? { ip: origin.ip, userAgent: origin.userAgent, ...event } : event;
}

/** Told of every event `record` wrote (metrics count sign-ins and code sends); must not throw. */
export type EventListener = (event: AuditEvent) => void;

export interface EventLog {
  /** Appends one event; the IP and User-Agent of the request being served fill in unless given. */
  record(
    event: NewEvent & {
      type: EventType;
    },
  ): Promise<AuditEvent>;
  /**
   * Adds a listener of the events `record` writes, and of those a caller wrote itself (`prepare`,
   * then `written`: the trusted login). Those a store appends in its transaction are not told.
   */
  onRecorded(listener: EventListener): void;
  /**
   * record() in the caller's transaction `tx` (a change and its event and webhook deliveries: all
   * or none), with the request's IP and User-Agent; as for a store's own appends, listeners are not told.
   */
  recordIn(tx: Db, event: NewEvent & { type: EventType }): Promise<AuditEvent>;
  /** What record() would write (the event and its webhook outbox rows), for a caller that writes them in its own statement (factors/device-key/sign-in-store.ts). */
  prepare: (
    event: NewEvent & {
      type: EventType;
    },
  ) => PreparedEvent;
  /** After a caller wrote a prepared event: its outbox rows are delivered and the listeners told, as record() does. */
  written(prepared: PreparedEvent): void;
  list(query: EventQuery): Promise<{
    events: AuditEvent[];
    nextCursor: string | null;
  }>;
  /** Every event of one user, newest first (their export). */
  forUser: (userId: string) => Promise<AuditEvent[]>;
  /** Counts per time bucket of events of some types (the console's dashboard, events/store.ts countByBucket). */
  countByBucket: EventStore['countByBucket'];
}

/** The audit trail: flows record what happened, operators read it newest first. */
export function createEventLog({ store, now }: { store: EventStore; now: () => number }): EventLog {
  const listeners: EventListener[] = [];
  return {
    async record(event: NewEvent & { type: EventType }): Promise<AuditEvent> {
      const recorded = await store.append(withOrigin(event), now());
      for (const listener of listeners) listener(recorded);
      return recorded;
    },

    recordIn: (tx: Db, event: NewEvent & { type: EventType }) => store.append(withOrigin(event), now(), tx),

    onRecorded(listener: EventListener): void {
      listeners.push(listener);
    },

    prepare: (event: NewEvent & { type: EventType }) => store.prepare(withOrigin(event), now()),

    written(prepared: PreparedEvent): void {
      if (prepared.deliveries.length > 0) store.enqueued();
      const recorded = toEvent(prepared.event);
      for (const listener of listeners) listener(recorded);
    },

    async list(query: EventQuery): Promise<{ events: AuditEvent[]; nextCursor: string | null }> {
      if (query.userId !== undefined) checkQueryText('user', query.userId);
      if (query.type !== undefined && !isEventType(query.type))
        throw new ServiceError('ERR_REQUEST_INVALID', `Unknown event type "${query.type}".`);
      const limit = checkPageSize(query.limit, PAGE_SIZE_MAX);
      const before = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
      const events = await store.list({
        ...(query.userId !== undefined ? { userId: query.userId } : {}),
        ...(query.type !== undefined ? { type: query.type } : {}),
        ...(query.since !== undefined ? { since: query.since } : {}),
        ...(before ? { before } : {}),
        limit,
      });
      const last = events.at(-1);
      return { events, nextCursor: events.length === limit && last ? encodeCursor(last.at, last.id) : null };
    },

    forUser: (userId: string) => store.list({ userId, limit: Number.MAX_SAFE_INTEGER }),

    countByBucket: (types, since, bucketMs, detailLike) => store.countByBucket(types, since, bucketMs, detailLike),
  };
}
