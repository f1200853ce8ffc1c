import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Paths, type PushedAuthorizationResponse } from 'service-protocol';
import { Type } from 'typebox';
import type { ClientService } from '../clients/service.js';
import { AUTHORIZE_PARAMETER_MAX_LENGTH, REDIRECT_URI_MAX_LENGTH } from '../defaults.js';
import { OAuthError } from '../errors.js';
import { errorResponses, OAuthErrorBodySchema, SERVER_ERRORS, wireBody } from '../http/schemas.js';
import type { PushedRequests } from '../oidc/pushed-requests.js';
import { clientCredentials } from './client-credentials.js';

/** The authorization request's parameters, each once (the checks of /authorize follow), and the client's credentials. */
const PushedBody = Type.Record(
  Type.String({ maxLength: 100 }),
  Type.String({ maxLength: Math.max(AUTHORIZE_PARAMETER_MAX_LENGTH, REDIRECT_URI_MAX_LENGTH) }),
  {
    maxProperties: 40,
    description: 'the parameters of an authorization request (GET /authorize), and client_id / client_secret as at the token endpoint',
  },
);

const PushedAnswer = wireBody<PushedAuthorizationResponse>()(
  Type.Object({
    request_uri: Type.String({ description: 'urn:ietf:params:oauth:request_uri:…; send the browser to /authorize with it and client_id' }),
    expires_in: Type.Integer({ description: 'seconds; the request_uri works once within them' }),
  }),
);

const PushedSchema = {
  body: PushedBody,
  response: { 201: PushedAnswer, 400: OAuthErrorBodySchema, 401: OAuthErrorBodySchema, ...errorResponses(...SERVER_ERRORS) },
};

/**
 * RFC 9126: the client pushes its authorization request from its backend, authenticated as at
 * the token endpoint, and gets a single-use request_uri bound to it; /authorize then takes only
 * that (oidc/pushed-requests.ts). The request never rides in the browser's URL, so it cannot be
 * read or altered there.
 */
export const pushedRequestRoutes: FastifyPluginAsyncTypebox<{ pushed: PushedRequests; clients: ClientService }> = async (
  app,
  { pushed, clients },
) => {
  app.post(Paths.pushedAuthorizationRequest, { schema: PushedSchema, config: { oauthErrors: true } }, async (request, reply) => {
    reply.header('cache-control', 'no-store');
    if (!request.headers['content-type']?.startsWith('application/x-www-form-urlencoded')) {
      throw new OAuthError('invalid_request', 'The pushed request must be application/x-www-form-urlencoded.');
    }
    const { client_secret: _secret, ...params } = request.body;
    const { clientId, clientSecret } = clientCredentials(request.headers.authorization, request.body);
    const client = await clients.authenticateTokenClient(clientId, clientSecret);
    if (!client) throw new OAuthError('invalid_client', 'Client authentication failed.');
    return reply.code(201).send(await pushed.push(client, params));
  });
};
