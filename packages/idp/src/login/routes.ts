import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type AuthenticateResponse, BrowserPaths, CRYPTO_VERSIONS } from 'service-protocol';
import { Type } from 'typebox';
import { ServiceError } from '../errors.js';
import { browserCredentials } from '../http/browser-client.js';
import { emailOf, PkceChallenge } from '../http/schemas.js';
import type { LoginService } from './service.js';

const AuthenticateBody = Type.Object(
  {
    userid: Type.String({ maxLength: 320 }),
    cryptoVersion: Type.Union(CRYPTO_VERSIONS.map((v) => Type.Literal(v))),
    rememberDevice: Type.Optional(Type.Boolean()),
    codeChallenge: Type.Optional(PkceChallenge),
    codeChallengeMethod: Type.Optional(Type.Literal('S256')),
    deviceProof: Type.Optional(Type.String({ maxLength: 4096 })),
  },
  { additionalProperties: false },
);

export const loginRoutes: FastifyPluginAsyncTypebox<{ login: LoginService; testMode: boolean }> = async (app, { login, testMode }) => {
  app.post(
    BrowserPaths.deviceChallenge,
    { schema: { response: { 200: Type.Object({ challenge: Type.String(), expiresIn: Type.Integer() }) } } },
    async (request) => login.issueChallenge(request.client),
  );

  app.post(BrowserPaths.authenticate, { schema: { body: AuthenticateBody } }, async (request): Promise<AuthenticateResponse> => {
    const body = request.body;
    // The client is read with the device a proof names, in one statement (login/store.ts).
    const { client, read } = await login.open(browserCredentials(request), body.deviceProof);
    request.client = client;
    const email = emailOf(body.userid);
    if (body.codeChallenge !== undefined && body.codeChallengeMethod !== 'S256') {
      throw new ServiceError('ERR_REQUEST_INVALID', 'codeChallengeMethod must be S256 when a code challenge is sent.');
    }
    const outcome = await login.authenticate(request.client, {
      email,
      cryptoVersion: body.cryptoVersion,
      rememberDevice: body.rememberDevice ?? false,
      codeChallenge: body.codeChallenge ?? null,
      ...(body.deviceProof ? { deviceProof: body.deviceProof } : {}),
      ip: request.ip,
      ...(read ? { read } : {}),
    });
    if (outcome.kind === 'mfa') {
      return {
        status: 'MFA_REQUIRED',
        message: 'Verify with your second factor to finish signing in.',
        sessionId: outcome.sessionId,
        method: outcome.method,
      };
    }
    if (outcome.kind === 'trusted') {
      return { status: 'SUCCESS', message: 'Signed in with a trusted device.', success: true, code: outcome.code };
    }
    return {
      status: 'OTP_NEEDED',
      message: 'We emailed a 6-digit code. Enter it to verify this device.',
      deviceToken: outcome.deviceToken,
      ...(testMode ? { code: outcome.otp } : {}),
      ...(outcome.deviceRefused ? { deviceRefused: true as const } : {}),
    };
  });
};
