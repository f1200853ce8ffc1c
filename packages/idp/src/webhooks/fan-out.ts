import { performance } from 'node:perf_hooks';
import { Type } from 'typebox';
import { WEBHOOK_SUBSCRIPTION_CACHE_MS } from '../defaults.js';
import type { AuditEvent, EventFanOut } from '../events/store.js';
import type { Database, Db } from '../storage/schema.js';
import { deliveryRows, type WebhookOutboxStore } from './outbox-store.js';
import type { WebhookEndpointStore } from './store.js';

/** The subscription that takes every event type, present and future. */
export const ALL_EVENTS = 'all';

const NullableString = Type.Union([Type.String(), Type.Null()]);

/** The body of a delivery, as webhookPayload writes it: the schema the OpenAPI document's `webhooks` give (http/openapi-document.ts). */
export const WebhookMessageSchema = Type.Object(
  {
    type: Type.String({ description: 'the event type (events/types.ts)' }),
    timestamp: Type.String({ format: 'date-time', description: 'when the event happened' }),
    data: Type.Object({
      id: Type.String({ description: 'the audit event id' }),
      type: Type.String(),
      at: Type.Integer({ description: 'Unix epoch milliseconds' }),
      userId: NullableString,
      clientId: NullableString,
      deviceId: NullableString,
      actor: Type.Union([Type.String(), Type.Null()], { description: "who acted when not the user: 'cli', or an admin key's id" }),
      detail: Type.Union([Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()])), Type.Null()], {
        description: 'non-secret facts: a reason code, a count',
      }),
    }),
  },
  { description: 'A Standard Webhooks message: the event type, its time, and the audit event without its IP address and User-Agent' },
);

/**
 * The body of a delivery (Standard Webhooks: type, timestamp, data). The data is the audit
 * event without its IP address and User-Agent: those stay in the audit trail, which a user's
 * deletion clears, rather than spreading to every receiver. Events never hold a secret or a code.
 */
export function webhookPayload(event: AuditEvent): string {
  const { id, type, at, userId, clientId, deviceId, actor, detail } = event;
  return JSON.stringify({
    type,
    timestamp: new Date(at).toISOString(),
    data: { id, type, at, userId, clientId, deviceId, actor, detail },
  });
}

export interface WebhookFanOut {
  whenEnqueued(listener: () => void): void;
  /** Reloads now (after a change on this process), or joins a reload under way. */
  reload(): Promise<void>;
  /** Reloads when the cache is older than its bound; errors are the caller's to log. */
  refreshIfStale(): Promise<void>;
  endpointsFor(type: string): string[];
  enqueue(event: AuditEvent, endpointIds: string[], tx: Db): Promise<void>;
  /** The outbox rows of an event for a caller that writes them in its own statement (factors/device-key/sign-in-store.ts). */
  deliveriesFor(event: AuditEvent): Database['webhook_deliveries'][];
  /** After such a caller wrote rows: the delivery loop of this process looks sooner. */
  enqueued(): void;
  deleteForUser: (userId: string, tx: Db) => Promise<void>;
}

/**
 * Writes an outbox row per subscribed endpoint with each event (events/store.ts append), from
 * subscriptions held in memory: an event type no endpoint takes costs no statement. The cache
 * is reloaded when older than WEBHOOK_SUBSCRIPTION_CACHE_MS (by the delivery loop, or by the
 * next event) and at once after a change made through this process.
 */
export function createWebhookFanOut({ endpoints, outbox }: { endpoints: WebhookEndpointStore; outbox: WebhookOutboxStore }): WebhookFanOut {
  /** Told after rows were written: the delivery loop of this process looks sooner. */
  let onEnqueued: (() => void) | undefined;
  let byType = new Map<string, string[]>();
  let loadedAt = Number.NEGATIVE_INFINITY;
  let loading: Promise<void> | undefined;

  async function load(): Promise<void> {
    const startedAt = performance.now();
    const next = new Map<string, string[]>();
    for (const endpoint of await endpoints.subscriptions())
      for (const type of endpoint.events) next.set(type, [...(next.get(type) ?? []), endpoint.id]);
    byType = next;
    loadedAt = startedAt;
  }

  const fanOut = {
    whenEnqueued(listener: () => void): void {
      onEnqueued = listener;
    },

    reload(): Promise<void> {
      loading ??= load().finally(() => {
        loading = undefined;
      });
      return loading;
    },

    async refreshIfStale(): Promise<void> {
      if (performance.now() - loadedAt >= WEBHOOK_SUBSCRIPTION_CACHE_MS) await fanOut.reload();
    },

    endpointsFor(type: string): string[] {
      // A stale cache still answers (the hot path never waits); it reloads in the background.
      if (performance.now() - loadedAt >= WEBHOOK_SUBSCRIPTION_CACHE_MS) fanOut.reload().catch(() => {});
      const exact = byType.get(type) ?? [];
      const all = byType.get(ALL_EVENTS) ?? [];
      return all.length === 0 ? exact : [...new Set([...exact, ...all])];
    },

    async enqueue(event: AuditEvent, endpointIds: string[], tx: Db): Promise<void> {
      await outbox.enqueue(event, webhookPayload(event), endpointIds, tx);
      onEnqueued?.();
    },

    deliveriesFor(event: AuditEvent): Database['webhook_deliveries'][] {
      const endpointIds: string[] = fanOut.endpointsFor(event.type);
      return endpointIds.length === 0 ? [] : deliveryRows(event, webhookPayload(event), endpointIds);
    },

    enqueued(): void {
      onEnqueued?.();
    },

    deleteForUser: (userId: string, tx: Db) => outbox.deleteForUser(userId, tx),
  } satisfies EventFanOut & Record<string, unknown>;
  return fanOut;
}
