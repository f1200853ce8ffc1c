import {
  type AdminConnection,
  type AdminConnectionList,
  type AdminLinkedIdentityList,
  CONNECTION_PRESETS,
  type ConnectionPreset,
} from 'service-protocol';
import { Type } from 'typebox';
import type { Connections } from '../connections/service.js';
import type { UpstreamService } from '../factors/upstream/service.js';
import type { AdminRoutes } from '../http/admin-routes.js';
import { BODY_ERRORS, errorResponses, SERVER_ERRORS, wireBody } from '../http/schemas.js';
import { LinkedIdentity, Nullable, Time } from './schemas.js';

const Id = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$' });
const Params = Type.Object({ id: Id });
const errors = errorResponses(400, 401, 403, 404, ...SERVER_ERRORS);
const bodyErrors = errorResponses(...BODY_ERRORS, 401, 403, 404, ...SERVER_ERRORS);
const Preset = Type.Unsafe<ConnectionPreset>({ type: 'string', enum: [...CONNECTION_PRESETS] });

const ConnectionSchema = wireBody<AdminConnection>()(
  Type.Object({
    id: Type.String(),
    name: Type.String(),
    preset: Preset,
    issuer: Type.String(),
    clientId: Type.String(),
    hasSecret: Type.Boolean({ description: 'a client secret (Apple: its private key) is stored, sealed; never shown' }),
    scopes: Type.Array(Type.String()),
    clients: Type.Array(Type.String(), { description: 'the applications (client ids) that show this connection' }),
    keepTokens: Type.Boolean({ description: "the provider's tokens are kept, sealed, with each linked identity" }),
    appleTeamId: Nullable(Type.String()),
    appleKeyId: Nullable(Type.String()),
    createdAt: Time,
    updatedAt: Time,
  }),
);
const ConnectionList = wireBody<AdminConnectionList>()(Type.Object({ connections: Type.Array(ConnectionSchema) }));
const IdentityList = wireBody<AdminLinkedIdentityList>()(Type.Object({ identities: Type.Array(LinkedIdentity) }));

const Changeable = {
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  clientId: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
  clientSecret: Type.Optional(Type.String({ minLength: 1, maxLength: 10_000, description: 'write-only; Apple: the PEM private key' })),
  scopes: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 20 })),
  clients: Type.Optional(Type.Array(Id, { maxItems: 1000 })),
  keepTokens: Type.Optional(Type.Boolean()),
  appleTeamId: Type.Optional(Type.String({ minLength: 1, maxLength: 20 })),
  appleKeyId: Type.Optional(Type.String({ minLength: 1, maxLength: 20 })),
};

/**
 * /admin/v1/connections and a user's linked identities: what `service-idp connections` does,
 * registered inside the admin routes (their admin-key hook applies). The services check the
 * input, so the CLI and the API refuse the same input with the same message.
 */
export const connectionAdminRoutes =
  ({ connections, upstream }: { connections: Connections; upstream: UpstreamService }): AdminRoutes =>
  async (app) => {
    app.get('/connections', { schema: { response: { 200: ConnectionList, ...errors } } }, async () => ({
      connections: await connections.list(),
    }));
    app.post(
      '/connections',
      {
        schema: {
          body: Type.Object(
            {
              preset: Preset,
              issuer: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
              ...Changeable,
              clientId: Type.String({ minLength: 1, maxLength: 300 }),
            },
            { additionalProperties: false },
          ),
          response: { 201: ConnectionSchema, ...bodyErrors },
        },
      },
      async (request, reply) => reply.code(201).send(await connections.create(request.body, request.adminActor)),
    );
    app.patch(
      '/connections/:id',
      {
        schema: {
          params: Params,
          body: Type.Object(Changeable, { additionalProperties: false }),
          response: { 200: ConnectionSchema, ...bodyErrors },
        },
      },
      async (request) => connections.update(request.params.id, request.body, request.adminActor),
    );
    app.delete('/connections/:id', { schema: { params: Params, response: { 204: Type.Null(), ...errors } } }, async (request, reply) => {
      await connections.delete(request.params.id, request.adminActor);
      return reply.code(204).send(null);
    });

    app.get('/users/:id/identities', { schema: { params: Params, response: { 200: IdentityList, ...errors } } }, async (request) => ({
      identities: await upstream.list(request.params.id),
    }));
    app.post(
      '/users/:id/identities/unlink',
      {
        schema: {
          params: Params,
          body: Type.Object({ connectionId: Id, subject: Type.String({ minLength: 1, maxLength: 500 }) }, { additionalProperties: false }),
          response: { 204: Type.Null(), ...bodyErrors },
        },
      },
      async (request, reply) => {
        await upstream.unlink(request.params.id, request.body.connectionId, request.body.subject, request.adminActor);
        return reply.code(204).send(null);
      },
    );
  };
