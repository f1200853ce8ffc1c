import { defineWing } from '../composition/wing.js';
import type { Sealer } from '../crypto/seal.js';
import { WEBHOOK_RETRY_WINDOW_HOURS } from '../defaults.js';
import { createEventLog } from '../events/service.js';
import { createEventStore } from '../events/store.js';
import type { Db } from '../storage/schema.js';
import { createWebhookFanOut } from './fan-out.js';
import { createWebhookOutboxStore } from './outbox-store.js';
import { webhookAdminRoutes } from './routes.js';
import { createWebhooks } from './service.js';
import { createWebhookEndpointStore } from './store.js';
import type { HostResolver } from './target.js';
import { createDeliveryWorker, type DeliveryTimings, type DeliveryWorker, type LogoutDelivery } from './worker.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The event log and the webhooks that carry it out (docs/operations.md, "Webhooks"): one wing,
 * because the event store writes each event's outbox rows through the webhooks' fan-out in the
 * same transaction. The outbox also carries back-channel logout tokens (oidc/backchannel-logout.ts).
 */
export const eventsWing = defineWing(
  'events',
  ({
    db,
    now,
    config,
    sealerFor,
    overrides,
  }: {
    db: Db;
    now: () => number;
    config: {
      production: boolean;
      webhookAllowInternal: boolean;
      webhookRequestTimeoutMs: number;
      webhookLeaseMs: number;
      eventRetentionDays: number;
    };
    sealerFor: (purpose: string) => Sealer;
    overrides: { webhookTimings?: Partial<DeliveryTimings>; webhookResolve?: HostResolver };
  }) => {
    const endpoints = createWebhookEndpointStore(db);
    const outbox = createWebhookOutboxStore(db);
    const fanOut = createWebhookFanOut({ endpoints, outbox });
    const eventStore = createEventStore(db, fanOut);
    const events = createEventLog({ store: eventStore, now });
    // Development keeps loopback receivers (tests, the demo); production refuses internal ones unless told.
    const settings = {
      sealer: sealerFor('webhook-secret'),
      production: config.production,
      allowInternal: !config.production || config.webhookAllowInternal,
      timings: { requestTimeoutMs: config.webhookRequestTimeoutMs, leaseMs: config.webhookLeaseMs, ...overrides.webhookTimings },
      ...(overrides.webhookResolve ? { resolve: overrides.webhookResolve } : {}),
      now,
    };
    const webhooks = createWebhooks({ store: endpoints, outbox, fanOut, events, ...settings });
    return {
      services: {
        events,
        eventStore,
        webhooks,
        webhookOutbox: outbox,
        webhookFanOut: fanOut,
        /** Starts this node's delivery loop: webhooks, and back-channel logout tokens through `logout`; `stop()` it before closing. */
        startOutboxDelivery(onError: (error: unknown) => void, logout?: LogoutDelivery): DeliveryWorker {
          const worker = createDeliveryWorker({ ...settings, outbox, endpoints, fanOut, events, onError, ...(logout ? { logout } : {}) });
          worker.start();
          return worker;
        },
      },
      routes: { admin: webhookAdminRoutes({ webhooks }) },
      ready: () => fanOut.reload(),
      async sweep(at: number) {
        await eventStore.deleteOlderThan(at - config.eventRetentionDays * DAY_MS);
        await outbox.sweep(at, WEBHOOK_RETRY_WINDOW_HOURS * 60 * 60 * 1000);
      },
    };
  },
);
