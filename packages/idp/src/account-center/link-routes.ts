import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { type AccountHttp, actionResponses, Csrf, DeviceId } from './http.js';
import { ACCOUNT_PATH, type AccountCenter } from './service.js';

/**
 * What the account is linked to: an upstream identity to unlink (with a recent sign-in) and an
 * application signed in with it, to sign out of; a third-party application's access, to revoke.
 * Each answers back to /account.
 */
export const accountLinkRoutes: FastifyPluginAsyncTypebox<{ account: AccountCenter; http: AccountHttp }> = async (
  app,
  { account, http },
) => {
  const { act } = http;
  app.post(
    `${ACCOUNT_PATH}/identities/unlink`,
    {
      schema: {
        body: Type.Object({ csrf: Type.Optional(Csrf), connection: DeviceId, subject: Type.String({ minLength: 1, maxLength: 500 }) }),
        response: actionResponses('back to /account'),
      },
    },
    async (request, reply) =>
      act(request, reply, true, async (who) => {
        await account.unlinkIdentity(who, request.body.connection, request.body.subject);
        return reply.code(303).header('location', ACCOUNT_PATH).send();
      }),
  );

  app.post(
    `${ACCOUNT_PATH}/apps/signout`,
    { schema: { body: Type.Object({ csrf: Type.Optional(Csrf), client: DeviceId }), response: actionResponses('back to /account') } },
    async (request, reply) =>
      act(request, reply, false, async (who) => {
        await account.signOutApp(who, request.body.client);
        return reply.code(303).header('location', ACCOUNT_PATH).send();
      }),
  );

  app.post(
    `${ACCOUNT_PATH}/consents/revoke`,
    // A client id: ours (cli_…), or a metadata document's URL (clients/metadata-document.ts).
    {
      schema: {
        body: Type.Object({ csrf: Type.Optional(Csrf), client: Type.String({ minLength: 1, maxLength: 200 }) }),
        response: actionResponses('back to /account'),
      },
    },
    async (request, reply) =>
      act(request, reply, false, async (who) => {
        await account.revokeConsent(who, request.body.client);
        return reply.code(303).header('location', ACCOUNT_PATH).send();
      }),
  );
};
