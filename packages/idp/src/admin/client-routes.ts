import type { AdminClient } from 'service-protocol';
import { Type } from 'typebox';
import { CLIENT_MAIL_DOMAINS_MAX, CLIENT_SMS_COUNTRIES_MAX } from '../defaults.js';
import { ServiceError } from '../errors.js';
import type { AdminRoutes } from '../http/admin-routes.js';
import type { PageQuery } from '../storage/pagination.js';
import type { Operations } from './operations.js';
import {
  bodyErrors,
  Client,
  ClientList,
  ClientLogoutChange,
  ClientSecret,
  errors,
  Id,
  IdTokenAlg,
  Jwks,
  NewClient,
  Nullable,
  Page,
  pageOf,
} from './schemas.js';

/** A new client, as `service-idp clients add` takes it. */
const NewClientBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    origins: Type.Array(Type.String({ maxLength: 2000 }), { maxItems: 50 }),
    idTokenSignedResponseAlg: Type.Optional(IdTokenAlg),
    redirectUris: Type.Optional(Type.Array(Type.String({ maxLength: 2000 }), { maxItems: 50 })),
    public: Type.Optional(Type.Boolean()),
    /** A machine client (client_credentials only); with `jwks` or `jwksUri` it may authenticate by private_key_jwt. */
    machine: Type.Optional(Type.Boolean()),
    jwks: Type.Optional(Jwks),
    jwksUri: Type.Optional(Type.String({ maxLength: 2000 })),
    postLogoutRedirectUris: Type.Optional(Type.Array(Type.String({ maxLength: 2000 }), { maxItems: 50 })),
    logout: Type.Optional(ClientLogoutChange),
    /** A third-party application: its users see a consent page (not for a machine client). */
    thirdParty: Type.Optional(Type.Boolean()),
    /** RFC 8628: the client may use the device authorization grant (not for a machine client). */
    deviceCodeGrant: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

/** A change to a client: only the fields given change. */
const ClientChange = Type.Object(
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
    /** true: a third-party application, whose users consent to what it asks; false: first-party (no consent page). */
    thirdParty: Type.Optional(Type.Boolean()),
    /** RFC 8628: true, the client may use the device authorization grant; false: not. */
    deviceCodeGrant: Type.Optional(Type.Boolean()),
    /** ISO 3166 codes its SMS may go to (replaces the list; [] sends no SMS); null: the service's list (otp/send-rules.ts). */
    smsCountries: Type.Optional(Nullable(Type.Array(Type.String({ maxLength: 2 }), { maxItems: CLIENT_SMS_COUNTRIES_MAX }))),
    /** The mail domains its codes may go to (replaces the list, at least one); null: any domain. */
    mailDomains: Type.Optional(
      Nullable(Type.Array(Type.String({ minLength: 1, maxLength: 253 }), { minItems: 1, maxItems: CLIENT_MAIL_DOMAINS_MAX })),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

/** /admin/v1/clients: what `service-idp clients` does, over HTTP; changes go through the operations (admin/operations.ts). */
export const clientAdminRoutes =
  ({
    clients,
    operations,
  }: {
    clients: {
      page(query: PageQuery): Promise<{ items: AdminClient[]; nextCursor: string | null }>;
      /** An operator's client (undefined for an unknown or built-in one). */
      operated(id: string): Promise<AdminClient | undefined>;
    };
    operations: Operations;
  }): AdminRoutes =>
  async (app) => {
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
          body: NewClientBody,
          response: {
            201: NewClient,
            ...bodyErrors,
          },
        },
      },
      async (request, reply) => reply.code(201).send(await operations.createClient(request.body, request.adminActor)),
    );

    app.patch(
      '/clients/:id',
      {
        schema: {
          params: Type.Object({ id: Id }),
          body: ClientChange,
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
          thirdParty,
          deviceCodeGrant,
          smsCountries,
          mailDomains,
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
            request.adminActor,
          );
        // Checked before anything is stored, like the addresses: a refused list (400) changes nothing.
        if (smsCountries !== undefined || mailDomains !== undefined)
          await operations.setSendRules(
            request.params.id,
            { ...(smsCountries !== undefined ? { smsCountries } : {}), ...(mailDomains !== undefined ? { mailDomains } : {}) },
            request.adminActor,
          );
        if (mfaPolicy) await operations.setMfaPolicy(request.params.id, mfaPolicy, request.adminActor);
        if (idTokenSignedResponseAlg) await operations.setIdTokenAlg(request.params.id, idTokenSignedResponseAlg, request.adminActor);
        if (passkeySatisfiesMfa !== undefined)
          await operations.setPasskeyMfa(request.params.id, passkeySatisfiesMfa ? 'yes' : 'no', request.adminActor);
        if (dpopBoundAccessTokens !== undefined)
          await operations.setDpop(request.params.id, dpopBoundAccessTokens ? 'required' : 'optional', request.adminActor);
        if (requirePushedAuthorizationRequests !== undefined)
          await operations.setPushedRequests(
            request.params.id,
            requirePushedAuthorizationRequests ? 'required' : 'optional',
            request.adminActor,
          );
        if (thirdParty !== undefined) await operations.setThirdParty(request.params.id, thirdParty ? 'yes' : 'no', request.adminActor);
        if (deviceCodeGrant !== undefined)
          await operations.setDeviceCodeGrant(request.params.id, deviceCodeGrant ? 'yes' : 'no', request.adminActor);
        return reply.code(204).send(null);
      },
    );

    app.delete(
      '/clients/:id',
      { schema: { params: Type.Object({ id: Id }), response: { 204: Type.Null(), ...errors } } },
      async (request, reply) => {
        await operations.deleteClient(request.params.id, request.adminActor);
        return reply.code(204).send(null);
      },
    );

    // A confidential client's new secret key, shown in this answer only; the old one stops at once.
    app.post(
      '/clients/:id/secret',
      { schema: { params: Type.Object({ id: Id }), response: { 200: ClientSecret, ...errors } } },
      async (request) => ({
        clientId: request.params.id,
        secretKey: await operations.rotateClientSecret(request.params.id, request.adminActor),
      }),
    );
  };
