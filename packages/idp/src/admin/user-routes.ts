import { Type } from 'typebox';
import type { AdminRoutes } from '../http/admin-routes.js';
import type { UserService } from '../users/service.js';
import {
  DeviceList,
  EpochMs,
  errors,
  Id,
  MfaReset,
  Page,
  pageSize,
  RecoveryCodes,
  User,
  UserDetail,
  UserExport,
  UserPage,
  UserParams,
} from './schemas.js';

/** /admin/v1/users and /admin/v1/devices: what `service-idp users` and `service-idp devices` do, over HTTP. */
export const userAdminRoutes =
  ({ users }: { users: UserService }): AdminRoutes =>
  async (app) => {
    app.get(
      '/users',
      {
        schema: {
          querystring: Type.Object(
            {
              email: Type.Optional(Type.String({ minLength: 1, maxLength: 320 })),
              externalId: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'this external id, exactly' })),
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
          ...(request.query.externalId !== undefined ? { externalId: request.query.externalId } : {}),
          ...(request.query.createdSince !== undefined ? { createdSince: request.query.createdSince } : {}),
          ...(request.query.createdBefore !== undefined ? { createdBefore: request.query.createdBefore } : {}),
          ...(request.query.cursor ? { cursor: request.query.cursor } : {}),
          limit: pageSize(request.query.limit),
        }),
    );

    app.get('/users/:id', { schema: { params: UserParams, response: { 200: UserDetail, ...errors } } }, async (request) =>
      users.show(request.params.id),
    );

    // The id a provisioning system (SCIM) knows the user by: null clears it.
    app.patch(
      '/users/:id',
      {
        schema: {
          params: UserParams,
          body: Type.Object(
            { externalId: Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()]) },
            { additionalProperties: false },
          ),
          response: { 200: User, ...errors },
        },
      },
      async (request) => users.setExternalId(request.params.id, request.body.externalId, request.adminActor),
    );

    for (const change of ['disable', 'enable'] as const)
      app.post(`/users/:id/${change}`, { schema: { params: UserParams, response: { 200: User, ...errors } } }, async (request) =>
        users[change](request.params.id, request.adminActor),
      );

    // Operator recovery: a new set for a user with MFA, shown in this answer only (the old set stops working).
    app.post(
      '/users/:id/recovery-codes',
      { schema: { params: UserParams, response: { 200: RecoveryCodes, ...errors } } },
      async (request) => ({ recoveryCodes: await users.regenerateRecoveryCodes(request.params.id, request.adminActor) }),
    );

    // Operator recovery for a user who lost their second factor: removes it and the recovery codes, mails the user.
    app.post('/users/:id/mfa/reset', { schema: { params: UserParams, response: { 200: MfaReset, ...errors } } }, async (request) => ({
      method: await users.resetMfa(request.params.id, request.adminActor),
    }));

    app.delete('/users/:id', { schema: { params: UserParams, response: { 204: Type.Null(), ...errors } } }, async (request, reply) => {
      await users.delete(request.params.id, request.adminActor);
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
        await users.revokeDevice(request.params.id, request.adminActor);
        return reply.code(204).send(null);
      },
    );
  };
