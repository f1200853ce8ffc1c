import { afterRow, type PageStart } from '../storage/pagination.js';
import type { Database, Db } from '../storage/schema.js';

/** An endpoint as operators see it: never its secret. */
export interface WebhookEndpoint {
  id: string;
  url: string;
  /** ['all'], or the event types it receives. */
  events: string[];
  createdAt: number;
  disabledAt: number | null;
  /** 'operator', or 'failing' when the service disabled it. */
  disabledReason: string | null;
  /** Failed attempts since the last 2xx. */
  failureCount: number;
  failingSince: number | null;
  lastError: string | null;
  lastErrorAt: number | null;
  lastDeliveredAt: number | null;
}

type EndpointRow = Database['webhook_endpoints'];

const time = (value: number | null) => (value === null ? null : Number(value));

const toEndpoint = (row: EndpointRow): WebhookEndpoint => ({
  id: row.id,
  url: row.url,
  events: row.event_types.split(','),
  createdAt: Number(row.created_at),
  disabledAt: time(row.disabled_at),
  disabledReason: row.disabled_reason,
  failureCount: Number(row.failure_count),
  failingSince: time(row.failing_since),
  lastError: row.last_error,
  lastErrorAt: time(row.last_error_at),
  lastDeliveredAt: time(row.last_delivered_at),
});

/** Webhook endpoints: the URL, the event types, the sealed secret and the delivery health. */
export function createWebhookEndpointStore(db: Db) {
  return {
    async insert(endpoint: {
      id: string;
      url: string;
      events: string[];
      secretSealed: string;
      createdAt: number;
    }): Promise<WebhookEndpoint> {
      const row: EndpointRow = {
        id: endpoint.id,
        url: endpoint.url,
        event_types: endpoint.events.join(','),
        secret_sealed: endpoint.secretSealed,
        created_at: endpoint.createdAt,
        disabled_at: null,
        disabled_reason: null,
        failure_count: 0,
        failing_since: null,
        last_error: null,
        last_error_at: null,
        last_delivered_at: null,
      };
      await db.insertInto('webhook_endpoints').values(row).execute();
      return toEndpoint(row);
    },

    async count(): Promise<number> {
      const row = await db
        .selectFrom('webhook_endpoints')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirst();
      return Number(row?.n ?? 0);
    },

    async list(): Promise<WebhookEndpoint[]> {
      return (await db.selectFrom('webhook_endpoints').selectAll().orderBy('created_at').orderBy('id').execute()).map(toEndpoint);
    },

    async page(after: PageStart, limit: number): Promise<WebhookEndpoint[]> {
      let query = db.selectFrom('webhook_endpoints').selectAll().orderBy('created_at').orderBy('id').limit(limit);
      if (after) query = query.where(afterRow(after));
      return (await query.execute()).map(toEndpoint);
    },

    async find(id: string): Promise<WebhookEndpoint | undefined> {
      const row = await db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toEndpoint(row);
    },

    /** Enabled endpoints with their types, for the subscription cache. */
    async subscriptions(): Promise<{ id: string; events: string[] }[]> {
      const rows = await db.selectFrom('webhook_endpoints').select(['id', 'event_types']).where('disabled_at', 'is', null).execute();
      return rows.map((row) => ({ id: row.id, events: row.event_types.split(',') }));
    },

    /** The sealed secrets of these endpoints, for signing. */
    async secrets(ids: string[]): Promise<Map<string, { url: string; secretSealed: string }>> {
      if (ids.length === 0) return new Map();
      const rows = await db.selectFrom('webhook_endpoints').select(['id', 'url', 'secret_sealed']).where('id', 'in', ids).execute();
      return new Map(rows.map((row) => [row.id, { url: row.url, secretSealed: row.secret_sealed }]));
    },

    /** Deletes the endpoint and its outbox rows in one transaction; false when unknown. */
    async delete(id: string): Promise<boolean> {
      return db.transaction().execute(async (tx) => {
        await tx.deleteFrom('webhook_deliveries').where('endpoint_id', '=', id).execute();
        const result = await tx.deleteFrom('webhook_endpoints').where('id', '=', id).executeTakeFirst();
        return Number(result.numDeletedRows) === 1;
      });
    },

    /**
     * Disables (`at`, with the reason) or enables (null) the endpoint; enabling clears the
     * failure streak so the disable threshold counts afresh. Undefined when unknown.
     */
    async setDisabled(id: string, at: number | null, reason: string | null): Promise<WebhookEndpoint | undefined> {
      const change =
        at === null
          ? { disabled_at: null, disabled_reason: null, failure_count: 0, failing_since: null }
          : { disabled_at: at, disabled_reason: reason };
      const result = await db.updateTable('webhook_endpoints').set(change).where('id', '=', id).executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) return undefined;
      return this.find(id);
    },

    async recordSuccess(id: string, at: number): Promise<void> {
      await db
        .updateTable('webhook_endpoints')
        .set({ failure_count: 0, failing_since: null, last_delivered_at: at })
        .where('id', '=', id)
        .execute();
    },

    /**
     * Counts a failed attempt and, when the endpoint has failed for `disableAfterMs` with no
     * success, disables it (one statement, so concurrent nodes agree). True when this call
     * disabled it.
     */
    async recordFailure(id: string, error: string, at: number, disableAfterMs: number): Promise<boolean> {
      await db
        .updateTable('webhook_endpoints')
        .set((eb) => ({
          failure_count: eb('failure_count', '+', 1),
          failing_since: eb.fn.coalesce('failing_since', eb.val(at)),
          last_error: error,
          last_error_at: at,
        }))
        .where('id', '=', id)
        .execute();
      const disabled = await db
        .updateTable('webhook_endpoints')
        .set({ disabled_at: at, disabled_reason: 'failing' })
        .where('id', '=', id)
        .where('disabled_at', 'is', null)
        .where('failing_since', '<=', at - disableAfterMs)
        .executeTakeFirst();
      return Number(disabled.numUpdatedRows) === 1;
    },
  };
}

export type WebhookEndpointStore = ReturnType<typeof createWebhookEndpointStore>;
