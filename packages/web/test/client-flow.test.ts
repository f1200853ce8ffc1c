import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IDBFactory } from 'fake-indexeddb';
import { ServiceClient } from '../src/client.ts';
import { createDeviceStore, deviceRecordKey } from '../src/device-store.ts';
import { BASE_URL, CLIENT_ROUTE, fakeFetch, fakeService, ISSUER } from './helpers.ts';

const EMAIL = 'ann@example.com';

async function newDeviceLogin(client: ServiceClient, rememberDevice: boolean) {
  const auth = await client.authenticate(EMAIL, { rememberDevice });
  assert.equal(auth.status, 'OTP_NEEDED');
  assert.equal((await client.verifyEmailOtp({ userid: EMAIL, otp: '123456' })).status, 'SUCCESS');
  return client.verifyDevice({ userid: EMAIL });
}

test('new device, remembered: OTP once, then the device key signs the next logins', async () => {
  const service = fakeService();
  const indexedDB = new IDBFactory();
  const client = new ServiceClient({ fetch: service.fetch, indexedDB });
  await client.init('pk_test', BASE_URL);

  const first = await client.authenticate(' Ann@Example.com ', { rememberDevice: true });
  assert.deepEqual(first, { status: 'OTP_NEEDED', message: 'Code sent', deviceToken: 'dt_1', code: '123456' });
  const authCall = service.calls.at(-1)!;
  assert.deepEqual(authCall.body, { userid: EMAIL, cryptoVersion: 'v1', rememberDevice: true });
  assert.equal(authCall.headers['x-service-key'], 'pk_test');

  assert.deepEqual(await client.verifyEmailOtp({ userid: EMAIL, otp: '654321' }), {
    status: 'INVALID_OTP',
    message: 'Wrong code',
    attemptsRemaining: 4,
  });
  assert.deepEqual(await client.verifyEmailOtp({ userid: 'ANN@example.com', otp: '123456' }), {
    status: 'SUCCESS',
    message: 'Email verified',
    mfaEnrolled: false,
  });
  assert.deepEqual(service.calls.at(-1)!.body, { userid: EMAIL, deviceToken: 'dt_1', otp: '123456' });

  const device = await client.verifyDevice({ userid: EMAIL });
  assert.equal(device.status, 'SUCCESS');
  assert.ok('code' in device && device.code?.startsWith('code_'));
  assert.ok('deviceRemembered' in device && device.deviceRemembered);
  assert.equal('iss' in device && device.iss, ISSUER);
  const registration = service.calls.at(-1)!;
  const jwk = registration.body?.devicePublicKey as Record<string, string>;
  assert.deepEqual(Object.keys(jwk).sort(), ['crv', 'kty', 'x', 'y'], 'only public members are sent');
  assert.equal(registration.body?.deviceToken, 'dt_1');

  const record = await createDeviceStore(indexedDB, 1000).get(deviceRecordKey(BASE_URL, 'client_1', EMAIL));
  assert.equal(record?.keyPair.privateKey.extractable, false);
  assert.ok(record && service.devices.has(record.deviceId));

  // The pending login is gone once the device step is done.
  assert.equal((await client.verifyDevice({ userid: EMAIL })).status, 'SESSION_EXPIRED');

  // Next login, even from a fresh page (new client, same IndexedDB): no OTP.
  const again = new ServiceClient({ fetch: service.fetch, indexedDB });
  await again.init('pk_test', BASE_URL);
  const second = await again.authenticate(EMAIL);
  assert.equal(second.status, 'SUCCESS');
  assert.ok(second.status === 'SUCCESS' && second.success === true && second.code.startsWith('code_'));
  // RFC 9207: the issuer GET /v1/client named, for the page to pass on with the code.
  assert.equal(second.status === 'SUCCESS' && second.iss, ISSUER);
  const [challengeCall, proofCall] = service.calls.slice(-2);
  assert.equal(challengeCall?.path, '/v1/device-challenges');
  assert.equal(typeof proofCall?.body?.deviceProof, 'string');
});

test('another browser (its own IndexedDB) still needs the email OTP', async () => {
  const service = fakeService();
  const laptop = new ServiceClient({ fetch: service.fetch, indexedDB: new IDBFactory() });
  await laptop.init('pk_test', BASE_URL);
  assert.equal((await newDeviceLogin(laptop, true)).status, 'SUCCESS');

  const phone = new ServiceClient({ fetch: service.fetch, indexedDB: new IDBFactory() });
  await phone.init('pk_test', BASE_URL);
  assert.equal((await phone.authenticate(EMAIL)).status, 'OTP_NEEDED');
  assert.equal(service.calls.at(-1)?.body?.deviceProof, undefined);
});

test('a device removed on the service falls back to the OTP and is replaced on re-registration', async () => {
  const service = fakeService();
  const indexedDB = new IDBFactory();
  const client = new ServiceClient({ fetch: service.fetch, indexedDB });
  await client.init('pk_test', BASE_URL);
  await newDeviceLogin(client, true);
  const store = createDeviceStore(indexedDB, 1000);
  const key = deviceRecordKey(BASE_URL, 'client_1', EMAIL);
  const old = await store.get(key);
  service.devices.clear();

  const result = await newDeviceLogin(client, true);
  assert.equal(result.status, 'SUCCESS');
  const replaced = await store.get(key);
  assert.ok(replaced && old && replaced.deviceId !== old.deviceId);
  assert.equal((await client.authenticate(EMAIL)).status, 'SUCCESS');
});

test('a refused stored key is dropped when the user logs in without remembering', async () => {
  const service = fakeService();
  const indexedDB = new IDBFactory();
  const client = new ServiceClient({ fetch: service.fetch, indexedDB });
  await client.init('pk_test', BASE_URL);
  await newDeviceLogin(client, true);
  service.devices.clear();
  assert.equal((await newDeviceLogin(client, false)).status, 'SUCCESS');
  assert.equal(await createDeviceStore(indexedDB, 1000).get(deviceRecordKey(BASE_URL, 'client_1', EMAIL)), undefined);
});

test('without IndexedDB the login still works; the device is just not remembered', async () => {
  const service = fakeService();
  const client = new ServiceClient({ fetch: service.fetch }); // Node has no global indexedDB
  await client.init('pk_test', BASE_URL);
  const result = await newDeviceLogin(client, true);
  assert.equal(result.status, 'SUCCESS');
  assert.ok('code' in result && typeof result.code === 'string');
  assert.ok('deviceRemembered' in result && result.deviceRemembered === false);
  assert.match(result.message, /could not be remembered/);
  assert.equal((await client.authenticate(EMAIL)).status, 'OTP_NEEDED');
});

test('a broken IndexedDB does not block the login', async () => {
  const service = fakeService();
  const broken = {
    open: () => {
      throw new Error('SecurityError');
    },
  } as unknown as IDBFactory;
  const client = new ServiceClient({ fetch: service.fetch, indexedDB: broken });
  await client.init('pk_test', BASE_URL);
  const result = await newDeviceLogin(client, true);
  assert.equal(result.status, 'SUCCESS');
  assert.match(result.message, /could not be remembered: SecurityError/);
});

test('without rememberDevice no key is made or sent', async () => {
  const service = fakeService();
  const indexedDB = new IDBFactory();
  const client = new ServiceClient({ fetch: service.fetch, indexedDB });
  await client.init('pk_test', BASE_URL);
  const result = await newDeviceLogin(client, false);
  assert.deepEqual(result, {
    status: 'SUCCESS',
    message: 'Signed in',
    code: result.status === 'SUCCESS' ? result.code : '',
    iss: ISSUER,
    deviceRemembered: false,
  });
  assert.equal(service.calls.at(-1)?.body?.devicePublicKey, undefined);
  assert.equal(await createDeviceStore(indexedDB, 1000).get(deviceRecordKey(BASE_URL, 'client_1', EMAIL)), undefined);
});

test('PKCE parameters are forwarded as codeChallenge and codeChallengeMethod', async () => {
  const service = fakeService();
  const client = new ServiceClient({ fetch: service.fetch });
  await client.init('pk_test', BASE_URL);
  const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
  await client.authenticate(EMAIL, { code_challenge: challenge, code_challenge_method: 'S256' });
  assert.deepEqual(service.calls.at(-1)?.body, {
    userid: EMAIL,
    cryptoVersion: 'v1',
    codeChallenge: challenge,
    codeChallengeMethod: 'S256',
  });
  await client.authenticate(EMAIL, { code_challenge: challenge });
  assert.equal(service.calls.at(-1)?.body?.codeChallengeMethod, 'S256');
});

test('MFA: MFA_REQUIRED, initiateMfa, verifyMfa', async () => {
  const service = fakeFetch({
    ...CLIENT_ROUTE,
    'POST /v1/authenticate': () => ({
      status: 200,
      body: { status: 'MFA_REQUIRED', message: 'MFA needed', sessionId: 'ms_1', method: 'totp' },
    }),
    'POST /v1/mfa/initiate': () => ({ status: 200, body: { status: 'MFA_INITIATED', message: 'Enter your code', method: 'totp' } }),
    'POST /v1/mfa/verify': () => ({ status: 200, body: { status: 'SUCCESS', message: 'Verified', success: true, code: 'code_mfa' } }),
  });
  const client = new ServiceClient({ fetch: service.fetch });
  await client.init('pk_test', BASE_URL);
  assert.deepEqual(await client.authenticate(EMAIL), { status: 'MFA_REQUIRED', message: 'MFA needed', sessionId: 'ms_1', method: 'totp' });
  assert.deepEqual(await client.initiateMfa({ userid: EMAIL, sessionId: 'ms_1' }), {
    status: 'MFA_INITIATED',
    message: 'Enter your code',
    method: 'totp',
  });
  assert.deepEqual(service.calls.at(-1)?.body, { userid: EMAIL, sessionId: 'ms_1' });
  assert.deepEqual(await client.verifyMfa({ userid: EMAIL, otp: '123456', remember_me: true }), {
    status: 'SUCCESS',
    message: 'Verified',
    success: true,
    code: 'code_mfa',
    iss: ISSUER,
  });
  assert.deepEqual(service.calls.at(-1)?.body, { userid: EMAIL, sessionId: 'ms_1', otp: '123456', rememberMe: true });
});

test('a network failure while fetching the challenge is reported, not hidden', async () => {
  const service = fakeService();
  const indexedDB = new IDBFactory();
  const client = new ServiceClient({ fetch: service.fetch, indexedDB });
  await client.init('pk_test', BASE_URL);
  await newDeviceLogin(client, true);
  const offline = new ServiceClient({
    fetch: (async (input: string | URL | Request, init?: RequestInit) => {
      if (String(input).endsWith('/v1/device-challenges')) throw new TypeError('fetch failed');
      return service.fetch(input, init);
    }) as typeof fetch,
    indexedDB,
  });
  await offline.init('pk_test', BASE_URL);
  assert.equal((await offline.authenticate(EMAIL)).status, 'NETWORK_ERROR');
});
