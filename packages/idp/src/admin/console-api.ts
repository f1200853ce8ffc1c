import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AdminDashboard, AdminNewKey, AdminOperator, AdminOperatorList, AdminSigningKeyList } from 'service-protocol';
import { Type } from 'typebox';
import { DASHBOARD_BUCKETS, DASHBOARD_HOURS_DEFAULT, DASHBOARD_HOURS_MAX } from '../defaults.js';
import type { EventLog } from '../events/service.js';
import { wireBody } from '../http/schemas.js';
import type { Keyring } from '../keys/keyring.js';
import type { AdminKeys } from './keys.js';
import type { Operators } from './operators.js';
import { AdminKey, bodyErrors, errors, Nullable, Page, pageOf, Time } from './schemas.js';

const Id = Type.String({ minLength: 1, maxLength: 320, pattern: '^[^\\x00-\\x1f\\x7f]+$' });
const Role = Type.Union([Type.Literal('viewer'), Type.Literal('admin')]);

const Operator = wireBody<AdminOperator>()(
  Type.Object({ id: Type.String(), email: Type.String(), role: Role, createdAt: Time, addedBy: Type.String() }),
);
const OperatorList = wireBody<AdminOperatorList>()(Type.Object({ operators: Type.Array(Operator), nextCursor: Nullable(Type.String()) }));
const NewKey = wireBody<AdminNewKey>()(
  Type.Object({ ...AdminKey.properties, key: Type.String({ description: 'admin_…: shown once, never again' }) }),
);
const SigningKeys = wireBody<AdminSigningKeyList>()(
  Type.Object({
    signingKeys: Type.Array(Type.Object({ kid: Type.String(), alg: Type.String(), createdAt: Time, retiredAt: Nullable(Time) })),
  }),
);
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
 * What the operator console needs beyond the first admin API (issue 24): operators, admin
 * keys made and revoked over HTTP, the signing keys, and the dashboard's counts. Registered
 * inside the admin routes (their credential hook applies: an admin key or a console session).
 */
export const consoleApiRoutes = (deps: {
  operators: Operators;
  adminKeys: AdminKeys;
  keyring: Keyring;
  events: EventLog;
  webhookBacklog: () => Promise<{ pending: number; oldestCreatedAt: number | null }>;
  now: () => number;
}): FastifyPluginAsyncTypebox => {
  const { operators, adminKeys, keyring, events, webhookBacklog, now } = deps;
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

    app.post(
      '/admin-keys',
      {
        schema: {
          body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }),
          response: { 201: NewKey, ...bodyErrors },
        },
      },
      async (request, reply) => reply.code(201).send(await adminKeys.create(request.body.name, request.adminActor)),
    );

    app.post(
      '/admin-keys/:id/revoke',
      {
        schema: {
          params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$' }) }),
          response: { 204: Type.Null(), ...errors },
        },
      },
      async (request, reply) => {
        await adminKeys.revoke(request.params.id, request.adminActor);
        return reply.code(204).send(null);
      },
    );

    app.get('/signing-keys', { schema: { response: { 200: SigningKeys, ...errors } } }, async () => ({
      signingKeys: await keyring.list(),
    }));

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
