import type {
  AdminOrganization,
  AdminOrganizationInvitation,
  AdminOrganizationInvitationList,
  AdminOrganizationList,
  AdminOrganizationMember,
  AdminOrganizationMemberList,
  AdminOrganizationRole,
  AdminOrganizationRoleList,
} from 'service-protocol';
import { Type } from 'typebox';
import { ROLE_NAME_PATTERN } from '../apis/service.js';
import { ORGANIZATION_NAME_MAX_LENGTH, PAGE_SIZE_DEFAULT, ROLE_NAME_MAX_LENGTH, ROLE_PERMISSIONS_MAX } from '../defaults.js';
import type { AdminRoutes } from '../http/admin-routes.js';
import { BODY_ERRORS, errorResponses, PageParams, SERVER_ERRORS, wireBody } from '../http/schemas.js';
import type { Invitations } from './invitations.js';
import type { Organizations } from './service.js';

const Time = Type.Integer({ description: 'Unix epoch milliseconds' });
const Id = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$' });
const errors = errorResponses(400, 401, 403, 404, ...SERVER_ERRORS);
const bodyErrors = errorResponses(...BODY_ERRORS, 401, 403, 404, ...SERVER_ERRORS);
const OrganizationParams = Type.Object({ id: Id });
const MemberParams = Type.Object({ id: Id, user: Id });
const RoleKey = Type.String({
  minLength: 1,
  maxLength: ROLE_NAME_MAX_LENGTH,
  pattern: ROLE_NAME_PATTERN,
  description: 'the role id (orole_…) or name',
});
const RoleParams = Type.Object({ role: RoleKey });
const ManagesOrganization = Type.Boolean({
  description: "a member holding it is that organization's admin (members, invitations) in the account center",
});
const Name = Type.String({ minLength: 1, maxLength: ORGANIZATION_NAME_MAX_LENGTH });
const ExternalId = Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()], {
  description: 'the id a provisioning system (SCIM) knows it by',
});
const Roles = Type.Array(RoleKey, { maxItems: 50, description: 'organization role names or ids' });
const Grants = Type.Array(
  Type.Object(
    { api: Type.String({ minLength: 1, maxLength: 2000 }), permission: Type.String({ minLength: 1, maxLength: 200 }) },
    { additionalProperties: false },
  ),
  { maxItems: ROLE_PERMISSIONS_MAX },
);

export const OrganizationSchema = wireBody<AdminOrganization>()(
  Type.Object({
    id: Type.String(),
    name: Type.String(),
    externalId: Type.Union([Type.String(), Type.Null()]),
    mfaRequired: Type.Boolean(),
    createdAt: Time,
    updatedAt: Time,
  }),
);
const OrganizationList = wireBody<AdminOrganizationList>()(
  Type.Object({ organizations: Type.Array(OrganizationSchema), nextCursor: Type.Union([Type.String(), Type.Null()]) }),
);
const MemberSchema = wireBody<AdminOrganizationMember>()(
  Type.Object({
    organizationId: Type.String(),
    userId: Type.String(),
    email: Type.String(),
    roles: Type.Array(Type.String()),
    externalId: Type.Union([Type.String(), Type.Null()]),
    createdAt: Time,
    addedBy: Type.String(),
  }),
);
const MemberList = wireBody<AdminOrganizationMemberList>()(Type.Object({ members: Type.Array(MemberSchema) }));
const RoleSchema = wireBody<AdminOrganizationRole>()(
  Type.Object({
    id: Type.String(),
    name: Type.String(),
    permissions: Type.Array(Type.Object({ api: Type.String(), permission: Type.String() })),
    managesOrganization: Type.Boolean({ description: 'a member holding it manages that organization from the account center' }),
    createdAt: Time,
    updatedAt: Time,
  }),
);
const RoleList = wireBody<AdminOrganizationRoleList>()(Type.Object({ roles: Type.Array(RoleSchema) }));

/** /admin/v1/organizations and /admin/v1/organization-roles: `service-idp orgs`. */
export const organizationAdminRoutes =
  (organizations: Organizations): AdminRoutes =>
  async (app) => {
    await app.register(organizationRoutes(organizations));
    await app.register(memberRoutes(organizations));
    await app.register(roleRoutes(organizations));
  };

/** /admin/v1/organizations: `service-idp orgs create|list|update|delete`. */
const organizationRoutes =
  (organizations: Organizations): AdminRoutes =>
  async (app) => {
    app.get(
      '/organizations',
      { schema: { querystring: Type.Object(PageParams, { additionalProperties: false }), response: { 200: OrganizationList, ...errors } } },
      async (request) => {
        const { items, nextCursor } = await organizations.page({
          limit: request.query.limit ?? PAGE_SIZE_DEFAULT,
          ...(request.query.cursor ? { cursor: request.query.cursor } : {}),
        });
        return { organizations: items, nextCursor };
      },
    );
    app.post(
      '/organizations',
      {
        schema: {
          body: Type.Object(
            { name: Name, externalId: Type.Optional(ExternalId), mfaRequired: Type.Optional(Type.Boolean()) },
            { additionalProperties: false },
          ),
          response: { 201: OrganizationSchema, ...bodyErrors },
        },
      },
      async (request, reply) => reply.code(201).send(await organizations.create(request.body, request.adminActor)),
    );
    app.get(
      '/organizations/:id',
      { schema: { params: OrganizationParams, response: { 200: OrganizationSchema, ...errors } } },
      async (request) => organizations.get(request.params.id),
    );
    app.patch(
      '/organizations/:id',
      {
        schema: {
          params: OrganizationParams,
          body: Type.Object(
            { name: Type.Optional(Name), externalId: Type.Optional(ExternalId), mfaRequired: Type.Optional(Type.Boolean()) },
            { additionalProperties: false },
          ),
          response: { 200: OrganizationSchema, ...bodyErrors },
        },
      },
      async (request) => organizations.update(request.params.id, request.body, request.adminActor),
    );
    app.delete(
      '/organizations/:id',
      { schema: { params: OrganizationParams, response: { 204: Type.Null(), ...errors } } },
      async (request, reply) => {
        await organizations.delete(request.params.id, request.adminActor);
        return reply.code(204).send(null);
      },
    );
  };

/** /admin/v1/organizations/{id}/members: `service-idp orgs members`. */
const memberRoutes =
  (organizations: Organizations): AdminRoutes =>
  async (app) => {
    app.get(
      '/organizations/:id/members',
      { schema: { params: OrganizationParams, response: { 200: MemberList, ...errors } } },
      async (request) => ({
        members: await organizations.members(request.params.id),
      }),
    );
    app.post(
      '/organizations/:id/members',
      {
        schema: {
          params: OrganizationParams,
          body: Type.Object(
            { userId: Id, roles: Type.Optional(Roles), externalId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) },
            { additionalProperties: false },
          ),
          response: { 201: MemberSchema, ...bodyErrors },
        },
      },
      async (request, reply) =>
        reply
          .code(201)
          .send(
            await organizations.addMember(
              request.params.id,
              request.body.userId,
              request.body.roles ?? [],
              request.adminActor,
              request.body.externalId,
            ),
          ),
    );
    app.put(
      '/organizations/:id/members/:user/roles',
      {
        schema: {
          params: MemberParams,
          body: Type.Object({ roles: Roles }, { additionalProperties: false }),
          response: { 200: MemberSchema, ...bodyErrors },
        },
      },
      async (request) => organizations.setMemberRoles(request.params.id, request.params.user, request.body.roles, request.adminActor),
    );
    app.delete(
      '/organizations/:id/members/:user',
      { schema: { params: MemberParams, response: { 204: Type.Null(), ...errors } } },
      async (request, reply) => {
        await organizations.removeMember(request.params.id, request.params.user, request.adminActor);
        return reply.code(204).send(null);
      },
    );
  };

/** /admin/v1/organization-roles: `service-idp orgs roles`. */
const roleRoutes =
  (organizations: Organizations): AdminRoutes =>
  async (app) => {
    app.get('/organization-roles', { schema: { response: { 200: RoleList, ...errors } } }, async () => ({
      roles: await organizations.roles(),
    }));
    app.post(
      '/organization-roles',
      {
        schema: {
          body: Type.Object(
            {
              name: Type.String({ minLength: 1, maxLength: ROLE_NAME_MAX_LENGTH }),
              permissions: Type.Optional(Grants),
              managesOrganization: Type.Optional(ManagesOrganization),
            },
            { additionalProperties: false },
          ),
          response: { 201: RoleSchema, ...bodyErrors },
        },
      },
      async (request, reply) => reply.code(201).send(await organizations.createRole(request.body, request.adminActor)),
    );
    app.patch(
      '/organization-roles/:role',
      {
        schema: {
          params: RoleParams,
          body: Type.Object(
            {
              name: Type.Optional(Type.String({ minLength: 1, maxLength: ROLE_NAME_MAX_LENGTH })),
              permissions: Type.Optional(Grants),
              managesOrganization: Type.Optional(ManagesOrganization),
            },
            { additionalProperties: false },
          ),
          response: { 200: RoleSchema, ...bodyErrors },
        },
      },
      async (request) => organizations.updateRole(request.params.role, request.body, request.adminActor),
    );
    app.delete(
      '/organization-roles/:role',
      { schema: { params: RoleParams, response: { 204: Type.Null(), ...errors } } },
      async (request, reply) => {
        await organizations.deleteRole(request.params.role, request.adminActor);
        return reply.code(204).send(null);
      },
    );
  };

const InvitationSchema = wireBody<AdminOrganizationInvitation>()(
  Type.Object({
    id: Type.String(),
    organizationId: Type.String(),
    email: Type.String(),
    roles: Type.Array(Type.String()),
    state: Type.Union([Type.Literal('pending'), Type.Literal('accepted'), Type.Literal('expired'), Type.Literal('revoked')]),
    invitedBy: Type.String(),
    createdAt: Time,
    expiresAt: Time,
    acceptedAt: Type.Union([Time, Type.Null()]),
  }),
);
const InvitationList = wireBody<AdminOrganizationInvitationList>()(Type.Object({ invitations: Type.Array(InvitationSchema) }));
const InvitationParams = Type.Object({ id: Id, invitation: Id });

/** /admin/v1/organizations/{id}/invitations: `service-idp orgs invitations`. */
export const invitationAdminRoutes =
  (invitations: Invitations): AdminRoutes =>
  async (app) => {
    app.get(
      '/organizations/:id/invitations',
      { schema: { params: OrganizationParams, response: { 200: InvitationList, ...errors } } },
      async (request) => ({
        invitations: await invitations.list(request.params.id),
      }),
    );
    app.post(
      '/organizations/:id/invitations',
      {
        schema: {
          params: OrganizationParams,
          body: Type.Object(
            { email: Type.String({ minLength: 3, maxLength: 320 }), roles: Type.Optional(Roles) },
            { additionalProperties: false },
          ),
          response: { 201: InvitationSchema, ...bodyErrors, ...errorResponses(429) },
        },
      },
      async (request, reply) =>
        reply.code(201).send(await invitations.invite(request.params.id, request.body.email, request.body.roles ?? [], request.adminActor)),
    );
    app.post(
      '/organizations/:id/invitations/:invitation/resend',
      { schema: { params: InvitationParams, response: { 200: InvitationSchema, ...errors, ...errorResponses(429) } } },
      async (request) => invitations.resend(request.params.id, request.params.invitation, request.adminActor),
    );
    app.delete(
      '/organizations/:id/invitations/:invitation',
      { schema: { params: InvitationParams, response: { 204: Type.Null(), ...errors } } },
      async (request, reply) => {
        await invitations.revoke(request.params.id, request.params.invitation, request.adminActor);
        return reply.code(204).send(null);
      },
    );
  };
