/**
 * The login steps before any MFA: authenticate (a remembered device's proof, or the email OTP
 * path), verifyEmailOtp and verifyDevice (a new device's registration). Each takes the client's
 * session and resolves with a result or a failure; ServiceClient runs them under guard.
 */
import { BrowserPaths, MfaMethod, normalizeEmail, normalizePhone, OTP_PATTERN } from 'service-protocol';
import { isBadPkce, isEmail, isMfaMethod, isNonEmptyString, isObject, MFA_METHODS } from './checks.js';
import { cryptoOf, deviceProof, forgetDevice, keepDeviceKey } from './device-keys.js';
import { newDeviceKey } from './device-proof.js';
import { request } from './http.js';
import { badOtp, codesOf, invalid, invalidEmail, messageOf, noPendingLogin, unexpected, withNote, withTyped } from './results.js';
import { forgetIfExpired, type LoginSession } from './session.js';
import type {
  AuthenticateOptions,
  AuthenticationResult,
  FinalizeRegistrationResult,
  VerifyDeviceInput,
  VerifyDeviceResult,
  VerifyEmailOtpResult,
} from './types.js';

export async function authenticate(
  session: LoginSession,
  userid: unknown,
  options: AuthenticateOptions | undefined,
): Promise<AuthenticationResult> {
  if (!isEmail(userid)) return invalidEmail();
  const opts: AuthenticateOptions = options ?? {};
  if (!isObject(opts)) return invalid('options must be an object');
  const { rememberDevice, code_challenge: codeChallenge, code_challenge_method: method, challengeSolution } = opts;
  if (rememberDevice !== undefined && typeof rememberDevice !== 'boolean') return invalid('rememberDevice must be a boolean');
  if (isBadPkce(codeChallenge, method)) return invalid('code_challenge must be an S256 challenge');
  if (challengeSolution !== undefined && typeof challengeSolution !== 'string') return invalid('challengeSolution must be a string');

  const email = normalizeEmail(userid);
  const proof = await deviceProof(session, email);
  if (proof?.status) return proof;

  const { body, failure: failed } = await request(
    session.http,
    BrowserPaths.authenticate,
    {
      userid: email,
      cryptoVersion: session.cryptoVersion,
      rememberDevice,
      codeChallenge,
      codeChallengeMethod: codeChallenge && 'S256',
      deviceProof: proof?.jws,
    },
    challengeSolution,
  );
  // Refused (rate limit, network): the code already sent, and its pending step, still stand.
  if (failed) return failed;
  session.pending.delete(email);
  const { status, code, deviceToken, sessionId, method: mfaMethod, connection } = body;
  const message = messageOf(body);
  const hasCode = typeof code === 'string';
  if (status === 'SUCCESS' && hasCode) return { status, message, success: true, code, iss: session.iss };
  if (status === 'OTP_NEEDED' && typeof deviceToken === 'string') {
    // The service refused this device (revoked or expired): forget its key now.
    if (body.deviceRefused === true) await forgetDevice(session, email);
    session.pending.set(email, { deviceToken, remember: rememberDevice, stale: !!proof });
    return { status, message, deviceToken, ...(hasCode && { code }) };
  }
  if (status === 'UPSTREAM_REQUIRED' && isNonEmptyString(connection)) return { status, message, connection };
  if (status === 'MFA_REQUIRED' && isNonEmptyString(sessionId) && isMfaMethod(mfaMethod)) {
    session.pending.set(email, { sessionId });
    return { status, message, sessionId, method: mfaMethod };
  }
  return unexpected();
}

export async function verifyEmailOtp(session: LoginSession, input: { userid: string; otp: string }): Promise<VerifyEmailOtpResult> {
  if (!isObject(input) || typeof input.userid !== 'string' || typeof input.otp !== 'string') {
    return invalid('userid and otp must be strings');
  }
  const email = normalizeEmail(input.userid);
  const deviceToken = session.pending.get(email)?.deviceToken;
  if (deviceToken === undefined) return noPendingLogin();
  // A malformed code is refused here, so it costs none of the service's guesses.
  if (!OTP_PATTERN.test(input.otp)) return badOtp();

  const { body, failure: failed } = await request(session.http, BrowserPaths.verifyEmailOtp, {
    userid: email,
    deviceToken,
    otp: input.otp,
  });
  if (failed) return forgetIfExpired(session, email, failed);
  if (body.status !== 'SUCCESS') return unexpected();
  return { status: 'SUCCESS', message: messageOf(body), mfaEnrolled: body.mfaEnrolled === true };
}

export async function verifyDevice(session: LoginSession, input: VerifyDeviceInput): Promise<VerifyDeviceResult> {
  if (!isObject(input) || typeof input.userid !== 'string') return invalid('userid must be a string');
  const { mfaMethod, challengeSolution } = input;
  if (challengeSolution !== undefined && typeof challengeSolution !== 'string') return invalid('challengeSolution must be a string');
  if (mfaMethod !== undefined && !isMfaMethod(mfaMethod)) return invalid(`mfaMethod must be one of ${MFA_METHODS.join(', ')}`);
  const sms = mfaMethod === MfaMethod.SMS;
  const phoneNumber = normalizePhone(input.phoneNumber);
  if (input.phoneNumber !== undefined ? !sms : sms) return invalid("phoneNumber is only for mfaMethod 'sms'");
  if (sms && phoneNumber === undefined) return invalid('phoneNumber must be E.164, such as +14155550123');
  const email = normalizeEmail(input.userid);
  const pending = session.pending.get(email);
  if (pending?.deviceToken === undefined) return noPendingLogin();

  // A fresh pair on every call: a pair sent with an earlier answer (MFA_ENROLLMENT_NEEDED) is dropped.
  const key = pending.remember ? await newDeviceKey(cryptoOf(session.deps)) : undefined;
  const { body, failure: failed } = await request(
    session.http,
    BrowserPaths.verifyDevice,
    { userid: email, deviceToken: pending.deviceToken, devicePublicKey: key?.publicJwk, mfaMethod, phoneNumber },
    challengeSolution,
  );
  if (failed) return forgetIfExpired(session, email, failed);
  const { status, code, sessionId, method, methods } = body;
  const message = messageOf(body);
  if ((status === 'SUCCESS' || status === 'DEVICE_REGISTERED') && typeof code === 'string') {
    session.pending.delete(email);
    const kept = await keepDeviceKey(session, email, pending.stale, key, body.deviceId);
    return {
      status,
      message: withNote(message, kept.problem),
      code,
      iss: session.iss,
      deviceRemembered: kept.deviceRemembered,
      ...codesOf(body),
    };
  }
  const offered = Array.isArray(methods) ? methods.filter(isMfaMethod) : [];
  if (status === 'MFA_ENROLLMENT_NEEDED' && offered.length > 0) return { status, message, methods: offered };
  if ((status === 'FINALIZE_REGISTRATION_NEEDED' || status === 'MFA_REQUIRED') && isNonEmptyString(sessionId) && isMfaMethod(method)) {
    // The service holds the public key now; the pair waits in memory until verifyMfa succeeds.
    session.pending.set(email, { ...pending, sessionId, registration: { key } });
    if (status === 'MFA_REQUIRED') return { status, message, sessionId, method };
    return withTyped<FinalizeRegistrationResult>({ status, message, method, sessionId }, body, 'string', 'otpauthUri', 'secret');
  }
  return unexpected();
}
