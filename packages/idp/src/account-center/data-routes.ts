import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { UserExport } from '../admin/schemas.js';
import { type AccountHttp, Csrf, MfaSessionField, ProofFields, provenResponses, stepProofOf } from './http.js';
import { ACCOUNT_PATH, type AccountCenter } from './service.js';

// Both carry the proof /account/proof opened (its session, and the code typed or the passkey's assertion): account-center/factor-routes.ts.
const Proof = { csrf: Type.Optional(Csrf), session: MfaSessionField, ...ProofFields };

/**
 * The user's data: its export (a JSON download) and the account's deletion (the address typed
 * to confirm), each with a recent sign-in and a fresh proof of the factor in force (or a code
 * mailed in its stead).
 */
export const accountDataRoutes: FastifyPluginAsyncTypebox<{ account: AccountCenter; http: AccountHttp }> = async (
  app,
  { account, http },
) => {
  const { act, message, refusedProofStep, sessionCookie } = http;
  app.post(
    `${ACCOUNT_PATH}/export`,
    {
      schema: {
        body: Type.Object(Proof),
        response: { ...provenResponses('unused'), 200: UserExport },
      },
    },
    async (request, reply) =>
      act(request, reply, true, async (who) => {
        let exported: Awaited<ReturnType<AccountCenter['export']>>;
        try {
          exported = await account.export(who, request.body.session, stepProofOf(request.body));
        } catch (error) {
          return refusedProofStep(request, reply, who, 'export', request.body, error);
        }
        return reply
          .header('content-disposition', 'attachment; filename="my-account.json"')
          .header('cache-control', 'no-store')
          .send(exported);
      }),
  );

  app.post(
    `${ACCOUNT_PATH}/delete`,
    {
      schema: {
        body: Type.Object({ ...Proof, confirm: Type.String({ maxLength: 320 }) }),
        response: provenResponses('the account is deleted and the session ended'),
      },
    },
    async (request, reply) =>
      act(request, reply, true, async (who) => {
        try {
          await account.deleteAccount(who, request.body.confirm, request.body.session, stepProofOf(request.body));
        } catch (error) {
          return refusedProofStep(request, reply, who, 'delete', request.body, error);
        }
        reply.header('set-cookie', sessionCookie('', 0));
        return message(request, reply, 200, 'page.account.deleted', 'none');
      }),
  );
};
