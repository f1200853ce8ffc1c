import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type DeviceAuthorizationResponse, Paths } from 'service-protocol';
import { Type } from 'typebox';
import type { ClientService } from '../clients/service.js';
import { AUTHORIZE_PARAMETER_MAX_LENGTH, DEVICE_NAME_MAX_LENGTH, REDIRECT_URI_MAX_LENGTH, RESOURCES_PER_REQUEST_MAX } from '../defaults.js';
import { OAuthError } from '../errors.js';
import { errorResponses, OAuthErrorBodySchema, SERVER_ERRORS, wireBody } from '../http/schemas.js';
import { clientCredentials } from '../token/client-credentials.js';
import type { DeviceAuthorizations } from './service.js';

/** RFC 8628 3.1: client authentication as at the token endpoint, the scope, RFC 8707 `resource`, and our `device_name`. */
const DeviceAuthorizationBody = Type.Object({
  client_id: Type.Optional(Type.String({ maxLength: 200 })),
  client_secret: Type.Optional(Type.String({ maxLength: 200 })),
  scope: Type.Optional(Type.String({ maxLength: AUTHORIZE_PARAMETER_MAX_LENGTH })),
  resource: Type.Optional(
    Type.Union([
      Type.String({ maxLength: REDIRECT_URI_MAX_LENGTH }),
      Type.Array(Type.String({ maxLength: REDIRECT_URI_MAX_LENGTH }), { maxItems: RESOURCES_PER_REQUEST_MAX }),
    ]),
  ),
  device_name: Type.Optional(
    Type.String({
      maxLength: DEVICE_NAME_MAX_LENGTH,
      description:
        'what the device calls itself ("Living room TV"): shown on the confirmation page as declared by the device, not verified',
    }),
  ),
});

const DeviceAuthorizationAnswer = wireBody<DeviceAuthorizationResponse>()(
  Type.Object({
    device_code: Type.String(),
    user_code: Type.String({ description: '8 letters of BCDFGHJKLMNPQRSTVWXZ as XXXX-XXXX' }),
    verification_uri: Type.String(),
    verification_uri_complete: Type.String({ description: 'verification_uri with the user code: the page still asks the user to confirm' }),
    expires_in: Type.Integer({ description: 'seconds' }),
    interval: Type.Integer({ description: 'seconds between token requests' }),
  }),
);

// Controls and bidirectional overrides would let a device reorder or hide what the confirmation page says about it.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it finds.
const HIDDEN_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

/** RFC 8628 3.1: the device authorization endpoint. */
export const deviceAuthorizationRoutes: FastifyPluginAsyncTypebox<{
  devices: DeviceAuthorizations;
  clients: Pick<ClientService, 'authenticateTokenClient'>;
}> = async (app, { devices, clients }) => {
  app.post(
    Paths.deviceAuthorization,
    {
      schema: {
        body: DeviceAuthorizationBody,
        response: {
          200: DeviceAuthorizationAnswer,
          400: OAuthErrorBodySchema,
          401: OAuthErrorBodySchema,
          ...errorResponses(429, ...SERVER_ERRORS),
        },
      },
      config: { oauthErrors: true },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      if (!request.headers['content-type']?.startsWith('application/x-www-form-urlencoded'))
        throw new OAuthError('invalid_request', 'The device authorization request must be application/x-www-form-urlencoded.');
      const { body } = request;
      // As the token endpoint: a confidential client by its secret, a public client by its client_id alone.
      const { clientId, clientSecret } = clientCredentials(request.headers.authorization, body);
      const client = await clients.authenticateTokenClient(clientId, clientSecret);
      if (!client) throw new OAuthError('invalid_client', 'Client authentication failed.');
      if (body.device_name !== undefined && HIDDEN_CHARACTERS.test(body.device_name))
        throw new OAuthError('invalid_request', 'device_name holds no control or bidirectional formatting characters.');
      return devices.start({ client, scope: body.scope, resource: body.resource, deviceName: body.device_name, ip: request.ip });
    },
  );
};
