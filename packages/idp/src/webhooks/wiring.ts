import type { EventLog } from '../events/service.js';
import type { Db } from '../storage/schema.js';
import { createWebhookFanOut, type WebhookFanOut } from './fan-out.js';
import { createWebhookOutboxStore, type WebhookOutboxStore } from './outbox-store.js';
import { createWebhooks, type Webhooks } from './service.js';
import { createWebhookEndpointStore } from './store.js';
import { createDeliveryWorker, type DeliverySettings, type DeliveryWorker, type LogoutDelivery } from './worker.js';

export interface WebhookSettings extends DeliverySettings {
  production: boolean;
}

/**
 * The webhooks wing over one database, wired as context.ts wires the rest, in two steps: the
 * fan-out first (the event store writes each event's outbox rows through it), then, once the
 * event log exists, the service and this node's delivery loop.
 */
export async function openWebhooks(
  db: Db,
  settings: WebhookSettings,
): Promise<{
  fanOut: WebhookFanOut;
  outbox: WebhookOutboxStore;
  withEvents(events: EventLog): {
    webhooks: Webhooks;
    /** This node's delivery loop: webhooks, and back-channel logout tokens through `logout` (oidc/backchannel-logout.ts). */
    startDelivery(onError: (error: unknown) => void, logout?: LogoutDelivery): DeliveryWorker;
  };
}> {
  const endpoints = createWebhookEndpointStore(db);
  const outbox = createWebhookOutboxStore(db);
  const fanOut = createWebhookFanOut({ endpoints, outbox });
  await fanOut.reload();
  const { sealer, production, allowInternal, now } = settings;
  return {
    fanOut,
    outbox,
    withEvents: (events) => ({
      webhooks: createWebhooks({ store: endpoints, outbox, fanOut, sealer, events, production, allowInternal, now }),
      startDelivery(onError, logout) {
        const worker = createDeliveryWorker({ ...settings, outbox, endpoints, fanOut, events, onError, ...(logout ? { logout } : {}) });
        worker.start();
        return worker;
      },
    }),
  };
}
