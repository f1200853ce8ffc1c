import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type ClientInformation, Paths } from 'service-protocol';
import { Type } from 'typebox';
import { CLIENT_REGISTRATION_BODY_MAX_BYTES } from '../defaults.js';
import { OAuthError } from '../errors.js';
import { errorResponses, OAuthErrorBodySchema, SERVER_ERRORS, wireBody } from '../http/schemas.js';
import type { ClientRegistration } from './registration.js';

/** RFC 7591 2: checked member by member by client-registration/registration.ts, so that a refusal is invalid_client_metadata or invalid_redirect_uri. */
const MetadataBody = Type.Record(Type.String(), Type.Unknown(), {
  description:
    'RFC 7591 client metadata: redirect_uris (required), client_name, token_endpoint_auth_method (none), grant_types, response_types; other members are size-checked and not stored',
});

const Information = wireBody<ClientInformation>()(
  Type.Object({
    client_id: Type.String(),
    client_id_issued_at: Type.Integer(),
    client_name: Type.String(),
    redirect_uris: Type.Array(Type.String()),
    grant_types: Type.Array(Type.String()),
    response_types: Type.Array(Type.String()),
    token_endpoint_auth_method: Type.Literal('none'),
    registration_access_token: Type.String({ description: 'RFC 7592: the bearer token of GET, PUT and DELETE on registration_client_uri' }),
    registration_client_uri: Type.String(),
  }),
);

const refusals = { 400: OAuthErrorBodySchema, 401: OAuthErrorBodySchema };
const Params = Type.Object({ client_id: Type.String({ maxLength: 200 }) });

/** The bearer token of a request (RFC 6750 2.1), or undefined. */
function bearer(request: FastifyRequest): string | undefined {
  const match = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/.exec(request.headers.authorization ?? '');
  return match?.[1];
}

/** RFC 6750 3: a refused bearer token is named in WWW-Authenticate. */
function challengeOnRefusal(reply: FastifyReply, error: unknown): never {
  if (error instanceof OAuthError && error.error === 'invalid_token') reply.header('www-authenticate', 'Bearer error="invalid_token"');
  throw error;
}

/**
 * RFC 7591 POST /oauth/register and RFC 7592 GET/PUT/DELETE /oauth/register/:client_id, mounted
 * only when the operator allows registration (client-registration/registration.ts).
 */
export const registrationRoutes: FastifyPluginAsyncTypebox<{ registration: ClientRegistration }> = async (app, { registration }) => {
  const json = (request: FastifyRequest) => {
    if (!request.headers['content-type']?.startsWith('application/json'))
      throw new OAuthError('invalid_client_metadata', 'The metadata must be sent as application/json.');
  };

  app.post(
    Paths.registration,
    {
      bodyLimit: CLIENT_REGISTRATION_BODY_MAX_BYTES,
      schema: { body: MetadataBody, response: { 201: Information, ...refusals, ...errorResponses(429, ...SERVER_ERRORS) } },
      config: { oauthErrors: true },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      json(request);
      const answer = await registration
        .register({ metadata: request.body, initialToken: bearer(request), ip: request.ip })
        .catch((error: unknown) => challengeOnRefusal(reply, error));
      return reply.code(201).send(answer);
    },
  );

  app.get(
    `${Paths.registration}/:client_id`,
    {
      schema: { params: Params, response: { 200: Information, ...refusals, ...errorResponses(...SERVER_ERRORS) } },
      config: { oauthErrors: true },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      return registration.read(request.params.client_id, bearer(request)).catch((error: unknown) => challengeOnRefusal(reply, error));
    },
  );

  app.put(
    `${Paths.registration}/:client_id`,
    {
      bodyLimit: CLIENT_REGISTRATION_BODY_MAX_BYTES,
      schema: { params: Params, body: MetadataBody, response: { 200: Information, ...refusals, ...errorResponses(...SERVER_ERRORS) } },
      config: { oauthErrors: true },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      json(request);
      return registration
        .update(request.params.client_id, bearer(request), request.body)
        .catch((error: unknown) => challengeOnRefusal(reply, error));
    },
  );

  app.delete(
    `${Paths.registration}/:client_id`,
    {
      schema: {
        params: Params,
        response: {
          204: Type.Null({ description: 'deleted, with everything bound to it' }),
          ...refusals,
          ...errorResponses(...SERVER_ERRORS),
        },
      },
      config: { oauthErrors: true },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store');
      await registration.remove(request.params.client_id, bearer(request)).catch((error: unknown) => challengeOnRefusal(reply, error));
      return reply.code(204).send(null);
    },
  );
};
