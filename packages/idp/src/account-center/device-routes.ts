import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { type AccountHttp, actionResponses, Csrf, DeviceId } from './http.js';
import { ACCOUNT_PATH, type AccountCenter } from './service.js';

/**
 * The page's devices: sign one out, sign out all the others (both with a recent sign-in), or
 * rename one (a label only, so any live session may). Each answers back to /account.
 */
export const accountDeviceRoutes: FastifyPluginAsyncTypebox<{ account: AccountCenter; http: AccountHttp }> = async (
  app,
  { account, http },
) => {
  const { act } = http;
  app.post(
    `${ACCOUNT_PATH}/devices/revoke`,
    { schema: { body: Type.Object({ csrf: Type.Optional(Csrf), device: DeviceId }), response: actionResponses('back to /account') } },
    async (request, reply) =>
      act(request, reply, true, async (who) => {
        await account.revokeDevice(who, request.body.device);
        return reply.code(303).header('location', ACCOUNT_PATH).send();
      }),
  );

  app.post(
    `${ACCOUNT_PATH}/devices/revoke-others`,
    { schema: { body: Type.Object({ csrf: Type.Optional(Csrf) }), response: actionResponses('back to /account') } },
    async (request, reply) =>
      act(request, reply, true, async (who) => {
        await account.revokeOthers(who);
        return reply.code(303).header('location', ACCOUNT_PATH).send();
      }),
  );

  app.post(
    `${ACCOUNT_PATH}/devices/rename`,
    {
      schema: {
        body: Type.Object({ csrf: Type.Optional(Csrf), device: DeviceId, name: Type.String({ maxLength: 200 }) }),
        response: actionResponses('back to /account'),
      },
    },
    async (request, reply) =>
      act(request, reply, false, async (who) => {
        await account.renameDevice(who, request.body.device, request.body.name);
        return reply.code(303).header('location', ACCOUNT_PATH).send();
      }),
  );
};
