/** Adding a passkey on a browser the user is signed in on: its remembered device key proves it. */
import { BrowserPaths, normalizeEmail, PASSKEY_REGISTER_OP, type PasskeyCreationOptionsJson, PasskeyPaths } from 'service-protocol';
import { isEmail } from '../checks.js';
import { cryptoOf, deviceRecord } from '../device-keys.js';
import { createDeviceProof } from '../device-proof.js';
import { request } from '../http.js';
import { failure, invalidEmail, unexpected } from '../results.js';
import type { FailureResult } from '../types.js';
import { attestationJson, creationOptions } from '../webauthn-json.js';
import { ceremony, credentialsOf, notSupported, passkeyFailure } from './ceremony.js';
import type { AddPasskeyResult, PasskeyFailureResult, PasskeySession } from './types.js';

export async function addPasskey(
  session: PasskeySession,
  input: { userid: string; name?: string },
): Promise<AddPasskeyResult | PasskeyFailureResult> {
  if (!isEmail(input?.userid)) return invalidEmail();
  const credentials = credentialsOf(session.deps);
  if (!credentials) return notSupported();
  const email = normalizeEmail(input.userid);
  const proof = await registrationProof(session, email);
  if (proof.status) return proof;
  const asked = await request(session.http, PasskeyPaths.registrationOptions, {
    userid: email,
    cryptoVersion: session.cryptoVersion,
    deviceProof: proof.jws,
  });
  if (asked.failure) return passkeyFailure(asked);
  const made = await ceremony(
    () => credentials.create({ publicKey: creationOptions(asked.body.options as PasskeyCreationOptionsJson) }),
    true,
  );
  if (made.status) return made;
  const added = await request(session.http, PasskeyPaths.register, { credential: attestationJson(made.credential), name: input.name });
  if (added.failure) return passkeyFailure(added);
  const { deviceId, synced, message } = added.body;
  return { status: 'SUCCESS', message: String(message), success: true, deviceId: String(deviceId), synced: synced === true };
}

/**
 * A device proof for PASSKEY_REGISTER_OP with the key the core client remembered for this user.
 * Unlike the core's proof, every way it cannot be made ends the operation.
 */
async function registrationProof(session: PasskeySession, email: string): Promise<{ jws: string; status?: undefined } | FailureResult> {
  const untrusted = failure('DEVICE_KEY_UNAVAILABLE', 'Sign in on this browser first: a passkey is added from a signed-in device');
  const crypto = cryptoOf(session.deps);
  try {
    const record = await deviceRecord(session, email);
    if (!record || !crypto?.subtle) return untrusted;
    const challenge = await request(session.http, BrowserPaths.deviceChallenge, {});
    if (challenge.failure) return challenge.failure;
    const nonce = challenge.body.challenge;
    if (typeof nonce !== 'string') return unexpected();
    const jws = await createDeviceProof(crypto, record.keyPair.privateKey, {
      deviceId: record.deviceId,
      cryptoVersion: session.cryptoVersion,
      sub: email,
      nonce,
      op: PASSKEY_REGISTER_OP,
    });
    return { jws };
  } catch {
    return untrusted;
  }
}
