import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { AdminClient, OperatorRole } from 'service-protocol';
import { Type } from 'typebox';
import { brandingAdminRoutes } from '../branding/routes.js';
import type { Branding } from '../branding/service.js';
import type { Connections } from '../connections/service.js';
import { PAGE_SIZE_DEFAULT } from '../defaults.js';
import { ServiceError } from '../errors.js';
import type { EventLog } from '../events/service.js';
import type { UpstreamService } from '../factors/upstream/service.js';
import { notFound } from '../http/error-handler.js';
import { checkQueryText, type PageQuery } from '../storage/pagination.js';
import type { UserService } from '../users/service.js';
import { webhookRoutes } from '../webhooks/routes.js';
import type { Webhooks } from '../webhooks/service.js';
import { connectionRoutes } from './connections-routes.js';
import type { AdminKeyRecord } from './key-store.js';
import type { AdminKeys } from './keys.js';
import type { Operations } from './operations.js';
import {
  AdminKeyList,
  bodyErrors,
  Client,
  ClientList,
  ClientLogoutChange,
  ClientSecret,
  DeviceList,
  EpochMs,
  EventPage,
  errors,
  Id,
  IdTokenAlg,
  MfaReset,
  NewClient,
  Page,
  pageOf,
  RecoveryCodes,
  SigningKeyRotated,
  User,
  UserDetail,
  UserExport,
  UserPage,
  UserParams,
} from './schemas.js';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * Who acts in an admin API request, set by the admin hook and recorded in events: the admin
     * key's id, or `operator:<email>` for the operator console.
     */
    adminActor: string;
  }
}

/**
 * The operator console's session as an alternative to the admin key (console/, filled by the
 * composition): undefined when the request carries no console cookie; otherwise who acts and
 * their role, or a refusal (an ended session, a missing per-session token, another origin).
 */
export type ConsoleCredential = (request: FastifyRequest) => Promise<{ actor: string; role: OperatorRole } | undefined>;

/** The live admin key in `Authorization: Bearer …`, or the one 401 for a missing, malformed, unknown or revoked key. */
export async function adminKeyOf(adminKeys: AdminKeys, authorization: string | undefined): Promise<AdminKeyRecord> {
  const match = /^Bearer ([\x21-\x7e]{1,200})$/.exec(authorization ?? '');
  const key = await adminKeys.authenticate(match?.[1]);
  if (!key) throw new ServiceError('ERR_ADMIN_KEY_INVALID', 'A valid admin key is required.');
  return key;
}

const pageSize = (limit: number | undefined) => limit ?? PAGE_SIZE_DEFAULT;

/**
 * The admin API: what `service-idp users|devices|clients|events` do, over HTTP, for an admin
 * key in `Authorization: Bearer …`. Missing, unknown and revoked keys get one 401; no CORS
 * header is ever sent, so no browser page can read an answer.
 */
export const adminRoutes: FastifyPluginAsyncTypebox<{
  adminKeys: AdminKeys;
  users: UserService;
  events: EventLog;
  operations: Operations;
  clients: {
    page(query: PageQuery): Promise<{ items: AdminClient[]; nextCursor: string | null }>;
    /** An operator's client (undefined for an unknown or built-in one). */
    operated(id: string): Promise<AdminClient | undefined>;
  };
  webhooks: Webhooks;
  /** The console session, when the console is served; admin keys only without it. */
  consoleCredential?: ConsoleCredential;
  /** Routes registered inside these (their credential hook applies): operators, keys, the dashboard. */
  more?: FastifyPluginAsyncTypebox;
  connections: Connections;
  upstream: UpstreamService;
  branding: Branding;
}> = async (app, { adminKeys, users, events, operations, clients, webhooks, consoleCredential, more, connections, upstream, branding }) => {
  app.decorateRequest('adminActor', '');
  // Every admin route is documented as taking the admin key, and the console's session where this listener takes it (http/openapi.ts).
  const security: Record<string, string[]>[] = consoleCredential ? [{ adminKey: [] }, { consoleSession: [] }] : [{ adminKey: [] }];
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, tags: ['admin'], security };
  });
  // The key first, before anything else is looked at: the query, the body, its media type or size.
  app.addHook('onRequest', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    // A machine's admin key whenever one is sent; otherwise the operator console's session, if any.
    const operator = request.headers.authorization === undefined ? await consoleCredential?.(request) : undefined;
    if (operator) {
      // A viewer reads: GET only, whatever the route.
      if (operator.role !== 'admin' && request.method !== 'GET' && request.method !== 'HEAD')
        throw new ServiceError('ERR_FORBIDDEN', 'A viewer cannot make changes; ask an admin operator.');
      request.adminActor = operator.actor;
      return;
    }
    request.adminActor = (await adminKeyOf(adminKeys, request.headers.authorization)).id;
  });
  // An unknown admin path or method also asks for the key first: without one, every path under
  // the prefix answers the same 401, so an anonymous caller cannot tell which routes exist.
  app.setNotFoundHandler(notFound);
  // After the key, before the schemas: one rule for every query parameter and path id of every
  // admin route (webhooks' included), so a control character gets a 400 naming it, not a query.
  app.addHook('preValidation', async (request) => {
    for (const source of [request.query, request.params] as unknown[]) {
      if (typeof source !== 'object' || source === null) continue;
      for (const [name, value] of Object.entries(source))
        for (const text of Array.isArray(value) ? value : [value]) if (typeof text === 'string') checkQueryText(name, text);
    }
  });
  const actor = (request: { adminActor: string }) => request.adminActor;
  await app.register(webhookRoutes, { webhooks });
  await app.register(brandingAdminRoutes, { branding, operations });
  if (more) await app.register(more);
  await app.register(connectionRoutes, { connections, upstream });

  app.get(
    '/users',
    {
      schema: {
        querystring: Type.Object(
          {
            email: Type.Optional(Type.String({ minLength: 1, maxLength: 320 })),
            createdSince: Type.Optional(EpochMs('Created at or after this time (Unix epoch milliseconds)')),
            createdBefore: Type.Optional(EpochMs('Created before this time (Unix epoch milliseconds); later than createdSince')),
            ...Page,
          },
          { additionalProperties: false },
        ),
        response: { 200: UserPage, ...errors },
      },
    },
    async (request) =>
      users.list({
        ...(request.query.email ? { email: request.query.email } : {}),
        ...(request.query.createdSince !== undefined ? { createdSince: request.query.createdSince } : {}),
        ...(request.query.createdBefore !== undefined ? { createdBefore: request.query.createdBefore } : {}),
        ...(request.query.cursor ? { cursor: request.query.cursor } : {}),
        limit: pageSize(request.query.limit),
      }),
  );

  app.get('/users/:id', { schema: { params: UserParams, response: { 200: UserDetail, ...errors } } }, async (request) =>
    users.show(request.params.id),
  );

  for (const change of ['disable', 'enable'] as const)
    app.post(`/users/:id/${change}`, { schema: { params: UserParams, response: { 200: User, ...errors } } }, async (request) =>
      users[change](request.params.id, actor(request)),
    );

  // Operator recovery: a new set for a user with MFA, shown in this answer only (the old set stops working).
  app.post(
    '/users/:id/recovery-codes',
    { schema: { params: UserParams, response: { 200: RecoveryCodes, ...errors } } },
    async (request) => ({ recoveryCodes: await users.regenerateRecoveryCodes(request.params.id, actor(request)) }),
  );

  // Operator recovery for a user who lost their second factor: removes it and the recovery codes, mails the user.
  app.post('/users/:id/mfa/reset', { schema: { params: UserParams, response: { 200: MfaReset, ...errors } } }, async (request) => ({
    method: await users.resetMfa(request.params.id, actor(request)),
  }));

  app.delete('/users/:id', { schema: { params: UserParams, response: { 204: Type.Null(), ...errors } } }, async (request, reply) => {
    await users.delete(request.params.id, actor(request));
    return reply.code(204).send(null);
  });

  app.get(
    '/users/:id/export',
    {
      schema: {
        params: UserParams,
        response: { 200: UserExport, ...errors },
      },
    },
    async (request) => users.export(request.params.id),
  );

  app.get('/users/:id/devices', { schema: { params: UserParams, response: { 200: DeviceList, ...errors } } }, async (request) => ({
    devices: await users.devices(request.params.id),
  }));

  app.post(
    '/devices/:id/revoke',
    { schema: { params: Type.Object({ id: Id }), response: { 204: Type.Null(), ...errors } } },
    async (request, reply) => {
      await users.revokeDevice(request.params.id, actor(request));
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/events',
    {
      schema: {
        querystring: Type.Object(
          {
            user: Type.Optional(Id),
            type: Type.Optional(Type.String({ maxLength: 50 })),
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

  app.get(
    '/clients',
    { schema: { querystring: Type.Object(Page, { additionalProperties: false }), response: { 200: ClientList, ...errors } } },
    async (request) => {
      const { items, nextCursor } = await clients.page(pageOf(request.query));
      return { clients: items, nextCursor };
    },
  );

  app.get('/clients/:id', { schema: { params: Type.Object({ id: Id }), response: { 200: Client, ...errors } } }, async (request) => {
    const client = await clients.operated(request.params.id);
    if (!client) throw new ServiceError('ERR_NOT_FOUND', `No client ${request.params.id}.`);
    return client;
  });

  app.post(
    '/clients',
    {
      schema: {
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 100 }),
            origins: Type.Array(Type.String({ maxLength: 2000 }), { maxItems: 50 }),
            idTokenSignedResponseAlg: Type.Optional(IdTokenAlg),
            redirectUris: Type.Optional(Type.Array(Type.String({ maxLength: 2000 }), { maxItems: 50 })),
            public: Type.Optional(Type.Boolean()),
            postLogoutRedirectUris: Type.Optional(Type.Array(Type.String({ maxLength: 2000 }), { maxItems: 50 })),
            logout: Type.Optional(ClientLogoutChange),
          },
          { additionalProperties: false },
        ),
        response: {
          201: NewClient,
          ...bodyErrors,
        },
      },
    },
    async (request, reply) => reply.code(201).send(await operations.createClient(request.body, actor(request))),
  );

  app.patch(
    '/clients/:id',
    {
      schema: {
        params: Type.Object({ id: Id }),
        body: Type.Object(
          {
            mfaPolicy: Type.Optional(Type.Union([Type.Literal('optional'), Type.Literal('required')])),
            idTokenSignedResponseAlg: Type.Optional(IdTokenAlg),
            /** Replace the list (checked as at registration; origins or redirect URIs must remain). */
            origins: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), { maxItems: 50 })),
            redirectUris: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), { maxItems: 50 })),
            /** Replaces the list; [] removes them all. */
            postLogoutRedirectUris: Type.Optional(Type.Array(Type.String({ maxLength: 2000 }), { maxItems: 50 })),
            passkeySatisfiesMfa: Type.Optional(Type.Boolean()),
            /** RFC 9449 5.2: true, every token request of the client must carry a DPoP proof. */
            dpopBoundAccessTokens: Type.Optional(Type.Boolean()),
            /** OIDC Back-/Front-Channel Logout URIs: a field given replaces the registered one, a URI null removes it. */
            logout: Type.Optional(ClientLogoutChange),
            /** RFC 9126 5: true, /authorize takes the client's requests only pushed. */
            requirePushedAuthorizationRequests: Type.Optional(Type.Boolean()),
          },
          { additionalProperties: false, minProperties: 1 },
        ),
        response: { 204: Type.Null(), ...bodyErrors },
      },
    },
    async (request, reply) => {
      const {
        mfaPolicy,
        idTokenSignedResponseAlg,
        postLogoutRedirectUris,
        passkeySatisfiesMfa,
        dpopBoundAccessTokens,
        requirePushedAuthorizationRequests,
        origins,
        redirectUris,
        logout,
      } = request.body;
      // Addresses first, all checked before any is stored: the only part the schema cannot check,
      // so a refused change (400) changes nothing (the rest can then only fail on an unknown client).
      if (origins || redirectUris || postLogoutRedirectUris || logout)
        await operations.setAddresses(
          request.params.id,
          {
            ...(origins ? { origins } : {}),
            ...(redirectUris ? { redirectUris } : {}),
            ...(postLogoutRedirectUris ? { postLogoutRedirectUris } : {}),
            ...(logout ? { logout } : {}),
          },
          actor(request),
        );
      if (mfaPolicy) await operations.setMfaPolicy(request.params.id, mfaPolicy, actor(request));
      if (idTokenSignedResponseAlg) await operations.setIdTokenAlg(request.params.id, idTokenSignedResponseAlg, actor(request));
      if (passkeySatisfiesMfa !== undefined)
        await operations.setPasskeyMfa(request.params.id, passkeySatisfiesMfa ? 'yes' : 'no', actor(request));
      if (dpopBoundAccessTokens !== undefined)
        await operations.setDpop(request.params.id, dpopBoundAccessTokens ? 'required' : 'optional', actor(request));
      if (requirePushedAuthorizationRequests !== undefined)
        await operations.setPushedRequests(request.params.id, requirePushedAuthorizationRequests ? 'required' : 'optional', actor(request));
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/clients/:id',
    { schema: { params: Type.Object({ id: Id }), response: { 204: Type.Null(), ...errors } } },
    async (request, reply) => {
      await operations.deleteClient(request.params.id, actor(request));
      return reply.code(204).send(null);
    },
  );

  // A confidential client's new secret key, shown in this answer only; the old one stops at once.
  app.post(
    '/clients/:id/secret',
    { schema: { params: Type.Object({ id: Id }), response: { 200: ClientSecret, ...errors } } },
    async (request) => ({ clientId: request.params.id, secretKey: await operations.rotateClientSecret(request.params.id, actor(request)) }),
  );

  app.post('/signing-keys/rotate', { schema: { response: { 200: SigningKeyRotated, ...errors } } }, async (request) => ({
    kid: await operations.rotateSigningKey(actor(request)),
  }));

  app.get(
    '/admin-keys',
    { schema: { querystring: Type.Object(Page, { additionalProperties: false }), response: { 200: AdminKeyList, ...errors } } },
    async (request) => {
      const { items, nextCursor } = await adminKeys.page(pageOf(request.query));
      return { adminKeys: items, nextCursor };
    },
  );
};
