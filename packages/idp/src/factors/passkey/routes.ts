import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import {
  CRYPTO_VERSIONS,
  DEVICE_NAME_MAX_LENGTH,
  isValidDeviceName,
  type PasskeyAuthenticationOptionsResponse,
  type PasskeyAuthenticationResponse,
  PasskeyPaths,
  type PasskeyRegistrationOptionsResponse,
  type PasskeyRegistrationResponse,
} from 'service-protocol';
import { Type } from 'typebox';
import { ServiceError } from '../../errors.js';
import { BODY_ERRORS, emailOf, errorResponses, mfaMethodSchema, PkceChallenge, SERVER_ERRORS, wireBody } from '../../http/schemas.js';
import { mfaRequired, SignedInAnswer } from '../../sign-in/answers.js';
import type { PasskeyService } from './service.js';

/** base64url without padding, bounded: every binary member of a WebAuthn JSON structure. */
const B64 = (maxLength: number) => Type.String({ pattern: '^[A-Za-z0-9_-]*$', maxLength });
const Transports = Type.Array(Type.String({ maxLength: 32 }), { maxItems: 8 });
const ExtensionResults = Type.Record(Type.String(), Type.Unknown());
const Descriptor = Type.Object({
  type: Type.Literal('public-key'),
  id: Type.String(),
  transports: Type.Optional(Type.Array(Type.String())),
});

/** A new credential (navigator.credentials.create) as base64url JSON; the hosted pages' offer takes it too. */
export const Attestation = Type.Object(
  {
    id: B64(1366),
    rawId: B64(1366),
    type: Type.Literal('public-key'),
    response: Type.Object(
      { clientDataJSON: B64(4096), attestationObject: B64(8192), transports: Type.Optional(Transports) },
      { additionalProperties: false },
    ),
    authenticatorAttachment: Type.Optional(Type.String({ maxLength: 32 })),
    clientExtensionResults: ExtensionResults,
  },
  { additionalProperties: false },
);
export const Assertion = Type.Object(
  {
    id: B64(1366),
    rawId: B64(1366),
    type: Type.Literal('public-key'),
    response: Type.Object(
      {
        clientDataJSON: B64(4096),
        authenticatorData: B64(4096),
        signature: B64(1024),
        userHandle: Type.Optional(B64(128)),
      },
      { additionalProperties: false },
    ),
    authenticatorAttachment: Type.Optional(Type.String({ maxLength: 32 })),
    clientExtensionResults: ExtensionResults,
  },
  { additionalProperties: false },
);

const RegistrationOptionsBody = Type.Object(
  {
    userid: Type.String({ maxLength: 320 }),
    cryptoVersion: Type.Union(CRYPTO_VERSIONS.map((v) => Type.Literal(v))),
    deviceProof: Type.String({ maxLength: 4096 }),
  },
  { additionalProperties: false },
);
/** Creation options (navigator.credentials.create's publicKey, base64url); the hosted pages' offer answers them too. */
export const CreationOptions = Type.Object({
  rp: Type.Object({ id: Type.String(), name: Type.String() }),
  user: Type.Object({ id: Type.String(), name: Type.String(), displayName: Type.String() }),
  challenge: Type.String(),
  pubKeyCredParams: Type.Array(Type.Object({ type: Type.Literal('public-key'), alg: Type.Integer() })),
  timeout: Type.Integer({ description: 'milliseconds' }),
  excludeCredentials: Type.Array(Descriptor),
  authenticatorSelection: Type.Object({
    residentKey: Type.Literal('required'),
    requireResidentKey: Type.Literal(true),
    userVerification: Type.Literal('required'),
  }),
  attestation: Type.Literal('none'),
});
const RegistrationOptionsAnswer = wireBody<PasskeyRegistrationOptionsResponse>()(
  Type.Object({ status: Type.Literal('SUCCESS'), message: Type.String(), options: CreationOptions }),
);
const RegisterBody = Type.Object(
  { credential: Attestation, name: Type.Optional(Type.String({ maxLength: DEVICE_NAME_MAX_LENGTH * 4 })) },
  { additionalProperties: false },
);
const RegisterAnswer = wireBody<PasskeyRegistrationResponse>()(
  Type.Object({ status: Type.Literal('SUCCESS'), message: Type.String(), deviceId: Type.String(), synced: Type.Boolean() }),
);
/** PublicKeyCredentialRequestOptionsJSON as the service sends it; allowCredentials at an MFA step only. */
export const RequestOptions = Type.Object({
  rpId: Type.String(),
  challenge: Type.String(),
  timeout: Type.Integer({ description: 'milliseconds' }),
  userVerification: Type.Literal('required'),
  allowCredentials: Type.Optional(Type.Array(Descriptor)),
});
const AuthenticationOptionsAnswer = wireBody<PasskeyAuthenticationOptionsResponse>()(
  Type.Object({ status: Type.Literal('SUCCESS'), message: Type.String(), options: RequestOptions }),
);
const AuthenticateBody = Type.Object(
  {
    credential: Assertion,
    userid: Type.Optional(Type.String({ maxLength: 320 })),
    codeChallenge: Type.Optional(PkceChallenge),
    codeChallengeMethod: Type.Optional(Type.Literal('S256')),
  },
  { additionalProperties: false },
);
const authenticateAnswer = (methods: readonly string[]) =>
  wireBody<PasskeyAuthenticationResponse>()(
    Type.Union([
      SignedInAnswer,
      Type.Object({
        status: Type.Literal('MFA_REQUIRED'),
        message: Type.String(),
        sessionId: Type.String(),
        method: mfaMethodSchema(methods),
        userid: Type.String({ description: "the user's address, for initiateMfa and verifyMfa" }),
      }),
    ]),
  );

/**
 * POST /v1/passkeys/{registration/options, registration, authentication/options, authentication}.
 * 401 answers ERR_DEVICE_UNTRUSTED (registration options: the device proof was refused) or
 * ERR_PASSKEY_INVALID (the ceremony was refused); 400 ERR_SESSION_INVALID a challenge that is
 * expired, already spent, or not this page's; 429 ERR_RATE_LIMITED past the sign-in routes'
 * per-IP budgets (PASSKEY_OPTIONS_PER_IP, PASSKEY_SIGN_IN_PER_IP).
 */
export const passkeyRoutes: FastifyPluginAsyncTypebox<{
  passkeys: PasskeyService;
  /**
   * The sign-in ceremony's context (challenge.ts `context`): for the hosted pages, the pending
   * request they serve, checked against this browser's binding cookie (oidc/service.ts
   * `hostedCeremonyContext`); undefined for every other client.
   */
  ceremonyContext?: (request: FastifyRequest) => Promise<string | undefined>;
  /** The MFA methods of the service's factors (factors/index.ts), as the answers name them. */
  mfaMethods: readonly string[];
}> = async (app, { passkeys, ceremonyContext, mfaMethods }) => {
  app.post(
    PasskeyPaths.registrationOptions,
    {
      schema: {
        body: RegistrationOptionsBody,
        response: { 200: RegistrationOptionsAnswer, ...errorResponses(...BODY_ERRORS, 401, 403, ...SERVER_ERRORS) },
      },
    },
    async (request): Promise<PasskeyRegistrationOptionsResponse> => {
      const caller = {
        client: request.client,
        email: emailOf(request.body.userid),
        cryptoVersion: request.body.cryptoVersion,
        deviceProof: request.body.deviceProof,
      };
      const options = await passkeys.registrationOptions(caller, request.headers.origin);
      return { status: 'SUCCESS', message: 'Create the passkey with these options (navigator.credentials.create).', options };
    },
  );

  app.post(
    PasskeyPaths.register,
    {
      schema: {
        body: RegisterBody,
        response: { 200: RegisterAnswer, ...errorResponses(...BODY_ERRORS, 401, 403, ...SERVER_ERRORS) },
      },
    },
    async (request): Promise<PasskeyRegistrationResponse> => {
      const { credential, name } = request.body;
      if (name !== undefined && !isValidDeviceName(name)) {
        throw new ServiceError(
          'ERR_REQUEST_INVALID',
          `A passkey name is 1 to ${DEVICE_NAME_MAX_LENGTH} characters, without control or direction characters.`,
        );
      }
      const { deviceId, synced } = await passkeys.register(request.client, request.headers.origin, credential, name);
      return { status: 'SUCCESS', message: 'Passkey added: it is listed with your devices.', deviceId, synced };
    },
  );

  app.post(
    PasskeyPaths.authenticationOptions,
    {
      schema: {
        body: Type.Object({}, { additionalProperties: false }),
        response: { 200: AuthenticationOptionsAnswer, ...errorResponses(...BODY_ERRORS, 401, 403, 429, ...SERVER_ERRORS) },
      },
    },
    async (request): Promise<PasskeyAuthenticationOptionsResponse> => {
      const options = await passkeys.authenticationOptions(
        request.client,
        request.headers.origin,
        request.ip,
        await ceremonyContext?.(request),
      );
      return { status: 'SUCCESS', message: 'Ask for a passkey with these options (navigator.credentials.get).', options };
    },
  );

  app.post(
    PasskeyPaths.authenticate,
    {
      schema: {
        body: AuthenticateBody,
        response: { 200: authenticateAnswer(mfaMethods), ...errorResponses(...BODY_ERRORS, 401, 403, 429, ...SERVER_ERRORS) },
      },
    },
    async (request): Promise<PasskeyAuthenticationResponse> => {
      const body = request.body;
      if (body.codeChallenge !== undefined && body.codeChallengeMethod !== 'S256') {
        throw new ServiceError('ERR_REQUEST_INVALID', 'codeChallengeMethod must be S256 when a code challenge is sent.');
      }
      const outcome = await passkeys.authenticate(
        request.client,
        request.headers.origin,
        {
          credential: body.credential,
          ...(body.userid !== undefined ? { email: emailOf(body.userid) } : {}),
          codeChallenge: body.codeChallenge ?? null,
        },
        request.ip,
        await ceremonyContext?.(request),
      );
      if (outcome.kind === 'mfa') {
        return { ...mfaRequired(outcome), userid: outcome.email };
      }
      return { status: 'SUCCESS', message: 'Signed in with a passkey.', success: true, code: outcome.code };
    },
  );
};
