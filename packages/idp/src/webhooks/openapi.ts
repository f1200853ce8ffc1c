import { EVENT_TYPES } from '../events/types.js';
import { WebhookMessageSchema } from './fan-out.js';

type Json = Record<string, any>;

const header = (name: string, description: string, schema: Json = { type: 'string' }) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema,
});

/**
 * The OpenAPI document's `webhooks` (OpenAPI 3.1): one entry per event type, the POST the delivery loop sends to a
 * subscribed endpoint (webhooks/worker.ts), signed as Standard Webhooks sign it.
 */
export function webhookDocument(): { webhooks: Json; schemas: Json } {
  const webhooks = Object.fromEntries(
    EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          operationId: `${type.replace(/[._]([a-z])/g, (_m, c: string) => c.toUpperCase())}Webhook`,
          summary: `The ${type} event`,
          description: 'Sent to each endpoint subscribed to this type (or to `all`); retried with back-off until a 2xx.',
          security: [],
          parameters: [
            header('webhook-id', 'the delivery id: the same on every retry (deduplicate on it)'),
            header('webhook-timestamp', 'Unix epoch seconds of this attempt', { type: 'string', pattern: '^[0-9]+$' }),
            header('webhook-signature', "`v1,<base64 HMAC-SHA256>` of `<id>.<timestamp>.<body>` with the endpoint's secret"),
          ],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  allOf: [
                    { $ref: '#/components/schemas/WebhookMessage' },
                    {
                      type: 'object',
                      properties: { type: { const: type }, data: { type: 'object', properties: { type: { const: type } } } },
                    },
                  ],
                },
              },
            },
          },
          responses: {
            '200': { description: 'Received (any 2xx). Any other status, or none in time, is a failure and the delivery is retried.' },
          },
        },
      },
    ]),
  );
  return { webhooks, schemas: { WebhookMessage: WebhookMessageSchema } };
}
