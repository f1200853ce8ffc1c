import { sql } from 'kysely';
import { randomToken } from '../crypto/secrets.js';
import type { Database, Db } from '../storage/schema.js';

/** The outbox rows of one event: one per endpoint, due now. */
export function deliveryRows(
  event: { id: string; userId: string | null; at: number },
  payload: string,
  endpointIds: string[],
): Database['webhook_deliveries'][] {
  return endpointIds.map((endpointId) => ({
    id: randomToken('msg_', 16),
    endpoint_id: endpointId,
    event_id: event.id,
    user_id: event.userId,
    payload,
    created_at: event.at,
    attempts: 0,
    next_attempt_at: event.at,
    lease_until: 0,
    lease_owner: null,
    done_at: null,
    delivered: 0,
    last_error: null,
    kind: 'webhook',
  }));
}

/** What an outbox row carries: a webhook message, or a back-channel logout token (oidc/backchannel-logout.ts). */
export type DeliveryKind = 'webhook' | 'backchannel_logout';

/**
 * The outbox row of one back-channel logout: to the client `clientId`, due now. `payload` is
 * what the token will say (`sub`, `sid`); the token itself is signed at each attempt (a fresh
 * jti, a short life), so a retry hours later is not an expired token. No user_id: a logout is
 * not held behind the user's earlier webhooks, nor dropped with the user's deletion.
 */
export function logoutDeliveryRow(clientId: string, payload: string, at: number): Database['webhook_deliveries'] {
  return {
    id: randomToken('msg_', 16),
    endpoint_id: clientId,
    event_id: `bcl_${at.toString(36).padStart(9, '0')}${randomToken('', 8)}`,
    user_id: null,
    payload,
    created_at: at,
    attempts: 0,
    next_attempt_at: at,
    lease_until: 0,
    lease_owner: null,
    done_at: null,
    delivered: 0,
    last_error: null,
    kind: 'backchannel_logout',
  };
}

/** A delivery a node has claimed: what to send where, and how many attempts it has had (this one included). */
export interface ClaimedDelivery {
  id: string;
  kind: DeliveryKind;
  /** A webhook endpoint's id, or a client's id for a back-channel logout. */
  endpointId: string;
  eventId: string;
  payload: string;
  createdAt: number;
  attempts: number;
}

/** Where a delivery stands: waiting its first attempt, retrying after failures, delivered, or given up. */
export type DeliveryState = 'pending' | 'retrying' | 'delivered' | 'failed';

const deliveryState = (doneAt: number | null, delivered: number, lastError: string | null): DeliveryState =>
  doneAt === null ? (lastError === null ? 'pending' : 'retrying') : delivered === 1 ? 'delivered' : 'failed';

/** A delivery as the console lists it. */
export interface OutboxDelivery {
  id: string;
  eventId: string;
  eventType: string | null;
  createdAt: number;
  attempts: number;
  state: DeliveryState;
  lastError: string | null;
  /** When the next attempt is due; null once done. */
  nextAttemptAt: number | null;
}

/**
 * The webhook outbox: one row per (event, subscribed endpoint), inserted in the event's
 * transaction, claimed by one node at a time under a lease, marked done when delivered or
 * given up, then swept.
 */
export function createWebhookOutboxStore(db: Db) {
  return {
    /** In the event's transaction: one row per endpoint, due now. */
    async enqueue(event: { id: string; userId: string | null; at: number }, payload: string, endpointIds: string[], tx: Db): Promise<void> {
      await tx
        .insertInto('webhook_deliveries')
        .values(deliveryRows(event, payload, endpointIds))
        .execute();
    },

    /**
     * Claims up to `batch` due deliveries for `owner` until `now + leaseMs`, in one UPDATE
     * whose WHERE re-checks the lease, so two nodes never hold the same row (on PostgreSQL the
     * second UPDATE waits for the first and then finds the lease taken). A row waits while an
     * earlier delivery of the same user to the same endpoint is not done: per-user order.
     * Endpoints that are disabled keep their rows until re-enabled or swept. Back-channel
     * logout rows (user_id null, so never held by order) go to a client, not an endpoint.
     */
    async claim(owner: string, now: number, leaseMs: number, batch: number): Promise<ClaimedDelivery[]> {
      const due = db
        .selectFrom('webhook_deliveries as d')
        .leftJoin('webhook_endpoints as w', (join) => join.onRef('w.id', '=', 'd.endpoint_id').on('d.kind', '=', 'webhook'))
        .select('d.id')
        .where('d.done_at', 'is', null)
        .where('d.next_attempt_at', '<=', now)
        .where('d.lease_until', '<=', now)
        .where((eb) =>
          eb.or([eb('d.kind', '=', 'backchannel_logout'), eb.and([eb('w.id', 'is not', null), eb('w.disabled_at', 'is', null)])]),
        )
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('webhook_deliveries as e')
                .select(sql<number>`1`.as('one'))
                .whereRef('e.endpoint_id', '=', 'd.endpoint_id')
                .whereRef('e.user_id', '=', 'd.user_id')
                .whereRef('e.event_id', '<', 'd.event_id')
                .where('e.done_at', 'is', null),
            ),
          ),
        )
        .orderBy('d.next_attempt_at')
        .orderBy('d.event_id')
        .limit(batch);
      const rows = await db
        .updateTable('webhook_deliveries')
        .set((eb) => ({ lease_until: now + leaseMs, lease_owner: owner, attempts: eb('attempts', '+', 1) }))
        .where('id', 'in', due)
        .where('done_at', 'is', null)
        .where('lease_until', '<=', now)
        .returning(['id', 'kind', 'endpoint_id', 'event_id', 'payload', 'created_at', 'attempts'])
        .execute();
      return rows
        .map((row) => ({
          id: row.id,
          kind: row.kind === 'backchannel_logout' ? ('backchannel_logout' as const) : ('webhook' as const),
          endpointId: row.endpoint_id,
          eventId: row.event_id,
          payload: row.payload,
          createdAt: Number(row.created_at),
          attempts: Number(row.attempts),
        }))
        .sort((a, b) => (a.eventId < b.eventId ? -1 : 1));
    },

    /**
     * The backlog for the metrics page: how many deliveries are pending (not delivered, not given
     * up; those of disabled endpoints included) and when the oldest was created. One aggregate
     * over the outbox, which the sweep keeps to the pending rows and a minute of done ones.
     */
    async backlog(): Promise<{ pending: number; oldestCreatedAt: number | null }> {
      const row = await db
        .selectFrom('webhook_deliveries')
        .select((eb) => [eb.fn.countAll().as('pending'), eb.fn.min('created_at').as('oldest')])
        .where('done_at', 'is', null)
        .executeTakeFirst();
      return { pending: Number(row?.pending ?? 0), oldestCreatedAt: row?.oldest == null ? null : Number(row.oldest) };
    },

    /** Delivered: done. Only the holder of the lease writes the outcome. */
    async delivered(id: string, owner: string, now: number): Promise<void> {
      await db
        .updateTable('webhook_deliveries')
        .set({ done_at: now, delivered: 1, lease_owner: null, last_error: null })
        .where('id', '=', id)
        .where('lease_owner', '=', owner)
        .execute();
    },

    /** Failed: retried at `retryAt`, or given up (done, not delivered) when null. */
    async failed(id: string, owner: string, error: string, now: number, retryAt: number | null): Promise<void> {
      await db
        .updateTable('webhook_deliveries')
        .set(
          retryAt === null
            ? { done_at: now, lease_owner: null, lease_until: 0, last_error: error }
            : { next_attempt_at: retryAt, lease_owner: null, lease_until: 0, last_error: error },
        )
        .where('id', '=', id)
        .where('lease_owner', '=', owner)
        .execute();
    },

    /** Hands claimed rows back unattempted (a node shutting down): due again at once, on any node. */
    async release(ids: string[], owner: string): Promise<void> {
      if (ids.length === 0) return;
      await db
        .updateTable('webhook_deliveries')
        .set((eb) => ({ lease_until: 0, lease_owner: null, attempts: eb('attempts', '-', 1) }))
        .where('id', 'in', ids)
        .where('lease_owner', '=', owner)
        .execute();
    },

    /** A user's deletion: their deliveries, pending or done, go in the deleting transaction. */
    async deleteForUser(userId: string, tx: Db): Promise<void> {
      await tx.deleteFrom('webhook_deliveries').where('user_id', '=', userId).execute();
    },

    /**
     * Done rows go; so do rows still pending past the retry window (their endpoint was
     * disabled meanwhile) and rows of endpoints deleted while another node still enqueued to them.
     */
    async sweep(now: number, retryWindowMs: number): Promise<void> {
      await db.deleteFrom('webhook_deliveries').where('done_at', 'is not', null).execute();
      await db
        .deleteFrom('webhook_deliveries')
        .where('created_at', '<', now - retryWindowMs)
        .where('lease_until', '<=', now)
        .execute();
      await db
        .deleteFrom('webhook_deliveries')
        .where('kind', '=', 'webhook')
        .where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom('webhook_endpoints as w').select('w.id').whereRef('w.id', '=', 'webhook_deliveries.endpoint_id'))),
        )
        .execute();
    },

    /**
     * An endpoint's deliveries still in the outbox, newest first (the console): pending and
     * retrying ones, and those done within the last sweep (delivered, or given up).
     */
    async listForEndpoint(endpointId: string, limit: number): Promise<OutboxDelivery[]> {
      const rows = await db
        .selectFrom('webhook_deliveries as d')
        .leftJoin('events as e', 'e.id', 'd.event_id')
        .select([
          'd.id',
          'd.event_id',
          'e.type',
          'd.created_at',
          'd.attempts',
          'd.next_attempt_at',
          'd.done_at',
          'd.delivered',
          'd.last_error',
        ])
        .where('d.endpoint_id', '=', endpointId)
        .where('d.kind', '=', 'webhook')
        .orderBy('d.event_id', 'desc')
        .orderBy('d.id', 'desc')
        .limit(limit)
        .execute();
      return rows.map((row) => ({
        id: row.id,
        eventId: row.event_id,
        eventType: row.type ?? null,
        createdAt: Number(row.created_at),
        attempts: Number(row.attempts),
        state: deliveryState(row.done_at, row.delivered, row.last_error),
        lastError: row.last_error,
        nextAttemptAt: row.done_at === null ? Number(row.next_attempt_at) : null,
      }));
    },

    /**
     * An operator's retry: a delivery that failed, is not delivered and not held by a node is due again now
     * (given-up ones come back to the queue). One conditional UPDATE, so a node claiming it at
     * the same moment wins or loses cleanly. The endpoint id, or undefined when nothing changed.
     */
    async retryNow(id: string, now: number): Promise<string | undefined> {
      const row = await db
        .updateTable('webhook_deliveries')
        .set({ done_at: null, next_attempt_at: now })
        .where('id', '=', id)
        .where('kind', '=', 'webhook')
        .where('delivered', '=', 0)
        .where('last_error', 'is not', null)
        .where('lease_until', '<=', now)
        .returning('endpoint_id')
        .executeTakeFirst();
      return row?.endpoint_id;
    },

    /** Every row, oldest first (tests and diagnostics). */
    async list(): Promise<
      { id: string; endpointId: string; eventId: string; attempts: number; done: boolean; delivered: boolean; lastError: string | null }[]
    > {
      const rows = await db.selectFrom('webhook_deliveries').selectAll().orderBy('event_id').orderBy('id').execute();
      return rows.map((row) => ({
        id: row.id,
        endpointId: row.endpoint_id,
        eventId: row.event_id,
        attempts: Number(row.attempts),
        done: row.done_at !== null,
        delivered: row.delivered === 1,
        lastError: row.last_error,
      }));
    },
  };
}

export type WebhookOutboxStore = ReturnType<typeof createWebhookOutboxStore>;
