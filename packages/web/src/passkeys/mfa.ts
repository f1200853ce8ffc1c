/**
 * The MFA step with a passkey: an assertion (verifyMfa), or at a new device's registration a new
 * passkey (enrollMfa), bound to the MFA session; then the code, and the device key kept as the
 * core verifyMfa keeps it.
 */
import { normalizeEmail, type PasskeyCreationOptionsJson, PasskeyPaths, type PasskeyRequestOptionsJson } from 'service-protocol';
import { isEmail } from '../checks.js';
import { cryptoOf, keepDeviceKey } from '../device-keys.js';
import { type NewDeviceKey, newDeviceKey } from '../device-proof.js';
import { request } from '../http.js';
import { invalid, invalidEmail, unexpected } from '../results.js';
import { assertionJson, attestationJson, creationOptions, requestOptions } from '../webauthn-json.js';
import { ceremony, credentialsOf, notSupported, passkeyFailure } from './ceremony.js';
import type { PasskeyFailureResult, PasskeyMfaInput, PasskeyMfaResult, PasskeySession } from './types.js';

export async function mfaCeremony(
  session: PasskeySession,
  input: PasskeyMfaInput,
  enrolling: boolean,
): Promise<PasskeyMfaResult | PasskeyFailureResult> {
  if (!isEmail(input?.userid)) return invalidEmail();
  if (typeof input.sessionId !== 'string' || input.sessionId.length === 0) return invalid('sessionId is required');
  const credentials = credentialsOf(session.deps);
  if (!credentials) return notSupported();
  const body = { userid: normalizeEmail(input.userid), sessionId: input.sessionId };
  const asked = await request(session.http, enrolling ? PasskeyPaths.mfaEnrollmentOptions : PasskeyPaths.mfaOptions, body);
  if (asked.failure) return passkeyFailure(asked);
  const options = asked.body.options;
  const made = await ceremony(
    () =>
      enrolling
        ? credentials.create({ publicKey: creationOptions(options as PasskeyCreationOptionsJson) })
        : credentials.get({ publicKey: requestOptions(options as PasskeyRequestOptionsJson) }),
    enrolling,
  );
  if (made.status) return made;
  // A device key for a new device finishing its sign-in here: the core library holds the one it
  // sent to verifyDevice, so this step sends its own, and keeps it when the service registers the
  // device (a deviceId comes back only when that step asked to remember the device).
  const key = await newDeviceKey(cryptoOf(session.deps));
  const { credential } = made;
  const answer = await request(session.http, enrolling ? PasskeyPaths.mfaEnroll : PasskeyPaths.mfaVerify, {
    ...body,
    ...(enrolling ? { credential: attestationJson(credential), name: input.name } : { credential: assertionJson(credential) }),
    rememberMe: input.remember_me === true,
    devicePublicKey: key.publicJwk,
  });
  return answer.failure ? passkeyFailure(answer) : mfaSuccess(session, body.userid, answer.body, key);
}

/** A SUCCESS of an MFA step: the device key kept under the new deviceId, as the core verifyMfa does. */
async function mfaSuccess(
  session: PasskeySession,
  email: string,
  body: Record<string, unknown>,
  key: NewDeviceKey,
): Promise<PasskeyMfaResult | PasskeyFailureResult> {
  const { code, message, deviceId, recoveryCodes } = body;
  if (body.status !== 'SUCCESS' || typeof code !== 'string') return unexpected();
  const result = {
    status: 'SUCCESS',
    message: String(message),
    success: true,
    code,
    iss: session.iss,
    ...(typeof deviceId === 'string' ? { deviceId } : {}),
    ...(Array.isArray(recoveryCodes) ? { recoveryCodes: recoveryCodes.map(String) } : {}),
  } as const;
  if (!deviceId || typeof deviceId !== 'string' || !key.keyPair) return result;
  const { deviceRemembered, problem } = await keepDeviceKey(session, email, false, key, deviceId);
  return problem === undefined
    ? { ...result, deviceRemembered }
    : { ...result, message: `${result.message} (this device could not be remembered: ${problem})`, deviceRemembered };
}
