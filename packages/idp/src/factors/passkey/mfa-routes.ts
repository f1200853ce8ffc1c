import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  DEVICE_NAME_MAX_LENGTH,
  type DevicePublicJwk,
  isValidDeviceName,
  type PasskeyMfaEnrollmentOptionsResponse,
  type PasskeyMfaOptionsResponse,
  type PasskeyMfaResponse,
  PasskeyPaths,
} from 'service-protocol';
import { Type } from 'typebox';
import { isValidDevicePublicKey } from '../../devices/public-key.js';
import { ServiceError } from '../../errors.js';
import { BODY_ERRORS, emailOf, errorResponses, SERVER_ERRORS, wireBody } from '../../http/schemas.js';
import { MfaFinishedAnswer, mfaFinishedAnswer, SessionBody, SessionId } from '../../sign-in/answers.js';
import type { PasskeyMfa } from './mfa.js';
import { Assertion, Attestation, CreationOptions, RequestOptions } from './routes.js';

const Base64Url = Type.String({ pattern: '^[A-Za-z0-9_-]{43}$' });
// EC P-256 public key only, as /v1/devices takes it: exactly the four members, so no private `d`.
const DevicePublicKey = Type.Object(
  { kty: Type.Literal('EC'), crv: Type.Literal('P-256'), x: Base64Url, y: Base64Url },
  { additionalProperties: false },
);
const VerifyBody = Type.Object(
  {
    userid: Type.String({ maxLength: 320 }),
    sessionId: SessionId,
    credential: Assertion,
    rememberMe: Type.Optional(Type.Boolean()),
    devicePublicKey: Type.Optional(DevicePublicKey),
  },
  { additionalProperties: false },
);
const EnrollBody = Type.Object(
  {
    userid: Type.String({ maxLength: 320 }),
    sessionId: SessionId,
    credential: Attestation,
    name: Type.Optional(Type.String({ maxLength: DEVICE_NAME_MAX_LENGTH * 4 })),
    rememberMe: Type.Optional(Type.Boolean()),
    devicePublicKey: Type.Optional(DevicePublicKey),
  },
  { additionalProperties: false },
);

const OptionsAnswer = wireBody<PasskeyMfaOptionsResponse>()(
  Type.Object({ status: Type.Literal('SUCCESS'), message: Type.String(), options: RequestOptions }),
);
const EnrollmentOptionsAnswer = wireBody<PasskeyMfaEnrollmentOptionsResponse>()(
  Type.Object({ status: Type.Literal('SUCCESS'), message: Type.String(), options: CreationOptions }),
);
/** At the edge, before any challenge is spent: a key that is not a point of P-256 changes nothing. */
function checkDeviceKey(key: DevicePublicJwk | undefined) {
  if (key && !isValidDevicePublicKey(key))
    throw new ServiceError('ERR_DEVICE_KEY_INVALID', 'The device public key is not a valid P-256 key.');
}

/**
 * A passkey as the MFA method: POST /v1/passkeys/mfa/{enrollment/options, enrollment, options,
 * verify}. Each names the MFA session (userid, sessionId) that verifyDevice or authenticate
 * opened. 400 ERR_SESSION_INVALID: the session or the challenge is unknown, ended, spent or
 * another session's; 409 ERR_SESSION_STEP: the session does not ask for a passkey here; 401
 * ERR_PASSKEY_INVALID: the passkey was refused (an attempt counted, attemptsRemaining); 423
 * ERR_ACCOUNT_LOCKED past the account's failures.
 */
export const passkeyMfaRoutes: FastifyPluginAsyncTypebox<{ passkeys: PasskeyMfa }> = async (app, { passkeys }) => {
  const errors = errorResponses(...BODY_ERRORS, 401, 403, 409, 423, ...SERVER_ERRORS);

  app.post(
    PasskeyPaths.mfaEnrollmentOptions,
    { schema: { body: SessionBody, response: { 200: EnrollmentOptionsAnswer, ...errors } } },
    async (request): Promise<PasskeyMfaEnrollmentOptionsResponse> => {
      const { userid, sessionId } = request.body;
      const options = await passkeys.mfaEnrollmentOptions(request.client, request.headers.origin, emailOf(userid), sessionId);
      return { status: 'SUCCESS', message: 'Create the passkey with these options (navigator.credentials.create).', options };
    },
  );

  app.post(
    PasskeyPaths.mfaEnroll,
    { schema: { body: EnrollBody, response: { 200: MfaFinishedAnswer, ...errors } } },
    async (request): Promise<PasskeyMfaResponse> => {
      const { userid, sessionId, credential, name, rememberMe, devicePublicKey } = request.body;
      checkDeviceKey(devicePublicKey);
      if (name !== undefined && !isValidDeviceName(name)) {
        throw new ServiceError(
          'ERR_REQUEST_INVALID',
          `A passkey name is 1 to ${DEVICE_NAME_MAX_LENGTH} characters, without control or direction characters.`,
        );
      }
      const finished = await passkeys.mfaEnroll(request.client, request.headers.origin, {
        email: emailOf(userid),
        sessionId,
        credential,
        ...(name !== undefined ? { name } : {}),
        rememberMe: rememberMe ?? false,
        ...(devicePublicKey ? { devicePublicKey } : {}),
      });
      return mfaFinishedAnswer(finished, 'Passkey added as your second factor.');
    },
  );

  app.post(
    PasskeyPaths.mfaOptions,
    { schema: { body: SessionBody, response: { 200: OptionsAnswer, ...errors } } },
    async (request): Promise<PasskeyMfaOptionsResponse> => {
      const { userid, sessionId } = request.body;
      const options = await passkeys.mfaOptions(request.client, request.headers.origin, emailOf(userid), sessionId);
      return { status: 'SUCCESS', message: 'Ask for the passkey with these options (navigator.credentials.get).', options };
    },
  );

  app.post(
    PasskeyPaths.mfaVerify,
    { schema: { body: VerifyBody, response: { 200: MfaFinishedAnswer, ...errors } } },
    async (request): Promise<PasskeyMfaResponse> => {
      const { userid, sessionId, credential, rememberMe, devicePublicKey } = request.body;
      checkDeviceKey(devicePublicKey);
      const finished = await passkeys.mfaVerify(request.client, request.headers.origin, {
        email: emailOf(userid),
        sessionId,
        credential,
        rememberMe: rememberMe ?? false,
        ...(devicePublicKey ? { devicePublicKey } : {}),
      });
      return mfaFinishedAnswer(finished, 'Verified.');
    },
  );
};
