/**
 * Passkeys on the hosted sign-in pages without a browser: the service on a host name (a relying
 * party id cannot be an IP address), the hosted page's calls made as it makes them (the issuer's
 * origin, the hosted key, the pending request's header), and the software authenticator.
 */
import assert from 'node:assert/strict';
import { IDBFactory } from 'fake-indexeddb';
import { PASSKEY_REGISTER_OP, Paths } from 'service-protocol';
import { createPkcePair } from 'service-web';
import { newRawDevice, signDeviceProof, startTestService, type TestService, type TestServiceOptions, uniqueEmail } from './helpers.js';
import { appParams, authorize, CookieJar, complete, hostedServiceClient, requestIdOf } from './oidc-helpers.js';
import { createPasskey, type SoftCredential, usePasskey } from './webauthn-authenticator.js';

/** A test service whose issuer (and so the hosted pages' origin and rp id) is http://localhost:PORT. */
export const startHostedPasskeyService = (options: TestServiceOptions = {}) =>
  startTestService({ testMode: true, ...options, env: { SERVICE_IDP_ISSUER: 'http://localhost:0', ...options.env } });

/** POST to a browser route as the hosted page for `requestId` (origin, hosted key, request header, cookies). */
export function hostedPost(service: TestService, requestId: string, jar = new CookieJar(), origin = service.url) {
  return async (path: string, body: unknown) => {
    const response = await fetch(service.url + path, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        origin,
        'x-service-key': service.ctx.oidc.hostedPublishableKey,
        'x-service-authorization-request': requestId,
        cookie: jar.header(),
      },
      body: JSON.stringify(body),
    });
    jar.store(response);
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
}

/**
 * A new device on the hosted page for a pending request of `clientId`: the emailed code (test
 * mode answers it), then verifyDevice with a fresh key and, if given, the MFA method chosen.
 * The page's poster, the key and verifyDevice's answer.
 */
async function hostedNewDevice(service: TestService, clientId: string, email: string, mfaMethod?: 'email' | 'passkey') {
  const jar = new CookieJar();
  const start = await authorize(service, appParams(clientId, await createPkcePair()), jar);
  const post = hostedPost(service, requestIdOf(start.location), jar);
  const device = await newRawDevice();
  const a = await post(Paths.authenticate, { userid: email, cryptoVersion: 'v1', rememberDevice: true });
  assert.equal(a.body?.status, 'OTP_NEEDED', JSON.stringify(a.body));
  const v = await post(Paths.verifyEmailOtp, { userid: email, deviceToken: a.body.deviceToken, otp: a.body.code });
  assert.equal(v.status, 200, JSON.stringify(v.body));
  const d = await post(Paths.verifyDevice, {
    userid: email,
    deviceToken: a.body.deviceToken,
    devicePublicKey: device.publicJwk,
    ...(mfaMethod ? { mfaMethod } : {}),
  });
  return { post, device, d };
}

/**
 * A new user signs in on the hosted page (raw wire protocol, test mode) with a remembered
 * device, which then registers a passkey for the hosted pages: the way a user gets one there.
 * `clientId` is an app whose pending request the page serves; `mfaMethod` enrolls the user in a
 * second factor on the way (the address was just proven, so email enrollment finishes at once).
 */
export async function hostedUserWithPasskey(
  service: TestService,
  clientId: string,
  input: { email?: string; synced?: boolean; mfaMethod?: 'email' } = {},
) {
  const email = input.email ?? uniqueEmail('hosted-pk');
  const { post, device, d } = await hostedNewDevice(service, clientId, email, input.mfaMethod);
  assert.equal(typeof d.body?.deviceId, 'string', JSON.stringify(d.body));
  const { challenge } = (await post(Paths.deviceChallenge, {})).body;
  const proof = await signDeviceProof({ ...device, deviceId: d.body.deviceId }, email, challenge, PASSKEY_REGISTER_OP);
  const added = await createPasskey(
    post,
    { path: Paths.passkeyRegistrationOptions, body: { userid: email, cryptoVersion: 'v1', deviceProof: proof } },
    { path: Paths.passkeyRegistration, body: {} },
    { origin: service.url, synced: input.synced },
  );
  assert.equal(added.status, 200, JSON.stringify(added.body));
  const user = await service.ctx.enabledUsers.findByEmail(email);
  assert.ok(user);
  const { credential, options } = added;
  return { email, userId: user.id, credential, passkeyId: added.body.deviceId as string, rpId: options.rp.id as string };
}

/**
 * The hosted page's passkey sign-in for the pending request `requestId`: options, the
 * authenticator's assertion, the sign-in with the page's PKCE challenge. Returns the answer
 * and the verifier the page keeps for /signin/complete.
 */
export async function hostedPasskeySignIn(
  service: TestService,
  jar: CookieJar,
  requestId: string,
  credential: SoftCredential,
  origin = service.url,
) {
  const pkce = await createPkcePair();
  const answer = await usePasskey(
    hostedPost(service, requestId, jar, origin),
    { path: Paths.passkeyAuthenticationOptions, body: {} },
    { path: Paths.passkeyAuthentication, body: { codeChallenge: pkce.codeChallenge, codeChallengeMethod: 'S256' } },
    credential,
    { origin: service.url },
  );
  return { ...answer, codeVerifier: pkce.codeVerifier };
}

/** A whole passkey sign-in on the hosted page for a new authorization request of `clientId`: the app's redirect. */
export async function passkeyToApp(
  service: TestService,
  jar: CookieJar,
  clientId: string,
  credential: SoftCredential,
  extra: Record<string, string> = {},
) {
  const rp = await createPkcePair();
  const start = await authorize(service, appParams(clientId, rp, extra), jar);
  assert.equal(start.status, 303);
  const requestId = requestIdOf(start.location);
  assert.ok(requestId, `expected the hosted page, got ${start.location}`);
  const signedIn = await hostedPasskeySignIn(service, jar, requestId, credential);
  assert.equal(signedIn.body?.status, 'SUCCESS', JSON.stringify(signedIn.body));
  const done = await complete(service, jar, { request: requestId, code: signedIn.body.code, codeVerifier: signedIn.codeVerifier });
  assert.equal(done.status, 200, JSON.stringify(done.body));
  return { ...done, rp, requestId };
}

/**
 * A new user signs in on the hosted page of `clientId` with an email code (remembered browser,
 * service-web as the page runs it), and the page holds the sign-in as it does before offering a
 * passkey (/signin/complete with `hold`). Returns the browser, the request, the app's PKCE pair
 * and the hold's answer.
 */
export async function heldHostedSignIn(
  service: TestService,
  clientId: string,
  input: { email?: string; jar?: CookieJar; indexedDB?: IDBFactory } = {},
) {
  const email = input.email ?? uniqueEmail('offer');
  const jar = input.jar ?? new CookieJar();
  const rp = await createPkcePair();
  const start = await authorize(service, appParams(clientId, rp), jar);
  const requestId = requestIdOf(start.location);
  assert.ok(requestId, `expected the hosted page, got ${start.location}`);
  const client = await hostedServiceClient(service, input.indexedDB ?? new IDBFactory(), requestId, jar);
  const pkce = await createPkcePair();
  const started = await client.authenticate(email, {
    rememberDevice: true,
    code_challenge: pkce.codeChallenge,
    code_challenge_method: 'S256',
  });
  let code: string;
  if (started.status === 'SUCCESS')
    code = started.code; // a remembered browser: no code mailed
  else {
    assert.equal(started.status, 'OTP_NEEDED', JSON.stringify(started));
    assert.equal((await client.verifyEmailOtp({ userid: email, otp: await service.latestOtp(email) })).status, 'SUCCESS');
    const device = await client.verifyDevice({ userid: email });
    assert.ok(device.status === 'SUCCESS' || device.status === 'DEVICE_REGISTERED', JSON.stringify(device));
    code = device.code;
  }
  const held = await complete(service, jar, {
    request: requestId,
    code,
    codeVerifier: pkce.codeVerifier,
    hold: true,
  } as never);
  assert.equal(held.status, 200, JSON.stringify(held.body));
  const user = await service.ctx.enabledUsers.findByEmail(email);
  assert.ok(user);
  return { email, userId: user.id, jar, requestId, rp, held: held.body as { held: true; passkeyOffer: boolean } };
}

/** POST to a /signin/… route as the hosted page does: JSON, its Origin, this browser's cookies. */
export function signInPost(service: TestService, jar: CookieJar, origin = service.url) {
  return async (path: string, body: unknown) => {
    const response = await fetch(service.url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin, cookie: jar.header() },
      body: JSON.stringify(body),
    });
    jar.store(response);
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
}

/** "Add a passkey" on a held sign-in: the options, the software authenticator's new credential, the registration. */
export async function addOfferedPasskey(service: TestService, jar: CookieJar, requestId: string, input: { synced?: boolean } = {}) {
  return createPasskey(
    signInPost(service, jar),
    { path: Paths.signInPasskeyOptions, body: { request: requestId } },
    { path: Paths.signInPasskey, body: { request: requestId } },
    { origin: service.url, synced: input.synced },
  );
}

/**
 * A new user whose second factor is a passkey made on the hosted page (the service's own origin
 * and rp id, so the account page can ask for it): the email code, then verifyDevice choosing the
 * passkey as the method and its enrollment with the software authenticator, which remembers the
 * device. `clientId` is an app whose pending request the page serves.
 */
export async function hostedUserWithPasskeyMfa(service: TestService, clientId: string, email = uniqueEmail('account-pk')) {
  const { post, d } = await hostedNewDevice(service, clientId, email, 'passkey');
  assert.equal(d.body?.status, 'FINALIZE_REGISTRATION_NEEDED', JSON.stringify(d.body));
  const sessionId = d.body.sessionId as string;
  const enrolled = await createPasskey(
    post,
    { path: Paths.passkeyMfaEnrollmentOptions, body: { userid: email, sessionId } },
    { path: Paths.passkeyMfaEnrollment, body: { userid: email, sessionId } },
    { origin: service.url },
  );
  assert.equal(enrolled.status, 200, JSON.stringify(enrolled.body));
  assert.equal(typeof enrolled.body.deviceId, 'string', JSON.stringify(enrolled.body));
  const user = await service.ctx.enabledUsers.findByEmail(email);
  assert.ok(user);
  return { email, userId: user.id, deviceId: enrolled.body.deviceId as string, credential: enrolled.credential };
}
