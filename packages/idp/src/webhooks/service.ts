import type { Sealer } from '../crypto/seal.js';
import { randomToken } from '../crypto/secrets.js';
import {
  PAGE_SIZE_MAX,
  WEBHOOK_DELIVERIES_LISTED,
  WEBHOOK_ENDPOINTS_MAX,
  WEBHOOK_SECRET_BYTES,
  WEBHOOK_URL_MAX_LENGTH,
} from '../defaults.js';
import { ServiceError } from '../errors.js';
import type { EventLog } from '../events/service.js';
import { EVENT_TYPES, isEventType } from '../events/types.js';
import { keysetPage, type PageQuery } from '../storage/pagination.js';
import { ALL_EVENTS, type WebhookFanOut } from './fan-out.js';
import type { OutboxDelivery, WebhookOutboxStore } from './outbox-store.js';
import type { WebhookEndpoint, WebhookEndpointStore } from './store.js';
import { isInternalHost } from './target.js';

/**
 * The URL as it will be stored, or ERR_REQUEST_INVALID saying what is wrong with it. In
 * production an internal host (target.ts) is refused unless `allowInternal`; names are checked
 * again, resolved, at each delivery.
 */
export function checkWebhookUrl(raw: string, production: boolean, allowInternal = false): string {
  const invalid = (why: string) => new ServiceError('ERR_REQUEST_INVALID', `The webhook URL ${why}.`);
  if (raw.length > WEBHOOK_URL_MAX_LENGTH) throw invalid(`is longer than ${WEBHOOK_URL_MAX_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('is not an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid('must be http(s)');
  if (production && url.protocol !== 'https:') throw invalid('must be https in production');
  // Credentials would sit in the database and in every listing; receivers verify the signature instead.
  if (url.username || url.password) throw invalid('must not hold a user name or password');
  if (url.hash) throw invalid('must not have a fragment');
  if (production && !allowInternal && isInternalHost(url.hostname))
    throw invalid('must not name a loopback, private, link-local or other internal address in production');
  return url.toString();
}

/** The event types as given (a list, or `all` alone), or ERR_REQUEST_INVALID naming the unknown one. */
export function checkEventTypes(types: string[]): string[] {
  const unique = [...new Set(types.map((type) => type.trim()).filter(Boolean))];
  if (unique.length === 0) throw new ServiceError('ERR_REQUEST_INVALID', `Name the event types to send, or "${ALL_EVENTS}".`);
  if (unique.includes(ALL_EVENTS)) {
    if (unique.length > 1) throw new ServiceError('ERR_REQUEST_INVALID', `"${ALL_EVENTS}" takes no other event type beside it.`);
    return unique;
  }
  const unknown = unique.find((type) => !isEventType(type));
  if (unknown !== undefined)
    throw new ServiceError('ERR_REQUEST_INVALID', `Unknown event type "${unknown}" (known: ${EVENT_TYPES.join(', ')}).`);
  return unique;
}

export interface Webhooks {
  create(
    input: {
      url: string;
      events: string[];
    },
    actor: string,
  ): Promise<
    WebhookEndpoint & {
      secret: string;
    }
  >;
  list: () => Promise<WebhookEndpoint[]>;
  /** A page of `list`, oldest first. */
  page(query: PageQuery): Promise<{ items: WebhookEndpoint[]; nextCursor: string | null }>;
  delete(id: string, actor: string): Promise<void>;
  /** Resumes deliveries, pending ones included; the failure streak starts again from zero. */
  enable: (id: string, actor: string) => Promise<WebhookEndpoint>;
  disable: (id: string, actor: string) => Promise<WebhookEndpoint>;
  /** The endpoint's deliveries still in the outbox, newest first. */
  deliveries(id: string): Promise<OutboxDelivery[]>;
  /** A delivery not delivered and not in flight is attempted again now; ERR_REQUEST_INVALID otherwise. */
  retry(deliveryId: string, actor: string): Promise<void>;
}

/**
 * Operators' webhook endpoints, shared by the CLI and the admin API. The signing secret is
 * drawn here, returned once by `create`, and stored only sealed (it must stay usable for the HMAC).
 */
export function createWebhooks({
  store,
  outbox,
  fanOut,
  sealer,
  events,
  production,
  allowInternal,
  now,
}: {
  store: WebhookEndpointStore;
  outbox: WebhookOutboxStore;
  fanOut: WebhookFanOut;
  sealer: Sealer;
  events: EventLog;
  production: boolean;
  /** SERVICE_IDP_WEBHOOK_ALLOW_INTERNAL: internal receivers are allowed in production too. */
  allowInternal: boolean;
  now: () => number;
}): Webhooks {
  const notFound = (id: string) => new ServiceError('ERR_NOT_FOUND', `No webhook endpoint ${id}.`);

  async function setDisabled(id: string, disabled: boolean, actor: string): Promise<WebhookEndpoint> {
    const endpoint = await store.setDisabled(id, disabled ? now() : null, disabled ? 'operator' : null);
    if (!endpoint) throw notFound(id);
    await fanOut.reload();
    await events.record(
      disabled
        ? { type: 'webhook.disabled', actor, detail: { webhookId: id, reason: 'operator' } }
        : { type: 'webhook.enabled', actor, detail: { webhookId: id } },
    );
    return endpoint;
  }

  return {
    async create(input: { url: string; events: string[] }, actor: string): Promise<WebhookEndpoint & { secret: string }> {
      const url = checkWebhookUrl(input.url, production, allowInternal);
      const types = checkEventTypes(input.events);
      if ((await store.count()) >= WEBHOOK_ENDPOINTS_MAX)
        throw new ServiceError('ERR_REQUEST_INVALID', `At most ${WEBHOOK_ENDPOINTS_MAX} webhook endpoints; delete one first.`);
      // Standard Webhooks' secret form: whsec_ and the base64 of the key bytes.
      const secret = `whsec_${randomToken('', WEBHOOK_SECRET_BYTES).replaceAll('-', '+').replaceAll('_', '/')}`;
      const endpoint = await store.insert({
        id: randomToken('whk_', 12),
        url,
        events: types,
        secretSealed: sealer.seal(secret),
        createdAt: now(),
      });
      await fanOut.reload();
      await events.record({ type: 'webhook.created', actor, detail: { webhookId: endpoint.id, events: types.join(',') } });
      return { ...endpoint, secret };
    },

    list: () => store.list(),
    page: (query) => keysetPage(query, PAGE_SIZE_MAX, (after, limit) => store.page(after, limit)),

    async delete(id: string, actor: string): Promise<void> {
      if (!(await store.delete(id))) throw notFound(id);
      await fanOut.reload();
      await events.record({ type: 'webhook.deleted', actor, detail: { webhookId: id } });
    },

    enable: (id: string, actor: string) => setDisabled(id, false, actor),
    disable: (id: string, actor: string) => setDisabled(id, true, actor),

    async deliveries(id: string): Promise<OutboxDelivery[]> {
      if (!(await store.list()).some((endpoint) => endpoint.id === id)) throw notFound(id);
      return outbox.listForEndpoint(id, WEBHOOK_DELIVERIES_LISTED);
    },

    async retry(deliveryId: string, actor: string): Promise<void> {
      const endpointId = await outbox.retryNow(deliveryId, now());
      if (endpointId === undefined)
        throw new ServiceError('ERR_REQUEST_INVALID', 'No such delivery waiting: it was delivered, is being sent right now, or was swept.');
      await events.record({ type: 'webhook.delivery_retried', actor, detail: { webhookId: endpointId, deliveryId } });
    },
  };
}
