/** Passkey steps the passkey tests share: a user with a passkey, a sign-in with it (software authenticator). */
import assert from 'node:assert/strict';
import { PASSKEY_REGISTER_OP, Paths } from 'service-protocol';
import { APP_ORIGIN, deviceProof, type RawDevice, registerRawDevice, type TestService, uniqueEmail } from './helpers.js';
import { createCredential, getAssertion, type SoftCredential } from './webauthn-authenticator.js';

/** Creation options for a signed-in device's user (its proof made for PASSKEY_REGISTER_OP). */
export async function registrationOptions(service: TestService, device: RawDevice, email: string) {
  const asked = await service.post(Paths.passkeyRegistrationOptions, {
    userid: email,
    cryptoVersion: 'v1',
    deviceProof: await deviceProof(service, device, email, PASSKEY_REGISTER_OP),
  });
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
  const options = await registrationOptions(service, device, email);
  const { credential, json } = createCredential(options, { origin: APP_ORIGIN, ...(input.synced ? { synced: true } : {}) });
  const added = await service.post(Paths.passkeyRegistration, { credential: json, ...(input.name ? { name: input.name } : {}) });
  assert.equal(added.status, 200, JSON.stringify(added.body));
  return { email, device, credential, passkeyId: added.body.deviceId as string, added: added.body, options };
}

/** Options, then the assertion the authenticator makes for them, then the sign-in request. */
export async function signInWithPasskey(
  service: TestService,
  credential: SoftCredential,
  extra: { userid?: string; ceremony?: Partial<Parameters<typeof getAssertion>[2]>; origin?: string } = {},
) {
  const origin = extra.origin ?? APP_ORIGIN;
  const asked = await service.post(Paths.passkeyAuthenticationOptions, {}, origin);
  assert.equal(asked.status, 200, JSON.stringify(asked.body));
  const assertion = getAssertion(asked.body.options, credential, { origin, ...extra.ceremony });
  const answer = await service.post(
    Paths.passkeyAuthentication,
    { credential: assertion, ...(extra.userid ? { userid: extra.userid } : {}) },
    origin,
  );
  return { ...answer, assertion, options: asked.body.options };
}
