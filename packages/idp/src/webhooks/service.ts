import { BlockList, isIP } from 'node:net';
import type { Sealer } from '../crypto/seal.js';
import { randomToken } from '../crypto/secrets.js';
import { WEBHOOK_ENDPOINTS_MAX, WEBHOOK_SECRET_BYTES, WEBHOOK_URL_MAX_LENGTH } from '../defaults.js';
import { ServiceError } from '../errors.js';
import type { EventLog } from '../events/service.js';
import { EVENT_TYPES, isEventType } from '../events/types.js';
import { ALL_EVENTS, type WebhookFanOut } from './fan-out.js';
import type { WebhookEndpoint, WebhookEndpointStore } from './store.js';

/**
 * Addresses a production endpoint may not name literally: loopback, private, link-local (cloud
 * metadata at 169.254.169.254), unspecified and the like, so a leaked admin key cannot point
 * deliveries at the service's own network by address. Names are not resolved here (docs/security.md).
 */
const INTERNAL = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
] as const)
  INTERNAL.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['::ffff:0:0', 96],
] as const)
  INTERNAL.addSubnet(network, prefix, 'ipv6');

/** The URL as it will be stored, or ERR_REQUEST_INVALID saying what is wrong with it. */
export function checkWebhookUrl(raw: string, production: boolean): string {
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
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const family = isIP(host);
  if (
    production &&
    (host === 'localhost' || host.endsWith('.localhost') || (family !== 0 && INTERNAL.check(host, family === 4 ? 'ipv4' : 'ipv6')))
  )
    throw invalid('must not name a loopback, private or link-local address in production');
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

/**
 * Operators' webhook endpoints, shared by the CLI and the admin API. The signing secret is
 * drawn here, returned once by `create`, and stored only sealed (it must stay usable for the HMAC).
 */
export function createWebhooks({
  store,
  fanOut,
  sealer,
  events,
  production,
  now,
}: {
  store: WebhookEndpointStore;
  fanOut: WebhookFanOut;
  sealer: Sealer;
  events: EventLog;
  production: boolean;
  now: () => number;
}) {
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
      const url = checkWebhookUrl(input.url, production);
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

    async delete(id: string, actor: string): Promise<void> {
      if (!(await store.delete(id))) throw notFound(id);
      await fanOut.reload();
      await events.record({ type: 'webhook.deleted', actor, detail: { webhookId: id } });
    },

    /** Resumes deliveries, pending ones included; the failure streak starts again from zero. */
    enable: (id: string, actor: string) => setDisabled(id, false, actor),
    disable: (id: string, actor: string) => setDisabled(id, true, actor),
  };
}

export type Webhooks = ReturnType<typeof createWebhooks>;
