import { type Command, UsageError } from './command.js';
import { cursor, table, time } from './format.js';
import type { Data } from './open.js';

/** The webhook endpoint service (webhooks/service.ts), wired as context.ts wires it. */
async function webhookService(data: Data) {
  const [{ createWebhooks }, { createSealer }, { eventLog }] = await Promise.all([
    import('../webhooks/service.js'),
    import('../crypto/seal.js'),
    import('./open.js'),
  ]);
  const { endpoints, outbox, fanOut, events } = await eventLog(data);
  return createWebhooks({
    store: endpoints,
    outbox,
    fanOut,
    sealer: createSealer(data.serverSecret, 'webhook-secret'),
    events,
    production: data.config.production,
    allowInternal: data.config.webhookAllowInternal,
    now: data.now,
  });
}

const create: Command = {
  name: 'webhooks create',
  usage: `  service-idp webhooks create --url URL --events TYPE,TYPE|all [--json]
      Send events to URL as Standard Webhooks (signed POSTs, retried with back-off for a day).
      Prints the endpoint id and its signing secret (whsec_…) once; it cannot be shown again.
`,
  flags: ['url', 'events', 'json'],
  async run({ values, config }, io) {
    const { url, events } = values;
    if (!url || !events) throw new UsageError('usage: service-idp webhooks create --url URL --events TYPE,TYPE|all');
    const { withData } = await import('./open.js');
    const made = await withData(config, async (data) => (await webhookService(data)).create({ url, events: events.split(',') }, 'cli'));
    if (values.json) io.out(`${JSON.stringify(made)}\n`);
    else
      io.out(
        `Webhook ${made.id} created for ${made.events.join(', ')}. The signing secret is shown once; store it now.\n  secret: ${made.secret}\nVerify each delivery with it (Standard Webhooks; docs/operations.md).\n`,
      );
    return 0;
  },
};

const list: Command = {
  name: 'webhooks list',
  usage: `  service-idp webhooks list [--limit 50] [--cursor CURSOR] [--json]
      Endpoints with their event types and delivery health (failures, last error, disabled),
      oldest first; a full page ends with the --cursor of the next one.
`,
  flags: ['limit', 'cursor', 'json'],
  paged: true,
  async run({ values, limit, config }, io) {
    const { withData } = await import('./open.js');
    const page = await withData(config, async (data) => (await webhookService(data)).page({ ...cursor(values.cursor), limit }));
    const endpoints = page.items;
    if (values.json)
      io.out(`${JSON.stringify({ webhooks: endpoints, nextCursor: page.nextCursor })}\n`); // GET /admin/v1/webhooks's shape
    else if (endpoints.length === 0) io.out('No webhooks yet: service-idp webhooks create --url URL --events all\n');
    else
      io.out(
        `${table(
          ['WEBHOOK ID', 'URL', 'EVENTS', 'STATUS', 'FAILURES', 'LAST ERROR', 'LAST DELIVERED'],
          endpoints.map((w) => [
            w.id,
            w.url,
            w.events.join(','),
            w.disabledAt === null ? 'enabled' : `disabled (${w.disabledReason}) ${time(w.disabledAt)}`,
            String(w.failureCount),
            w.lastError === null ? '-' : `${w.lastError} at ${time(w.lastErrorAt)}`,
            time(w.lastDeliveredAt),
          ]),
        )}\n${page.nextCursor ? `More: --cursor ${page.nextCursor}\n` : ''}`,
      );
    return 0;
  },
};

/** delete, disable, enable: the endpoint ID is checked before the database is opened. */
function onEndpoint(
  name: string,
  usage: string,
  act: (webhooks: Awaited<ReturnType<typeof webhookService>>, id: string) => Promise<string>,
) {
  return {
    name,
    usage,
    flags: [],
    async run({ operands: [id], config }, io) {
      if (!id) throw new UsageError(`usage: service-idp ${name} ID`);
      const { withData } = await import('./open.js');
      io.out(await withData(config, async (data) => act(await webhookService(data), id)));
      return 0;
    },
  } satisfies Command;
}

const remove = onEndpoint(
  'webhooks delete',
  `  service-idp webhooks delete ID
      Stop sending to the endpoint and drop its pending deliveries.
`,
  async (webhooks, id) => {
    await webhooks.delete(id, 'cli');
    return `Webhook ${id} deleted with its pending deliveries.\n`;
  },
);

const enabled = (w: { id: string; disabledAt: number | null }) => `Webhook ${w.id} ${w.disabledAt === null ? 'enabled' : 'disabled'}.\n`;

const disable = onEndpoint('webhooks disable', '  service-idp webhooks disable ID\n', async (webhooks, id) =>
  enabled(await webhooks.disable(id, 'cli')),
);

const enable = onEndpoint(
  'webhooks enable',
  `  service-idp webhooks enable ID
      Pause, or resume (also after the service disabled a failing endpoint); pending
      deliveries still within their retry day are sent.
`,
  async (webhooks, id) => enabled(await webhooks.enable(id, 'cli')),
);

export const webhooks: Command[] = [create, list, remove, disable, enable];
