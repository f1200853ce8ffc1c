import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type AuthenticateResponse, BrowserPaths, CRYPTO_VERSIONS } from 'service-protocol';
import { Type } from 'typebox';
import { ServiceError } from '../errors.js';
import { browserCredentials, type ClientResolver } from '../http/browser-client.js';
import { BODY_ERRORS, emailOf, errorResponses, mfaMethodSchema, PkceChallenge, SERVER_ERRORS, wireBody } from '../http/schemas.js';
import { mfaRequired, SignedInAnswer } from '../sign-in/answers.js';
import type { SignInStart } from './start.js';

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

const authenticateAnswer = (methods: readonly string[]) =>
  wireBody<AuthenticateResponse>()(
    Type.Union([
      SignedInAnswer,
      Type.Object({
        status: Type.Literal('OTP_NEEDED'),
        message: Type.String(),
        deviceToken: Type.String(),
        code: Type.Optional(Type.String({ description: 'the emailed code, in test mode only' })),
        deviceRefused: Type.Optional(Type.Literal(true)),
      }),
      Type.Object({
        status: Type.Literal('UPSTREAM_REQUIRED'),
        message: Type.String(),
        connection: Type.String({ description: "the organization's provider: service-web/upstream signInWith(connection)" }),
      }),
      Type.Object({
        status: Type.Literal('MFA_REQUIRED'),
        message: Type.String(),
        sessionId: Type.String(),
        method: mfaMethodSchema(methods),
      }),
    ]),
  );

const authenticateSchema = (methods: readonly string[]) => ({
  body: AuthenticateBody,
  response: { 200: authenticateAnswer(methods), ...errorResponses(...BODY_ERRORS, 401, 403, 428, 429, ...SERVER_ERRORS) },
});

export const signInStartRoutes: FastifyPluginAsyncTypebox<{
  signInStart: SignInStart;
  testMode: boolean;
  /** The browser routes' client resolver (http/browser-client.ts), given the client this route reads itself. */
  resolveClient: ClientResolver;
  /** The MFA methods of the service's factors (factors/index.ts), as the answers name them. */
  mfaMethods: readonly string[];
}> = async (app, { signInStart, testMode, resolveClient, mfaMethods }) => {
  app.post(BrowserPaths.authenticate, { schema: authenticateSchema(mfaMethods) }, async (request): Promise<AuthenticateResponse> => {
    const body = request.body;
    // The client is read with the device a proof names, in one statement (factors/device-key/sign-in-store.ts).
    const opened = await signInStart.open(browserCredentials(request), body.deviceProof);
    const client = await resolveClient(request, opened.client);
    const email = emailOf(body.userid);
    if (body.codeChallenge !== undefined && body.codeChallengeMethod !== 'S256') {
      throw new ServiceError('ERR_REQUEST_INVALID', 'codeChallengeMethod must be S256 when a code challenge is sent.');
    }
    const outcome = await signInStart.authenticate(client, {
      email,
      cryptoVersion: body.cryptoVersion,
      rememberDevice: body.rememberDevice ?? false,
      codeChallenge: body.codeChallenge ?? null,
      ...(body.deviceProof ? { deviceProof: body.deviceProof } : {}),
      ip: request.ip,
      ...(opened.read ? { read: opened.read } : {}),
    });
    if (outcome.kind === 'upstream') {
      return {
        status: 'UPSTREAM_REQUIRED',
        message: 'Your organization signs you in with its own provider.',
        connection: outcome.connection,
      };
    }
    if (outcome.kind === 'mfa') {
      return mfaRequired(outcome);
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
