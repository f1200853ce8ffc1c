/** Passkey steps the passkey tests share: a user with a passkey, a sign-in with it (software authenticator). */
import assert from 'node:assert/strict';
import { PASSKEY_REGISTER_OP, Paths } from 'service-protocol';
import {
  APP_ORIGIN,
  deviceProof,
  newRawDevice,
  type RawDevice,
  registerRawDevice,
  type TestService,
  uniqueEmail,
  verifiedRegistration,
} from './helpers.js';
import { createPasskey, type getAssertion, type SoftCredential, usePasskey } from './webauthn-authenticator.js';

/** The creation-options request of a signed-in device's user (its proof made for PASSKEY_REGISTER_OP). */
const registrationBody = async (service: TestService, device: RawDevice, email: string) => ({
  userid: email,
  cryptoVersion: 'v1',
  deviceProof: await deviceProof(service, device, email, PASSKEY_REGISTER_OP),
});

/** Creation options for a signed-in device's user (its proof made for PASSKEY_REGISTER_OP). */
export async function registrationOptions(service: TestService, device: RawDevice, email: string) {
  const asked = await service.post(Paths.passkeyRegistrationOptions, await registrationBody(service, device, email));
  assert.equal(asked.status, 200, JSON.stringify(asked.body));
  return asked.body.options;
}

/** A user signed in on a remembered device, who adds a passkey with the software authenticator. */
export async function userWithPasskey(
  service: TestService,
  input: { synced?: boolean; name?: string; email?: string; device?: RawDevice & { deviceId: string } } = {},
) {
  const email = input.email ?? uniqueEmail('passkey');
  const device = input.device ?? (await registerRawDevice(service, email));
  const added = await createPasskey(
    (path, body) => service.post(path, body),
    { path: Paths.passkeyRegistrationOptions, body: await registrationBody(service, device, email) },
    { path: Paths.passkeyRegistration, body: input.name ? { name: input.name } : {} },
    { origin: APP_ORIGIN, synced: input.synced },
  );
  assert.equal(added.status, 200, JSON.stringify(added.body));
  const { credential, options } = added;
  return { email, device, credential, passkeyId: added.body.deviceId as string, added: added.body, options };
}

/** Options, then the assertion the authenticator makes for them, then the sign-in request. */
export async function signInWithPasskey(
  service: TestService,
  credential: SoftCredential,
  extra: { userid?: string; ceremony?: Partial<Parameters<typeof getAssertion>[2]>; origin?: string } = {},
) {
  const origin = extra.origin ?? APP_ORIGIN;
  return usePasskey(
    (path, body) => service.post(path, body, origin),
    { path: Paths.passkeyAuthenticationOptions, body: {} },
    { path: Paths.passkeyAuthentication, body: extra.userid ? { userid: extra.userid } : {} },
    credential,
    { origin, ...extra.ceremony },
  );
}

/**
 * A new user registers a remembered raw device choosing a passkey as the MFA method
 * (verifyDevice with mfaMethod passkey), then enrolls one with the software authenticator.
 */
export async function userWithPasskeyMfa(service: TestService, input: { synced?: boolean; email?: string } = {}) {
  const email = input.email ?? uniqueEmail('pkmfa');
  const device: RawDevice = await newRawDevice();
  const started = await service.post(Paths.verifyDevice, {
    userid: email,
    deviceToken: await verifiedRegistration(service, email),
    devicePublicKey: device.publicJwk,
    mfaMethod: 'passkey',
  });
  assert.equal(started.body.status, 'FINALIZE_REGISTRATION_NEEDED', JSON.stringify(started.body));
  assert.equal(started.body.method, 'passkey');
  const sessionId = started.body.sessionId as string;
  const enrolled = await createPasskey(
    (path, body) => service.post(path, body),
    { path: Paths.passkeyMfaEnrollmentOptions, body: { userid: email, sessionId } },
    { path: Paths.passkeyMfaEnrollment, body: { userid: email, sessionId } },
    { origin: APP_ORIGIN, synced: input.synced },
  );
  assert.equal(enrolled.status, 200, JSON.stringify(enrolled.body));
  if (enrolled.body.deviceId) device.deviceId = enrolled.body.deviceId;
  return { email, device, credential: enrolled.credential, sessionId, options: enrolled.options, enrolled: enrolled.body };
}

/** A new device's registration for a user with MFA: the MFA_REQUIRED session it opens. */
export async function newDeviceMfaSession(service: TestService, email: string) {
  const device: RawDevice = await newRawDevice();
  const r = await service.post(Paths.verifyDevice, {
    userid: email,
    deviceToken: await verifiedRegistration(service, email),
    devicePublicKey: device.publicJwk,
  });
  assert.equal(r.body.status, 'MFA_REQUIRED', JSON.stringify(r.body));
  return { device, sessionId: r.body.sessionId as string, method: r.body.method as string };
}

/** Request options for an MFA session (they arm it). */
export async function passkeyMfaOptions(service: TestService, email: string, sessionId: string, origin = APP_ORIGIN) {
  const asked = await service.post(Paths.passkeyMfaOptions, { userid: email, sessionId }, origin);
  assert.equal(asked.status, 200, JSON.stringify(asked.body));
  return asked.body.options;
}

/** The passkey MFA step: options for the session, the authenticator's assertion, then the verification. */
export async function passkeyMfaStep(
  service: TestService,
  email: string,
  sessionId: string,
  credential: SoftCredential,
  extra: { ceremony?: Partial<Parameters<typeof getAssertion>[2]>; rememberMe?: boolean; origin?: string } = {},
) {
  const origin = extra.origin ?? APP_ORIGIN;
  return usePasskey(
    (path, body) => service.post(path, body, origin),
    { path: Paths.passkeyMfaOptions, body: { userid: email, sessionId } },
    { path: Paths.passkeyMfaVerify, body: { userid: email, sessionId, ...(extra.rememberMe ? { rememberMe: true } : {}) } },
    credential,
    { origin, ...extra.ceremony },
  );
}
