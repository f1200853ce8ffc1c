import type { AdminApi, AdminApiList, AdminClientPermissions, AdminRole, AdminRoleList, AdminUserRoles } from 'service-protocol';
import { Type } from 'typebox';
import {
  API_IDENTIFIER_MAX_LENGTH,
  API_NAME_MAX_LENGTH,
  API_PERMISSION_MAX_LENGTH,
  API_PERMISSIONS_MAX,
  PAGE_SIZE_DEFAULT,
  ROLE_NAME_MAX_LENGTH,
  ROLE_PERMISSIONS_MAX,
} from '../defaults.js';
import { ServiceError } from '../errors.js';
import type { AdminRoutes } from '../http/admin-routes.js';
import { BODY_ERRORS, errorResponses, PageParams, SERVER_ERRORS, wireBody } from '../http/schemas.js';
import { type Apis, ROLE_NAME_PATTERN } from './service.js';

const Time = Type.Integer({ description: 'Unix epoch milliseconds' });
const Id = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$' });
const errors = errorResponses(400, 401, 403, 404, ...SERVER_ERRORS);
const bodyErrors = errorResponses(...BODY_ERRORS, 401, 403, 404, ...SERVER_ERRORS);
const ApiParams = Type.Object({ id: Id });
/** A role by its id (role_…) or its name: both match the role name's pattern. */
const RoleKey = Type.String({
  minLength: 1,
  maxLength: ROLE_NAME_MAX_LENGTH,
  pattern: ROLE_NAME_PATTERN,
  description: 'the role id (role_…) or name',
});
const RoleParams = Type.Object({ role: RoleKey });
const UserParams = Type.Object({ id: Id });
const UserRoleParams = Type.Object({ id: Id, role: RoleKey });

const Identifier = Type.String({
  minLength: 1,
  maxLength: API_IDENTIFIER_MAX_LENGTH,
  description: 'an absolute https URI or a urn: the audience of its access tokens (RFC 8707 resource)',
});
const Permission = Type.String({ minLength: 1, maxLength: API_PERMISSION_MAX_LENGTH, description: 'a scope token such as read:notes' });
const Permissions = Type.Array(Permission, { maxItems: API_PERMISSIONS_MAX });
const Name = Type.String({ minLength: 1, maxLength: API_NAME_MAX_LENGTH });
const ResourceServerClientId = Type.Union([Id, Type.Null()], {
  description:
    'a confidential or machine client (cli_…) the API’s resource server authenticates as at the introspection endpoint (RFC 7662 4); null: none',
});
const RoleName = Type.String({ minLength: 1, maxLength: ROLE_NAME_MAX_LENGTH, pattern: ROLE_NAME_PATTERN });
const Grant = Type.Object(
  { api: Identifier, permission: Permission },
  { additionalProperties: false, description: 'one permission of one API' },
);
const Grants = Type.Array(Grant, { maxItems: ROLE_PERMISSIONS_MAX });

/** An API as `service-idp apis list --json` prints it. */
export const ApiSchema = wireBody<AdminApi>()(
  Type.Object({
    id: Type.String(),
    identifier: Type.String(),
    name: Type.String(),
    permissions: Type.Array(Type.String(), { description: 'sorted' }),
    resourceServerClientId: Type.Union([Type.String(), Type.Null()], {
      description: 'the client that may introspect this API’s tokens besides the one each was issued to; null: none',
    }),
    rolesInToken: Type.Boolean({ description: 'its access tokens also name the user’s roles that grant any of its permissions (roles)' }),
    createdAt: Time,
    updatedAt: Time,
  }),
);
const ApiList = wireBody<AdminApiList>()(
  Type.Object({ apis: Type.Array(ApiSchema), nextCursor: Type.Union([Type.String(), Type.Null()]) }),
);

/** A role as `service-idp roles list --json` prints it. */
export const RoleSchema = wireBody<AdminRole>()(
  Type.Object({
    id: Type.String(),
    name: Type.String(),
    permissions: Type.Array(Type.Object({ api: Type.String(), permission: Type.String() }), {
      description: 'sorted by API identifier, then permission',
    }),
    createdAt: Time,
    updatedAt: Time,
  }),
);
const RoleList = wireBody<AdminRoleList>()(
  Type.Object({ roles: Type.Array(RoleSchema), nextCursor: Type.Union([Type.String(), Type.Null()]) }),
);
const UserRoles = wireBody<AdminUserRoles>()(Type.Object({ roles: Type.Array(RoleSchema) }));

const page = (query: { limit?: number; cursor?: string }) => ({
  limit: query.limit ?? PAGE_SIZE_DEFAULT,
  ...(query.cursor ? { cursor: query.cursor } : {}),
});

/** /admin/v1/apis: `service-idp apis`. */
const apiRoutes =
  (apis: Apis): AdminRoutes =>
  async (app) => {
    app.get(
      '/apis',
      { schema: { querystring: Type.Object(PageParams, { additionalProperties: false }), response: { 200: ApiList, ...errors } } },
      async (request) => {
        const { items, nextCursor } = await apis.pageApis(page(request.query));
        return { apis: items, nextCursor };
      },
    );
    app.post(
      '/apis',
      {
        schema: {
          body: Type.Object(
            {
              identifier: Identifier,
              name: Name,
              permissions: Type.Optional(Permissions),
              resourceServerClientId: Type.Optional(ResourceServerClientId),
              rolesInToken: Type.Optional(Type.Boolean()),
            },
            { additionalProperties: false },
          ),
          response: { 201: ApiSchema, ...bodyErrors },
        },
      },
      async (request, reply) => reply.code(201).send(await apis.createApi(request.body, request.adminActor)),
    );
    app.get('/apis/:id', { schema: { params: ApiParams, response: { 200: ApiSchema, ...errors } } }, async (request) =>
      apis.getApi(request.params.id),
    );
    app.patch(
      '/apis/:id',
      {
        schema: {
          params: ApiParams,
          body: Type.Object(
            {
              name: Type.Optional(Name),
              permissions: Type.Optional(Type.Array(Permission, { maxItems: API_PERMISSIONS_MAX, description: 'replaces the list' })),
              resourceServerClientId: Type.Optional(ResourceServerClientId),
              rolesInToken: Type.Optional(Type.Boolean()),
            },
            { additionalProperties: false },
          ),
          response: { 200: ApiSchema, ...bodyErrors },
        },
      },
      async (request) => apis.updateApi(request.params.id, request.body, request.adminActor),
    );
    app.delete('/apis/:id', { schema: { params: ApiParams, response: { 204: Type.Null(), ...errors } } }, async (request, reply) => {
      await apis.deleteApi(request.params.id, request.adminActor);
      return reply.code(204).send(null);
    });
  };

/** /admin/v1/roles: `service-idp roles`. */
const roleRoutes =
  (apis: Apis): AdminRoutes =>
  async (app) => {
    app.get(
      '/roles',
      { schema: { querystring: Type.Object(PageParams, { additionalProperties: false }), response: { 200: RoleList, ...errors } } },
      async (request) => {
        const { items, nextCursor } = await apis.pageRoles(page(request.query));
        return { roles: items, nextCursor };
      },
    );
    app.post(
      '/roles',
      {
        schema: {
          body: Type.Object({ name: RoleName, permissions: Type.Optional(Grants) }, { additionalProperties: false }),
          response: { 201: RoleSchema, ...bodyErrors },
        },
      },
      async (request, reply) => reply.code(201).send(await apis.createRole(request.body, request.adminActor)),
    );
    app.get('/roles/:role', { schema: { params: RoleParams, response: { 200: RoleSchema, ...errors } } }, async (request) =>
      apis.getRole(request.params.role),
    );
    app.patch(
      '/roles/:role',
      {
        schema: {
          params: RoleParams,
          body: Type.Object(
            {
              name: Type.Optional(RoleName),
              permissions: Type.Optional(Type.Array(Grant, { maxItems: ROLE_PERMISSIONS_MAX, description: 'replaces the set' })),
            },
            { additionalProperties: false },
          ),
          response: { 200: RoleSchema, ...bodyErrors },
        },
      },
      async (request) => apis.updateRole(request.params.role, request.body, request.adminActor),
    );
    app.delete('/roles/:role', { schema: { params: RoleParams, response: { 204: Type.Null(), ...errors } } }, async (request, reply) => {
      await apis.deleteRole(request.params.role, request.adminActor);
      return reply.code(204).send(null);
    });
  };

/** /admin/v1/users/{id}/roles: `service-idp users roles`. */
const userRoleRoutes =
  (apis: Apis): AdminRoutes =>
  async (app) => {
    app.get('/users/:id/roles', { schema: { params: UserParams, response: { 200: UserRoles, ...errors } } }, async (request) => ({
      roles: await apis.rolesOfUser(request.params.id),
    }));
    app.post(
      '/users/:id/roles',
      {
        schema: {
          params: UserParams,
          body: Type.Object({ role: RoleKey }, { additionalProperties: false }),
          response: { 200: UserRoles, ...bodyErrors },
        },
      },
      async (request) => {
        await apis.assignRole(request.params.id, request.body.role, request.adminActor);
        return { roles: await apis.rolesOfUser(request.params.id) };
      },
    );
    app.delete(
      '/users/:id/roles/:role',
      { schema: { params: UserRoleParams, response: { 204: Type.Null(), ...errors } } },
      async (request, reply) => {
        await apis.unassignRole(request.params.id, request.params.role, request.adminActor);
        return reply.code(204).send(null);
      },
    );
  };

const ClientPermissions = wireBody<AdminClientPermissions>()(Type.Object({ clientId: Type.String(), permissions: Grants }));
const ClientParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) });

/** /admin/v1/clients/{id}/permissions: `service-idp clients grant`, for machine clients only. */
const clientPermissionRoutes =
  (apis: Apis, isMachineClient: (id: string) => Promise<boolean>): AdminRoutes =>
  async (app) => {
    const machine = async (id: string) => {
      if (!(await isMachineClient(id))) throw new ServiceError('ERR_NOT_FOUND', `No machine client ${id}.`);
      return id;
    };
    app.get(
      '/clients/:id/permissions',
      { schema: { params: ClientParams, response: { 200: ClientPermissions, ...errors } } },
      async (request) => ({
        clientId: await machine(request.params.id),
        permissions: await apis.clientGrants(request.params.id),
      }),
    );
    app.put(
      '/clients/:id/permissions',
      {
        schema: {
          params: ClientParams,
          body: Type.Object({ permissions: Grants }, { additionalProperties: false }),
          response: { 200: ClientPermissions, ...bodyErrors },
        },
      },
      async (request) => ({
        clientId: await machine(request.params.id),
        permissions: await apis.grantClient(request.params.id, request.body.permissions, request.adminActor),
      }),
    );
  };

/**
 * /admin/v1/apis, /admin/v1/roles and /admin/v1/users/{id}/roles: what `service-idp apis`,
 * `roles` and `users roles` do, registered inside the admin routes (their admin-key hook
 * applies). The service checks what needs the database (a permission an API defines, a user
 * that exists), so the CLI and the API refuse the same input with the same message.
 */
export const apiAdminRoutes =
  ({ apis, isMachineClient }: { apis: Apis; isMachineClient: (clientId: string) => Promise<boolean> }): AdminRoutes =>
  async (app) => {
    await app.register(clientPermissionRoutes(apis, isMachineClient));
    await app.register(apiRoutes(apis));
    await app.register(roleRoutes(apis));
    await app.register(userRoleRoutes(apis));
  };
