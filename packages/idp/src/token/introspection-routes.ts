import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type IntrospectionResponse, Paths } from 'service-protocol';
import { Type } from 'typebox';
import type { ClientService } from '../clients/service.js';
import { TOKEN_PARAMETER_MAX_LENGTH } from '../defaults.js';
import { OAuthError } from '../errors.js';
import { errorResponses, OAuthErrorBodySchema, SERVER_ERRORS, wireBody } from '../http/schemas.js';
import { clientCredentials, machineCredentials } from './client-credentials.js';
import type { ClientCredentials } from './client-credentials-grant.js';
import type { Introspection } from './introspection.js';

/** How a client authenticates at the introspection endpoint (discovery's introspection_endpoint_auth_methods_supported). */
export const INTROSPECTION_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'private_key_jwt'] as const;

/** RFC 7662 2.1: the token, an optional hint, and the client's credentials as at the token endpoint. */
const IntrospectionBody = Type.Object({
  token: Type.Optional(Type.String({ maxLength: TOKEN_PARAMETER_MAX_LENGTH })),
  token_type_hint: Type.Optional(Type.String({ maxLength: 100 })),
  client_id: Type.Optional(Type.String({ maxLength: 200 })),
  client_secret: Type.Optional(Type.String({ maxLength: 200 })),
  // RFC 7523 2.2: a machine client's signed assertion (a resource server that registered its keys).
  client_assertion_type: Type.Optional(Type.String({ maxLength: 200 })),
  client_assertion: Type.Optional(Type.String({ maxLength: TOKEN_PARAMETER_MAX_LENGTH })),
});

const Seconds = Type.Integer({ description: 'seconds since the epoch' });
const IntrospectionAnswer = wireBody<IntrospectionResponse>()(
  Type.Union([
    Type.Object(
      { active: Type.Literal(false) },
      { additionalProperties: false, description: 'not live, or not the caller’s to learn about' },
    ),
    Type.Object({
      active: Type.Literal(true),
      scope: Type.String(),
      client_id: Type.String(),
      sub: Type.String(),
      exp: Seconds,
      iat: Seconds,
      iss: Type.String(),
      aud: Type.Optional(Type.String({ description: 'an API’s identifier, or the userinfo endpoint; absent for a refresh token' })),
      jti: Type.Optional(Type.String({ description: 'an access token’s; absent for a refresh token' })),
      token_type: Type.Union([Type.Literal('Bearer'), Type.Literal('DPoP'), Type.Literal('refresh_token')]),
      cnf: Type.Optional(Type.Object({ jkt: Type.String() }, { description: 'RFC 9449 6.2: the DPoP key it is bound to' })),
    }),
  ]),
);

const IntrospectionSchema = {
  body: IntrospectionBody,
  response: { 200: IntrospectionAnswer, 400: OAuthErrorBodySchema, 401: OAuthErrorBodySchema, ...errorResponses(...SERVER_ERRORS) },
};

/**
 * RFC 7662 2.1 client authentication, in one call so the endpoint follows the token endpoint's
 * methods: as there (token/client-credentials.ts), but a public client, which has no secret to
 * prove who it is, may not introspect (401 invalid_client, like no credentials at all).
 */
async function authenticatedCaller(
  clients: ClientService,
  machines: Pick<ClientCredentials, 'authenticate'>,
  authorization: string | undefined,
  body: { client_id?: string; client_secret?: string; client_assertion?: string; client_assertion_type?: string },
): Promise<string> {
  // A machine client (a resource server's usual identity): its secret or its signed assertion.
  if (body.client_assertion !== undefined || body.client_assertion_type !== undefined)
    return (await machines.authenticate(machineCredentials(authorization, body))).id;
  const { clientId, clientSecret } = clientCredentials(authorization, body);
  const client =
    clientSecret === undefined
      ? undefined
      : ((await clients.authenticateTokenClient(clientId, clientSecret)) ?? (await clients.authenticateMachine(clientId, clientSecret)));
  if (!client)
    throw new OAuthError('invalid_client', 'Client authentication failed: introspection is for confidential and machine clients.');
  return client.id;
}

/**
 * POST /oauth/introspect (RFC 7662): a resource server, or the client a token was issued to,
 * asks whether the token is live and what it carries (token/introspection.ts).
 */
export const introspectionRoutes: FastifyPluginAsyncTypebox<{
  introspection: Introspection;
  clients: ClientService;
  machines: Pick<ClientCredentials, 'authenticate'>;
}> = async (app, { introspection, clients, machines }) => {
  app.post(Paths.introspection, { schema: IntrospectionSchema, config: { oauthErrors: true } }, async (request, reply) => {
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    if (!request.headers['content-type']?.startsWith('application/x-www-form-urlencoded')) {
      throw new OAuthError('invalid_request', 'The introspection request must be application/x-www-form-urlencoded.');
    }
    const callerId = await authenticatedCaller(clients, machines, request.headers.authorization, request.body);
    if (!request.body.token) throw new OAuthError('invalid_request', 'token is required.');
    return introspection.introspect(callerId, request.body.token);
  });
};
