import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { BrowserPaths, type VerifyDeviceResponse, type VerifyEmailOtpResponse } from 'service-protocol';
import { Type } from 'typebox';
import { DEVICE_PLACE_MAX_LENGTH } from '../../defaults.js';
import { BODY_ERRORS, DeviceToken, emailOf, errorResponses, mfaMethodSchema, Otp, SERVER_ERRORS, wireBody } from '../../http/schemas.js';
import type { NewDeviceSignIn } from './new-device.js';

const Base64Url = Type.String({ pattern: '^[A-Za-z0-9_-]{43}$' });

const VerifyEmailOtpBody = Type.Object(
  { userid: Type.String({ maxLength: 320 }), deviceToken: DeviceToken, otp: Otp },
  { additionalProperties: false },
);

const verifyDeviceBody = (methods: readonly string[]) =>
  Type.Object(
    {
      userid: Type.String({ maxLength: 320 }),
      deviceToken: DeviceToken,
      devicePublicKey: Type.Optional(
        // EC P-256 public key only: exactly the four members, so no private `d` can be sent.
        Type.Object({ kty: Type.Literal('EC'), crv: Type.Literal('P-256'), x: Base64Url, y: Base64Url }, { additionalProperties: false }),
      ),
      mfaMethod: Type.Optional(mfaMethodSchema(methods)),
      phoneNumber: Type.Optional(Type.String({ maxLength: 32 })),
    },
    { additionalProperties: false },
  );

const VerifyEmailOtpAnswer = wireBody<VerifyEmailOtpResponse>()(
  Type.Object({ status: Type.Literal('SUCCESS'), message: Type.String(), mfaEnrolled: Type.Boolean() }),
);

const verifyDeviceAnswer = (methods: readonly string[]) =>
  wireBody<VerifyDeviceResponse>()(
    Type.Union([
      Type.Object({
        status: Type.Literal('SUCCESS'),
        message: Type.String(),
        code: Type.String(),
        deviceId: Type.Optional(Type.String()),
        recoveryCodes: Type.Optional(
          Type.Array(Type.String(), { description: 'shown once, when this step enrolled the user in email MFA' }),
        ),
      }),
      Type.Object({ status: Type.Literal('MFA_ENROLLMENT_NEEDED'), message: Type.String(), methods: Type.Array(mfaMethodSchema(methods)) }),
      Type.Object({
        status: Type.Literal('FINALIZE_REGISTRATION_NEEDED'),
        message: Type.String(),
        sessionId: Type.String(),
        method: mfaMethodSchema(methods),
        otpauthUri: Type.Optional(Type.String()),
        secret: Type.Optional(Type.String()),
      }),
      Type.Object({
        status: Type.Literal('MFA_REQUIRED'),
        message: Type.String(),
        sessionId: Type.String(),
        method: mfaMethodSchema(methods),
      }),
    ]),
  );

/** The operator's approximate-place header (e.g. a CDN's country), printable characters only, capped. */
function placeOf(value: string | string[] | undefined): { place?: string } {
  const place = (Array.isArray(value) ? value[0] : value)
    ?.replace(/[^\p{L}\p{N} ,.'()-]/gu, '')
    .trim()
    .slice(0, DEVICE_PLACE_MAX_LENGTH);
  return place ? { place } : {};
}

const VerifyEmailOtpSchema = {
  body: VerifyEmailOtpBody,
  response: { 200: VerifyEmailOtpAnswer, ...errorResponses(...BODY_ERRORS, 401, 403, 409, 423, ...SERVER_ERRORS) },
};
const verifyDeviceSchema = (methods: readonly string[]) => ({
  body: verifyDeviceBody(methods),
  response: { 200: verifyDeviceAnswer(methods), ...errorResponses(...BODY_ERRORS, 401, 403, 409, 428, 429, ...SERVER_ERRORS) },
});

export const newDeviceRoutes: FastifyPluginAsyncTypebox<{
  newDeviceSignIn: NewDeviceSignIn;
  placeHeader: string | undefined;
  /** The MFA methods of the service's factors (factors/index.ts), as the requests and answers name them. */
  mfaMethods: readonly string[];
}> = async (app, { newDeviceSignIn, placeHeader, mfaMethods }) => {
  app.post(BrowserPaths.verifyEmailOtp, { schema: VerifyEmailOtpSchema }, async (request): Promise<VerifyEmailOtpResponse> => {
    const { userid, deviceToken, otp } = request.body;
    const { mfaEnrolled } = await newDeviceSignIn.verifyOtp(request.client, emailOf(userid), deviceToken, otp);
    return { status: 'SUCCESS', message: 'Email verified. Register this device to finish.', mfaEnrolled };
  });

  app.post(BrowserPaths.verifyDevice, { schema: verifyDeviceSchema(mfaMethods) }, async (request): Promise<VerifyDeviceResponse> => {
    const { userid, deviceToken, devicePublicKey, mfaMethod, phoneNumber } = request.body;
    const outcome = await newDeviceSignIn.finish(request.client, emailOf(userid), {
      deviceToken,
      ip: request.ip,
      ...(request.headers['user-agent'] ? { userAgent: request.headers['user-agent'] } : {}),
      ...placeOf(placeHeader && request.headers[placeHeader]),
      ...(devicePublicKey ? { devicePublicKey } : {}),
      ...(mfaMethod ? { mfaMethod } : {}),
      ...(phoneNumber ? { phoneNumber } : {}),
    });
    switch (outcome.kind) {
      case 'done':
        return {
          status: 'SUCCESS',
          message: outcome.deviceId ? 'Device registered and remembered.' : 'Device verified.',
          code: outcome.code,
          ...(outcome.deviceId ? { deviceId: outcome.deviceId } : {}),
          ...(outcome.recoveryCodes ? { recoveryCodes: outcome.recoveryCodes } : {}),
        };
      case 'enroll':
        return { status: 'MFA_ENROLLMENT_NEEDED', message: 'This application requires MFA: choose a method.', methods: outcome.methods };
      case 'confirm': {
        const { kind: _kind, ...rest } = outcome;
        const message =
          outcome.method === 'totp'
            ? 'Add this account to your authenticator app, then enter its current code.'
            : outcome.method === 'passkey'
              ? 'Create your passkey to finish (service-web/passkeys enrollMfa).'
              : 'We sent a code by SMS. Enter it to confirm your phone number.';
        return { status: 'FINALIZE_REGISTRATION_NEEDED', message, ...rest };
      }
      case 'mfa':
        return {
          status: 'MFA_REQUIRED',
          message: 'Verify with your second factor to finish signing in on this device.',
          sessionId: outcome.sessionId,
          method: outcome.method,
        };
    }
  });
};
