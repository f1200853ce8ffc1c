import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { BrowserPaths, type InitiateMfaResponse, type VerifyMfaResponse } from 'service-protocol';
import { Type } from 'typebox';
import { emailOf, Otp, RecoveryCode } from '../http/schemas.js';
import type { MfaService } from './service.js';

const SessionId = Type.String({ minLength: 10, maxLength: 100 });
const InitiateMfaBody = Type.Object({ userid: Type.String({ maxLength: 320 }), sessionId: SessionId }, { additionalProperties: false });
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

const SENT: Record<string, string> = {
  email: 'We emailed you a verification code.',
  sms: 'We sent a verification code by SMS.',
  totp: 'Enter the current code from your authenticator app.',
};

export const mfaRoutes: FastifyPluginAsyncTypebox<{ mfa: MfaService }> = async (app, { mfa }) => {
  app.post(BrowserPaths.mfaInitiate, { schema: { body: InitiateMfaBody } }, async (request): Promise<InitiateMfaResponse> => {
    const { userid, sessionId } = request.body;
    const method = await mfa.initiate(request.client, emailOf(userid), sessionId, request.ip);
    return { status: 'MFA_INITIATED', message: SENT[method] as string, method };
  });

  app.post(BrowserPaths.mfaVerify, { schema: { body: VerifyMfaBody } }, async (request): Promise<VerifyMfaResponse> => {
    const { userid, sessionId, otp, rememberMe, regenerateRecoveryCodes } = request.body;
    const finished = await mfa.verify(
      request.client,
      emailOf(userid),
      sessionId,
      otp,
      rememberMe ?? false,
      regenerateRecoveryCodes ?? false,
    );
    return {
      status: 'SUCCESS',
      message: 'Verified.',
      success: true,
      code: finished.code,
      ...(finished.deviceId ? { deviceId: finished.deviceId } : {}),
      ...(finished.recoveryCodes ? { recoveryCodes: finished.recoveryCodes } : {}),
    };
  });
};
