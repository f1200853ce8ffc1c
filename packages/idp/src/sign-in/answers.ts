import type { MfaMethod, VerifyMfaResponse } from 'service-protocol';
import { Type } from 'typebox';
import { wireBody } from '../http/schemas.js';
import type { FinishedMfa } from './mfa-session.js';

/** The id of an MFA session, as verifyDevice, authenticate or a passkey sign-in returned it. */
export const SessionId = Type.String({ minLength: 10, maxLength: 100 });

/** A request that names an MFA session: the user's address and the session's id. */
export const SessionBody = Type.Object({ userid: Type.String({ maxLength: 320 }), sessionId: SessionId }, { additionalProperties: false });

/** The SUCCESS member of every sign-in's answer (authenticate, a passkey's authenticate): the authorization code. */
export const SignedInAnswer = Type.Object({
  status: Type.Literal('SUCCESS'),
  message: Type.String(),
  success: Type.Literal(true),
  code: Type.String(),
});

/** The answer of every finished MFA step (verifyMfa, and a passkey's verifyMfa and enrollMfa: PasskeyMfaResponse is the same shape). */
export const MfaFinishedAnswer = wireBody<VerifyMfaResponse>()(
  Type.Object({
    status: Type.Literal('SUCCESS'),
    message: Type.String(),
    success: Type.Literal(true),
    code: Type.String(),
    deviceId: Type.Optional(Type.String()),
    recoveryCodes: Type.Optional(Type.Array(Type.String(), { description: 'shown once: at an enrollment, or when regenerated' })),
  }),
);

/** A finished MFA step as the wire says it. */
export const mfaFinishedAnswer = (finished: FinishedMfa, message: string): VerifyMfaResponse => ({
  status: 'SUCCESS',
  message,
  success: true,
  code: finished.code,
  ...(finished.deviceId ? { deviceId: finished.deviceId } : {}),
  ...(finished.recoveryCodes ? { recoveryCodes: finished.recoveryCodes } : {}),
});

/** A sign-in's first factor passed and the MFA step follows: the MFA_REQUIRED member's fields. */
export const mfaRequired = (outcome: { sessionId: string; method: MfaMethod }) => ({
  status: 'MFA_REQUIRED' as const,
  message: 'Verify with your second factor to finish signing in.',
  sessionId: outcome.sessionId,
  method: outcome.method,
});
