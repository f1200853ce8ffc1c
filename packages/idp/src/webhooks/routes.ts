import type { AdminNewWebhook, AdminWebhookDeliveryList, AdminWebhookEndpoint, AdminWebhookList } from 'service-protocol';
import { Type } from 'typebox';
import { PAGE_SIZE_DEFAULT, WEBHOOK_URL_MAX_LENGTH } from '../defaults.js';
import { EVENT_TYPES } from '../events/types.js';
import type { AdminRoutes } from '../http/admin-routes.js';
import { BODY_ERRORS, errorResponses, PageParams, SERVER_ERRORS, wireBody } from '../http/schemas.js';
import { ALL_EVENTS } from './fan-out.js';
import type { Webhooks } from './service.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);
const Time = Type.Integer({ description: 'Unix epoch milliseconds' });
const errors = errorResponses(400, 401, 403, 404, ...SERVER_ERRORS);
const bodyErrors = errorResponses(...BODY_ERRORS, 401, 403, 404, ...SERVER_ERRORS);
const Params = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$' }) });

/** An endpoint as `service-idp webhooks list --json` prints it: never its secret. */
export const WebhookEndpointSchema = wireBody<AdminWebhookEndpoint>()(
  Type.Object({
    id: Type.String(),
    url: Type.String(),
    events: Type.Array(Type.String(), { description: `"${ALL_EVENTS}", or event types` }),
    createdAt: Time,
    disabledAt: Nullable(Time),
    disabledReason: Nullable(Type.String({ description: '"operator", or "failing" when the service disabled it' })),
    failureCount: Type.Integer({ description: 'failed attempts since the last 2xx' }),
    failingSince: Nullable(Time),
    lastError: Nullable(Type.String()),
    lastErrorAt: Nullable(Time),
    lastDeliveredAt: Nullable(Time),
  }),
);
const WebhookList = wireBody<AdminWebhookList>()(
  Type.Object({ webhooks: Type.Array(WebhookEndpointSchema), nextCursor: Nullable(Type.String()) }),
);
const NewWebhook = wireBody<AdminNewWebhook>()(
  Type.Object({
    ...WebhookEndpointSchema.properties,
    secret: Type.String({ description: 'whsec_…: shown once, never again' }),
  }),
);

const DeliveryList = wireBody<AdminWebhookDeliveryList>()(
  Type.Object({
    deliveries: Type.Array(
      Type.Object({
        id: Type.String({ description: 'the webhook-id header, the same on every attempt' }),
        eventId: Type.String(),
        eventType: Nullable(Type.String()),
        createdAt: Time,
        attempts: Type.Integer(),
        state: Type.Union([Type.Literal('pending'), Type.Literal('retrying'), Type.Literal('delivered'), Type.Literal('failed')]),
        lastError: Nullable(Type.String()),
        nextAttemptAt: Nullable(Time),
      }),
    ),
  }),
);

/**
 * /admin/v1/webhooks: what `service-idp webhooks` does, registered inside the admin routes
 * (their admin-key hook applies). The body's URL and event types are checked by the service,
 * so the CLI and the API refuse the same input with the same message.
 */
export const webhookAdminRoutes =
  ({ webhooks }: { webhooks: Webhooks }): AdminRoutes =>
  async (app) => {
    app.get(
      '/webhooks',
      { schema: { querystring: Type.Object(PageParams, { additionalProperties: false }), response: { 200: WebhookList, ...errors } } },
      async (request) => {
        const { items, nextCursor } = await webhooks.page({
          limit: request.query.limit ?? PAGE_SIZE_DEFAULT,
          ...(request.query.cursor ? { cursor: request.query.cursor } : {}),
        });
        return { webhooks: items, nextCursor };
      },
    );

    app.post(
      '/webhooks',
      {
        schema: {
          body: Type.Object(
            {
              url: Type.String({ minLength: 1, maxLength: WEBHOOK_URL_MAX_LENGTH }),
              events: Type.Array(Type.String({ minLength: 1, maxLength: 50 }), {
                minItems: 1,
                maxItems: EVENT_TYPES.length,
                description: `event types, or ["${ALL_EVENTS}"]`,
              }),
            },
            { additionalProperties: false },
          ),
          response: {
            201: NewWebhook,
            ...bodyErrors,
          },
        },
      },
      async (request, reply) => reply.code(201).send(await webhooks.create(request.body, request.adminActor)),
    );

    app.delete('/webhooks/:id', { schema: { params: Params, response: { 204: Type.Null(), ...errors } } }, async (request, reply) => {
      await webhooks.delete(request.params.id, request.adminActor);
      return reply.code(204).send(null);
    });

    for (const change of ['enable', 'disable'] as const)
      app.post(
        `/webhooks/:id/${change}`,
        { schema: { params: Params, response: { 200: WebhookEndpointSchema, ...errors } } },
        async (request) => webhooks[change](request.params.id, request.adminActor),
      );

    app.get('/webhooks/:id/deliveries', { schema: { params: Params, response: { 200: DeliveryList, ...errors } } }, async (request) => ({
      deliveries: await webhooks.deliveries(request.params.id),
    }));

    app.post(
      '/webhook-deliveries/:id/retry',
      { schema: { params: Params, response: { 204: Type.Null(), ...errors } } },
      async (request, reply) => {
        await webhooks.retry(request.params.id, request.adminActor);
        return reply.code(204).send(null);
      },
    );
  };
