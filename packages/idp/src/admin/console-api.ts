import type { AdminDashboard, AdminOperator, AdminOperatorList } from 'service-protocol';
import { Type } from 'typebox';
import { DASHBOARD_BUCKETS, DASHBOARD_HOURS_DEFAULT, DASHBOARD_HOURS_MAX } from '../defaults.js';
import type { EventLog } from '../events/service.js';
import type { AdminRoutes } from '../http/admin-routes.js';
import { wireBody } from '../http/schemas.js';
import type { Operators } from './operators.js';
import { bodyErrors, errors, Nullable, Page, pageOf, Time } from './schemas.js';

const Id = Type.String({ minLength: 1, maxLength: 320, pattern: '^[^\\x00-\\x1f\\x7f]+$' });
const Role = Type.Union([Type.Literal('viewer'), Type.Literal('admin')]);

const Operator = wireBody<AdminOperator>()(
  Type.Object({ id: Type.String(), email: Type.String(), role: Role, createdAt: Time, addedBy: Type.String() }),
);
const OperatorList = wireBody<AdminOperatorList>()(Type.Object({ operators: Type.Array(Operator), nextCursor: Nullable(Type.String()) }));
const Counts = Type.Array(Type.Integer());
const Dashboard = wireBody<AdminDashboard>()(
  Type.Object({
    bucketMs: Type.Integer(),
    since: Time,
    series: Type.Object({
      signIns: Counts,
      signInFailures: Counts,
      newDevices: Counts,
      otpSends: Counts,
      otpRefusals: Counts,
    }),
    webhooks: Type.Object({ pending: Type.Integer(), oldestPendingAt: Nullable(Time) }),
  }),
);

/**
 * /admin/v1/operators and /admin/v1/dashboard: who may use the operator console, and its
 * dashboard's counts (the keys' routes are admin/key-routes.ts).
 */
export const consoleAdminRoutes = (deps: {
  operators: Operators;
  events: EventLog;
  webhookBacklog: () => Promise<{ pending: number; oldestCreatedAt: number | null }>;
  now: () => number;
}): AdminRoutes => {
  const { operators, events, webhookBacklog, now } = deps;
  return async (app) => {
    app.get(
      '/operators',
      { schema: { querystring: Type.Object(Page, { additionalProperties: false }), response: { 200: OperatorList, ...errors } } },
      async (request) => {
        const { items, nextCursor } = await operators.page(pageOf(request.query));
        return { operators: items, nextCursor };
      },
    );

    app.post(
      '/operators',
      {
        schema: {
          body: Type.Object(
            { email: Type.String({ minLength: 1, maxLength: 320 }), role: Type.Optional(Role) },
            { additionalProperties: false },
          ),
          response: { 201: Operator, ...bodyErrors },
        },
      },
      async (request, reply) =>
        reply.code(201).send(await operators.add({ email: request.body.email, role: request.body.role ?? 'viewer' }, request.adminActor)),
    );

    app.delete(
      '/operators/:id',
      { schema: { params: Type.Object({ id: Id }), response: { 204: Type.Null(), ...errors } } },
      async (request, reply) => {
        await operators.remove(request.params.id, request.adminActor);
        return reply.code(204).send(null);
      },
    );

    app.get(
      '/dashboard',
      {
        schema: {
          querystring: Type.Object(
            {
              hours: Type.Optional(
                Type.Integer({ minimum: 1, maximum: DASHBOARD_HOURS_MAX, description: `the window (default ${DASHBOARD_HOURS_DEFAULT})` }),
              ),
            },
            { additionalProperties: false },
          ),
          response: { 200: Dashboard, ...errors },
        },
      },
      async (request) => {
        const bucketMs = ((request.query.hours ?? DASHBOARD_HOURS_DEFAULT) * 3_600_000) / DASHBOARD_BUCKETS;
        const since = Math.floor(now() / bucketMs) * bucketMs - (DASHBOARD_BUCKETS - 1) * bucketMs;
        const series = async (types: string[], detailLike?: string) => {
          const counts = new Array<number>(DASHBOARD_BUCKETS).fill(0);
          for (const [bucket, n] of await events.countByBucket(types, since, bucketMs, detailLike))
            if (bucket >= 0 && bucket < DASHBOARD_BUCKETS) counts[bucket] = n;
          return counts;
        };
        const [signIns, signInFailures, newDevices, otpSends, otpRefusals, backlog] = await Promise.all([
          series(['sign_in.succeeded']),
          series(['sign_in.failed']),
          series(['device.registered', 'passkey.registered']),
          series(['otp.sent']),
          // A code send refused by a send limit is a sign-in step refused with ERR_RATE_LIMITED (events/sign-in-refusals.ts).
          series(['sign_in.failed'], '"ERR_RATE_LIMITED"'),
          webhookBacklog(),
        ]);
        return {
          bucketMs,
          since,
          series: { signIns, signInFailures, newDevices, otpSends, otpRefusals },
          webhooks: { pending: backlog.pending, oldestPendingAt: backlog.oldestCreatedAt },
        };
      },
    );
  };
};
