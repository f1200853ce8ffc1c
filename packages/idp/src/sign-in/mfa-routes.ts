import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { BrowserPaths, type InitiateMfaResponse, type VerifyMfaResponse } from 'service-protocol';
import { Type } from 'typebox';
import { BODY_ERRORS, emailOf, errorResponses, mfaMethodSchema, Otp, RecoveryCode, SERVER_ERRORS, wireBody } from '../http/schemas.js';
import { MfaFinishedAnswer, mfaFinishedAnswer, SessionBody, SessionId } from './answers.js';
import type { MfaStep } from './mfa-step.js';

const VerifyMfaBody = Type.Object(
  {
    userid: Type.String({ maxLength: 320 }),
    sessionId: SessionId,
    // The method's 6-digit code, or at a sign-in step a recovery code (told apart by shape).
    otp: Type.Union([Otp, RecoveryCode]),
    rememberMe: Type.Optional(Type.Boolean()),
    regenerateRecoveryCodes: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const initiateMfaSchema = (methods: readonly string[]) => ({
  body: SessionBody,
  response: {
    200: wireBody<InitiateMfaResponse>()(
      Type.Object({ status: Type.Literal('MFA_INITIATED'), message: Type.String(), method: mfaMethodSchema(methods) }),
    ),
    ...errorResponses(...BODY_ERRORS, 401, 403, 409, 428, 429, ...SERVER_ERRORS),
  },
});
const VerifyMfaSchema = {
  body: VerifyMfaBody,
  response: { 200: MfaFinishedAnswer, ...errorResponses(...BODY_ERRORS, 401, 403, 409, 423, ...SERVER_ERRORS) },
};

export const mfaRoutes: FastifyPluginAsyncTypebox<{
  mfa: MfaStep;
  /** The MFA methods of the service's factors (factors/index.ts), as the answers name them. */
  mfaMethods: readonly string[];
}> = async (app, { mfa, mfaMethods }) => {
  app.post(BrowserPaths.mfaInitiate, { schema: initiateMfaSchema(mfaMethods) }, async (request): Promise<InitiateMfaResponse> => {
    const { userid, sessionId } = request.body;
    const { method, prompt } = await mfa.initiate(request.client, emailOf(userid), sessionId, request.ip);
    return { status: 'MFA_INITIATED', message: prompt, method };
  });

  app.post(BrowserPaths.mfaVerify, { schema: VerifyMfaSchema }, async (request): Promise<VerifyMfaResponse> => {
    const { userid, sessionId, otp, rememberMe, regenerateRecoveryCodes } = request.body;
    const finished = await mfa.verify(
      request.client,
      emailOf(userid),
      sessionId,
      otp,
      rememberMe ?? false,
      regenerateRecoveryCodes ?? false,
    );
    return mfaFinishedAnswer(finished, 'Verified.');
  });
};
