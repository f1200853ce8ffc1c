import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  DEVICE_NAME_MAX_LENGTH,
  isValidDeviceName,
  type PasskeyRegistrationOptionsResponse,
  type PasskeyRegistrationResponse,
} from 'service-protocol';
import { Type } from 'typebox';
import { ServiceError } from '../errors.js';
import { Attestation, CreationOptions } from '../factors/passkey/routes.js';
import { wireBody } from '../http/schemas.js';
import { type AccountHttp, Csrf, refusedResponses } from './http.js';
import { ACCOUNT_PATH, type AccountCenter } from './service.js';

const OptionsAnswer = wireBody<PasskeyRegistrationOptionsResponse>()(
  Type.Object({ status: Type.Literal('SUCCESS'), message: Type.String(), options: CreationOptions }),
);
const RegisterAnswer = wireBody<PasskeyRegistrationResponse>()(
  Type.Object({ status: Type.Literal('SUCCESS'), message: Type.String(), deviceId: Type.String(), synced: Type.Boolean() }),
);

/**
 * POST /account/passkeys/options and POST /account/passkeys: "Add a passkey" on the account page
 * (its script, the account-passkey bundle of service-hosted-pages). Both are account actions: the
 * session's CSRF token in x-account-csrf, Origin and Sec-Fetch-Site this origin's, and a recent
 * sign-in (ACCOUNT_RECENT_SIGN_IN_SECONDS); the grant itself is account-center/passkeys.ts.
 */
export const accountPasskeyRoutes: FastifyPluginAsyncTypebox<{ account: AccountCenter; http: AccountHttp }> = async (
  app,
  { account, http },
) => {
  const { act } = http;
  app.post(
    `${ACCOUNT_PATH}/passkeys/options`,
    {
      schema: {
        body: Type.Object({ csrf: Type.Optional(Csrf) }, { additionalProperties: false }),
        response: { ...refusedResponses, 200: OptionsAnswer },
      },
    },
    async (request, reply) =>
      act(request, reply, true, async (who) => {
        const options = await account.passkeyOptions(who, request.headers.origin);
        const answer: PasskeyRegistrationOptionsResponse = {
          status: 'SUCCESS',
          message: 'Create the passkey with these options (navigator.credentials.create).',
          options,
        };
        return reply.header('cache-control', 'no-store').send(answer);
      }),
  );

  app.post(
    `${ACCOUNT_PATH}/passkeys`,
    {
      schema: {
        body: Type.Object(
          {
            csrf: Type.Optional(Csrf),
            credential: Attestation,
            name: Type.Optional(Type.String({ maxLength: DEVICE_NAME_MAX_LENGTH * 4 })),
          },
          { additionalProperties: false },
        ),
        response: { ...refusedResponses, 200: RegisterAnswer },
      },
    },
    async (request, reply) =>
      act(request, reply, true, async (who) => {
        const { credential, name } = request.body;
        if (name !== undefined && !isValidDeviceName(name))
          throw new ServiceError('ERR_REQUEST_INVALID', `A passkey name is 1 to ${DEVICE_NAME_MAX_LENGTH} characters.`);
        const added = await account.addPasskey(who, request.headers.origin, credential, name);
        const answer: PasskeyRegistrationResponse = {
          status: 'SUCCESS',
          message: 'Passkey added: it is listed with your devices.',
          deviceId: added.deviceId,
          synced: added.synced,
        };
        return reply.send(answer);
      }),
  );
};
