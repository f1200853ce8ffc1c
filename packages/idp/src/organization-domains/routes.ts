import type { AdminOrganizationDomain, AdminOrganizationDomainList } from 'service-protocol';
import { Type } from 'typebox';
import type { AdminRoutes } from '../http/admin-routes.js';
import { BODY_ERRORS, errorResponses, SERVER_ERRORS, wireBody } from '../http/schemas.js';
import type { OrganizationDomains } from './service.js';

const Time = Type.Integer({ description: 'Unix epoch milliseconds' });
const Id = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$' });
const Domain = Type.String({ minLength: 1, maxLength: 253, description: 'a DNS name such as example.com' });
const errors = errorResponses(400, 401, 403, 404, ...SERVER_ERRORS);
const bodyErrors = errorResponses(...BODY_ERRORS, 401, 403, 404, ...SERVER_ERRORS);
const OrganizationParams = Type.Object({ id: Id });
const DomainParams = Type.Object({ id: Id, domain: Domain });

/** A claim as `service-idp orgs domains list --json` prints it. */
export const DomainSchema = wireBody<AdminOrganizationDomain>()(
  Type.Object({
    organizationId: Type.String(),
    domain: Type.String(),
    verified: Type.Boolean(),
    verifiedAt: Type.Union([Time, Type.Null()]),
    verifiedBy: Type.Union([Type.String(), Type.Null()]),
    record: Type.Object({ type: Type.Literal('TXT'), name: Type.String(), value: Type.String() }),
    connectionId: Type.Union([Type.String(), Type.Null()]),
    allowEmailCode: Type.Boolean(),
    joinRole: Type.Union([Type.String(), Type.Null()]),
    createdAt: Time,
    updatedAt: Time,
  }),
);
const DomainList = wireBody<AdminOrganizationDomainList>()(Type.Object({ domains: Type.Array(DomainSchema) }));

/** /admin/v1/organizations/{id}/domains: `service-idp orgs domains`. */
export const domainAdminRoutes =
  (domains: OrganizationDomains): AdminRoutes =>
  async (app) => {
    app.get(
      '/organizations/:id/domains',
      { schema: { params: OrganizationParams, response: { 200: DomainList, ...errors } } },
      async (request) => ({
        domains: await domains.list(request.params.id),
      }),
    );
    app.post(
      '/organizations/:id/domains',
      {
        schema: {
          params: OrganizationParams,
          body: Type.Object({ domain: Domain }, { additionalProperties: false }),
          response: { 201: DomainSchema, ...bodyErrors },
        },
      },
      async (request, reply) => reply.code(201).send(await domains.claim(request.params.id, request.body.domain, request.adminActor)),
    );
    app.get(
      '/organizations/:id/domains/:domain',
      { schema: { params: DomainParams, response: { 200: DomainSchema, ...errors } } },
      async (request) => domains.get(request.params.id, request.params.domain),
    );
    app.post(
      '/organizations/:id/domains/:domain/verify',
      { schema: { params: DomainParams, response: { 200: DomainSchema, ...errors, ...errorResponses(429) } } },
      async (request) => domains.verify(request.params.id, request.params.domain, request.adminActor),
    );
    app.post(
      '/organizations/:id/domains/:domain/vouch',
      { schema: { params: DomainParams, response: { 200: DomainSchema, ...errors } } },
      async (request) => domains.vouch(request.params.id, request.params.domain, request.adminActor),
    );
    app.patch(
      '/organizations/:id/domains/:domain',
      {
        schema: {
          params: DomainParams,
          body: Type.Object(
            {
              connectionId: Type.Optional(Type.Union([Id, Type.Null()], { description: "the organization's own provider; null: none" })),
              allowEmailCode: Type.Optional(Type.Boolean()),
              joinRole: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 100 }), Type.Null()])),
            },
            { additionalProperties: false },
          ),
          response: { 200: DomainSchema, ...bodyErrors },
        },
      },
      async (request) => domains.update(request.params.id, request.params.domain, request.body, request.adminActor),
    );
    app.delete(
      '/organizations/:id/domains/:domain',
      { schema: { params: DomainParams, response: { 204: Type.Null(), ...errors } } },
      async (request, reply) => {
        await domains.remove(request.params.id, request.params.domain, request.adminActor);
        return reply.code(204).send(null);
      },
    );
  };
