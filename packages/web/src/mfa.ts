/**
 * The MFA step by code: initiateMfa (the service sends the code) and verifyMfa (the code, or a
 * recovery code, for the authorization code; the end of a new device's registration).
 */
import { BrowserPaths, normalizeEmail, OTP_PATTERN, RECOVERY_CODE_PATTERN } from 'service-protocol';
import { isMfaMethod, isNonEmptyString, isObject } from './checks.js';
import { keepDeviceKey } from './device-keys.js';
import { request } from './http.js';
import { badOtp, codesOf, invalid, messageOf, noPendingLogin, unexpected, withNote } from './results.js';
import { forgetIfExpired, type LoginSession } from './session.js';
import type { FailureResult, InitiateMfaInput, InitiateMfaResult, VerifyMfaInput, VerifyMfaResult } from './types.js';

export async function initiateMfa(session: LoginSession, input: InitiateMfaInput): Promise<InitiateMfaResult> {
  if (!isObject(input) || typeof input.userid !== 'string' || !isNonEmptyString(input.sessionId)) {
    return invalid('userid and sessionId must be strings');
  }
  const email = normalizeEmail(input.userid);
  const { sessionId, challengeSolution } = input;
  if (challengeSolution !== undefined && typeof challengeSolution !== 'string') return invalid('challengeSolution must be a string');
  const { body, failure: failed } = await request(session.http, BrowserPaths.mfaInitiate, { userid: email, sessionId }, challengeSolution);
  if (failed) return forgetIfExpired(session, email, failed);
  const { status, method } = body;
  if (status !== 'MFA_INITIATED' || !isMfaMethod(method)) return unexpected();
  // Keep the login state (and a waiting device key) when it belongs to this session.
  if (session.pending.get(email)?.sessionId !== sessionId) session.pending.set(email, { sessionId });
  return { status, message: messageOf(body), method };
}

export async function verifyMfa(session: LoginSession, input: VerifyMfaInput): Promise<VerifyMfaResult | FailureResult> {
  if (
    !isObject(input) ||
    typeof input.userid !== 'string' ||
    typeof input.otp !== 'string' ||
    (input.remember_me !== undefined && typeof input.remember_me !== 'boolean') ||
    (input.sessionId !== undefined && !isNonEmptyString(input.sessionId))
  ) {
    return invalid('verifyMfa takes { userid, otp, remember_me?, sessionId? }');
  }
  const email = normalizeEmail(input.userid);
  const pending = session.pending.get(email);
  const sessionId = input.sessionId ?? pending?.sessionId;
  if (sessionId === undefined) return noPendingLogin();
  if (!OTP_PATTERN.test(input.otp) && !RECOVERY_CODE_PATTERN.test(input.otp)) return badOtp();
  const { body, failure: failed } = await request(session.http, BrowserPaths.mfaVerify, {
    userid: email,
    sessionId,
    otp: input.otp,
    rememberMe: input.remember_me,
    regenerateRecoveryCodes: input.regenerateRecoveryCodes,
  });
  if (failed) return forgetIfExpired(session, email, failed);
  const { status, code } = body;
  if (status !== 'SUCCESS' || typeof code !== 'string') return unexpected();
  session.pending.delete(email);
  const registration = pending?.sessionId === sessionId ? pending.registration : undefined;
  // The end of a new device's registration: its key is kept now (deviceRemembered says whether).
  const kept = registration && (await keepDeviceKey(session, email, pending?.stale, registration.key, body.deviceId));
  return {
    status,
    message: withNote(messageOf(body), kept?.problem),
    success: true,
    code,
    iss: session.iss,
    ...(kept && { deviceRemembered: kept.deviceRemembered }),
    ...codesOf(body),
  };
}
