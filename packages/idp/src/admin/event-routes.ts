import { Type } from 'typebox';
import type { EventLog } from '../events/service.js';
import type { AdminRoutes } from '../http/admin-routes.js';
import { EpochMs, EventPage, errors, Id, Page, pageSize } from './schemas.js';

/** /admin/v1/events: the event log, newest first, what `service-idp events` prints. */
export const eventAdminRoutes =
  ({ events }: { events: EventLog }): AdminRoutes =>
  async (app) => {
    app.get(
      '/events',
      {
        schema: {
          querystring: Type.Object(
            {
              user: Type.Optional(Id),
              type: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
              since: Type.Optional(EpochMs('Unix epoch milliseconds')),
              ...Page,
            },
            { additionalProperties: false },
          ),
          response: { 200: EventPage, ...errors },
        },
      },
      async (request) =>
        events.list({
          ...(request.query.user ? { userId: request.query.user } : {}),
          ...(request.query.type ? { type: request.query.type } : {}),
          ...(request.query.since !== undefined ? { since: request.query.since } : {}),
          ...(request.query.cursor ? { cursor: request.query.cursor } : {}),
          limit: pageSize(request.query.limit),
        }),
    );
  };
