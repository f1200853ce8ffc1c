import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IDBFactory } from 'fake-indexeddb';
import { ServiceClient } from '../src/client.ts';
import { createDeviceStore, deviceRecordKey } from '../src/device-store.ts';
import { BASE_URL, CLIENT_ROUTE, fakeFetch, fakeService, ISSUER, type Route, TEST_OTP, TOTP_SECRET } from './helpers.ts';

const EMAIL = 'ann@example.com';
const RECORD_KEY = deviceRecordKey(BASE_URL, 'client_1', EMAIL);

async function newClient(service: { fetch: typeof fetch }, indexedDB?: IDBFactory): Promise<ServiceClient> {
  const client = new ServiceClient({ fetch: service.fetch, indexedDB });
  assert.equal((await client.init('pk_test', BASE_URL)).status, 'INITIALIZED');
  return client;
}

/** authenticate (OTP_NEEDED) and verifyEmailOtp: the state in which verifyDevice is called. */
async function emailVerified(client: ServiceClient, rememberDevice: boolean): Promise<void> {
  assert.equal((await client.authenticate(EMAIL, { rememberDevice })).status, 'OTP_NEEDED');
  assert.equal((await client.verifyEmailOtp({ userid: EMAIL, otp: TEST_OTP })).status, 'SUCCESS');
}

test('TOTP enrollment: FINALIZE with otpauthUri, verifyMfa stores the device key, later logins use it', async () => {
  const service = fakeService({ mfaPolicy: 'required' });
  const indexedDB = new IDBFactory();
  const store = createDeviceStore(indexedDB, 1000);
  const client = await newClient(service, indexedDB);
  await emailVerified(client, true);

  assert.deepEqual(await client.verifyDevice({ userid: EMAIL }), {
    status: 'MFA_ENROLLMENT_NEEDED',
    message: 'Choose an MFA method',
    methods: ['email', 'sms', 'totp'],
  });

  const finalize = await client.verifyDevice({ userid: EMAIL, mfaMethod: 'totp' });
  assert.equal(finalize.status, 'FINALIZE_REGISTRATION_NEEDED');
  assert.ok(finalize.status === 'FINALIZE_REGISTRATION_NEEDED');
  assert.deepEqual(finalize, {
    status: 'FINALIZE_REGISTRATION_NEEDED',
    message: 'Confirm your method',
    method: 'totp',
    sessionId: finalize.sessionId,
    otpauthUri: `otpauth://totp/Demo:${EMAIL}?secret=${TOTP_SECRET}&issuer=Demo`,
    secret: TOTP_SECRET,
  });
  const enrollCall = service.calls.at(-1)!;
  assert.equal(enrollCall.body?.mfaMethod, 'totp');
  assert.equal(typeof (enrollCall.body?.devicePublicKey as { x?: unknown })?.x, 'string', 'the device key is sent with the enrollment');
  assert.equal(await store.get(RECORD_KEY), undefined, 'nothing is stored before the MFA step succeeds');

  const done = await client.verifyMfa({ userid: EMAIL, otp: TEST_OTP });
  assert.equal(done.status, 'SUCCESS');
  assert.ok(done.status === 'SUCCESS' && done.success && done.code.startsWith('code_'));
  assert.equal(done.deviceRemembered, true);
  assert.deepEqual(service.calls.at(-1)?.body, { userid: EMAIL, sessionId: finalize.sessionId, otp: TEST_OTP });
  const record = await store.get(RECORD_KEY);
  assert.ok(record && service.devices.has(record.deviceId));
  assert.equal(record.keyPair.privateKey.extractable, false);
  assert.deepEqual(service.users.get(EMAIL), { method: 'totp', phoneNumber: undefined });

  // The session is forgotten after SUCCESS.
  const calls = service.calls.length;
  assert.equal((await client.verifyMfa({ userid: EMAIL, otp: TEST_OTP })).status, 'SESSION_EXPIRED');
  assert.equal(service.calls.length, calls);

  // A fresh page, same IndexedDB: the device proves itself (no email OTP); the user now has MFA.
  const page = await newClient(service, indexedDB);
  const next = await page.authenticate(EMAIL);
  assert.equal(typeof service.calls.at(-1)?.body?.deviceProof, 'string');
  assert.equal(next.status, 'MFA_REQUIRED');
  assert.ok(next.status === 'MFA_REQUIRED' && next.method === 'totp');
});

test('MFA_REQUIRED from authenticate: initiateMfa, then verifyMfa with remember_me sends rememberMe and the sessionId', async () => {
  const service = fakeService();
  const indexedDB = new IDBFactory();
  const client = await newClient(service, indexedDB);
  await emailVerified(client, true);
  assert.equal((await client.verifyDevice({ userid: EMAIL })).status, 'SUCCESS');
  service.users.set(EMAIL, { method: 'email' });

  const auth = await client.authenticate(EMAIL);
  assert.equal(auth.status, 'MFA_REQUIRED');
  assert.ok(auth.status === 'MFA_REQUIRED');
  assert.deepEqual(auth, { status: 'MFA_REQUIRED', message: 'MFA needed', sessionId: auth.sessionId, method: 'email' });

  assert.deepEqual(await client.initiateMfa({ userid: EMAIL, sessionId: auth.sessionId }), {
    status: 'MFA_INITIATED',
    message: 'Enter your code',
    method: 'email',
  });
  assert.deepEqual(service.calls.at(-1)?.body, { userid: EMAIL, sessionId: auth.sessionId });

  const wrong = await client.verifyMfa({ userid: EMAIL, otp: '000000', remember_me: true });
  assert.deepEqual(wrong, { status: 'INVALID_OTP', message: 'Wrong code', attemptsRemaining: 2, success: false });

  const done = await client.verifyMfa({ userid: EMAIL, otp: TEST_OTP, remember_me: true });
  assert.equal(done.status, 'SUCCESS');
  assert.deepEqual(service.calls.at(-1)?.body, { userid: EMAIL, sessionId: auth.sessionId, otp: TEST_OTP, rememberMe: true });
  assert.ok(done.status === 'SUCCESS' && !('deviceRemembered' in done), 'a plain MFA login reports no device registration');

  // rememberMe: the next login on this device skips MFA.
  assert.equal((await client.authenticate(EMAIL)).status, 'SUCCESS');
});

test('verifyMfa before any session is SESSION_EXPIRED without a request; an explicit sessionId is used', async () => {
  const service = fakeService();
  const client = await newClient(service);
  const calls = service.calls.length;
  assert.deepEqual(await client.verifyMfa({ userid: EMAIL, otp: TEST_OTP }), {
    status: 'SESSION_EXPIRED',
    message: 'No login in progress for this user; call authenticate() again',
    success: false,
  });
  assert.equal(service.calls.length, calls);

  // Another client (a reloaded page) can finish with the sessionId it was shown.
  service.users.set(EMAIL, { method: 'totp' });
  const first = await newClient(service);
  await emailVerified(first, false);
  const mfa = await first.verifyDevice({ userid: EMAIL });
  assert.ok(mfa.status === 'MFA_REQUIRED');
  const reloaded = await newClient(service);
  const done = await reloaded.verifyMfa({ userid: EMAIL, otp: TEST_OTP, sessionId: mfa.sessionId });
  assert.equal(done.status, 'SUCCESS');
  assert.equal(service.calls.at(-1)?.body?.sessionId, mfa.sessionId);
  assert.equal((await reloaded.verifyMfa({ userid: EMAIL, otp: TEST_OTP, sessionId: '' })).status, 'INVALID_REQUEST');
});

test('new device of a user with MFA: verifyDevice MFA_REQUIRED keeps the key in memory until verifyMfa succeeds', async () => {
  const service = fakeService();
  service.users.set(EMAIL, { method: 'sms', phoneNumber: '+14155550123' });
  const indexedDB = new IDBFactory();
  const store = createDeviceStore(indexedDB, 1000);
  const client = await newClient(service, indexedDB);
  await emailVerified(client, true);

  const mfa = await client.verifyDevice({ userid: EMAIL });
  assert.equal(mfa.status, 'MFA_REQUIRED');
  assert.ok(mfa.status === 'MFA_REQUIRED');
  assert.deepEqual(mfa, { status: 'MFA_REQUIRED', message: 'MFA needed', sessionId: mfa.sessionId, method: 'sms' });
  assert.equal(await store.get(RECORD_KEY), undefined);

  const started = await client.initiateMfa({ userid: EMAIL, sessionId: mfa.sessionId });
  assert.deepEqual(started, { status: 'MFA_INITIATED', message: 'Enter your code', method: 'sms' });
  assert.equal(await store.get(RECORD_KEY), undefined);

  const done = await client.verifyMfa({ userid: EMAIL, otp: TEST_OTP });
  assert.ok(done.status === 'SUCCESS' && done.deviceRemembered === true);
  const record = await store.get(RECORD_KEY);
  assert.ok(record && service.devices.has(record.deviceId));
});

test('MFA_ENROLLMENT_NEEDED passes through; verifyDevice with mfaMethod sms sends the E.164 phone number', async () => {
  const service = fakeService({ mfaPolicy: 'required' });
  const client = await newClient(service);
  await emailVerified(client, false);

  const offer = await client.verifyDevice({ userid: EMAIL });
  assert.ok(offer.status === 'MFA_ENROLLMENT_NEEDED');
  assert.deepEqual(offer.methods, ['email', 'sms', 'totp']);

  const finalize = await client.verifyDevice({ userid: EMAIL, mfaMethod: 'sms', phoneNumber: '+1 (415) 555-0123' });
  assert.equal(finalize.status, 'FINALIZE_REGISTRATION_NEEDED');
  assert.ok(finalize.status === 'FINALIZE_REGISTRATION_NEEDED');
  assert.deepEqual(finalize, {
    status: 'FINALIZE_REGISTRATION_NEEDED',
    message: 'Confirm your method',
    method: 'sms',
    sessionId: finalize.sessionId,
  });
  assert.deepEqual(service.calls.at(-1)?.body, {
    userid: EMAIL,
    deviceToken: service.calls.at(-1)?.body?.deviceToken,
    mfaMethod: 'sms',
    phoneNumber: '+14155550123',
  });

  const done = await client.verifyMfa({ userid: EMAIL, otp: TEST_OTP });
  assert.equal(done.status, 'SUCCESS');
  assert.ok(done.status === 'SUCCESS' && done.deviceRemembered === false, 'no rememberDevice, nothing stored');
  assert.deepEqual(service.users.get(EMAIL), { method: 'sms', phoneNumber: '+14155550123' });
});

test('phone numbers are checked locally (E.164 after removing separators); a bad one sends nothing', async () => {
  const service = fakeService({ mfaPolicy: 'required' });
  const client = await newClient(service);
  await emailVerified(client, false);
  const calls = service.calls.length;
  const refused: Array<{ mfaMethod?: 'sms' | 'totp'; phoneNumber?: unknown }> = [
    { mfaMethod: 'sms' },
    { mfaMethod: 'sms', phoneNumber: '4155550123' },
    { mfaMethod: 'sms', phoneNumber: '+0 415 555 0123' },
    { mfaMethod: 'sms', phoneNumber: '+123456' },
    { mfaMethod: 'sms', phoneNumber: '+1234567890123456' },
    { mfaMethod: 'sms', phoneNumber: '+1 415 555 0123 ext 9' },
    { mfaMethod: 'sms', phoneNumber: '' },
    { mfaMethod: 'sms', phoneNumber: 14155550123 },
    { mfaMethod: 'totp', phoneNumber: '+14155550123' },
    { phoneNumber: '+14155550123' },
  ];
  for (const extra of refused) {
    const result = await client.verifyDevice({ userid: EMAIL, ...extra } as never);
    assert.equal(result.status, 'INVALID_REQUEST', JSON.stringify(extra));
  }
  assert.equal(service.calls.length, calls);

  for (const [typed, sent] of [
    ['+44 20 7946 0958', '+442079460958'],
    ['+1.415.555.0123', '+14155550123'],
    ['+1234567', '+1234567'],
    ['+123456789012345', '+123456789012345'],
  ]) {
    const result = await client.verifyDevice({ userid: EMAIL, mfaMethod: 'sms', phoneNumber: typed });
    assert.equal(result.status, 'FINALIZE_REGISTRATION_NEEDED', typed);
    assert.equal(service.calls.at(-1)?.body?.phoneNumber, sent);
  }
});

/** A service whose MFA endpoints answer from a script, to check the mapping of each answer. */
function scripted(routes: Record<string, Route>) {
  return fakeFetch({
    ...CLIENT_ROUTE,
    'POST /v1/authenticate': () => ({
      status: 200,
      body: { status: 'MFA_REQUIRED', message: 'MFA needed', sessionId: 'ms_1', method: 'sms' },
    }),
    ...routes,
  });
}

const errorAnswer =
  (status: number, code: string, extra: Record<string, unknown> = {}): Route =>
  () => ({
    status,
    body: { code, message: code, ...extra },
  });

test('verifyMfa and initiateMfa map the service error codes', async () => {
  const cases: Array<[Route, Record<string, unknown>]> = [
    [errorAnswer(400, 'ERR_OTP_INVALID', { attemptsRemaining: 1 }), { status: 'INVALID_OTP', attemptsRemaining: 1 }],
    [errorAnswer(400, 'ERR_OTP_EXPIRED'), { status: 'OTP_EXPIRED' }],
    [errorAnswer(409, 'ERR_SESSION_STEP'), { status: 'INVALID_REQUEST' }],
    [errorAnswer(400, 'ERR_SESSION_INVALID'), { status: 'SESSION_EXPIRED' }],
    [errorAnswer(503, 'ERR_DELIVERY_FAILED'), { status: 'SERVICE_ERROR' }],
    [errorAnswer(429, 'ERR_RATE_LIMITED', { retryAfter: 30 }), { status: 'RATE_LIMITED', retryAfter: 30 }],
    [errorAnswer(423, 'ERR_ACCOUNT_LOCKED', { retryAfter: 900 }), { status: 'ACCOUNT_LOCKED', retryAfter: 900 }],
  ];
  for (const [route, expected] of cases) {
    const service = scripted({ 'POST /v1/mfa/verify': route, 'POST /v1/mfa/initiate': route });
    const client = await newClient(service);
    await client.authenticate(EMAIL);
    const { message: _m, ...mfa } = await client.verifyMfa({ userid: EMAIL, otp: TEST_OTP });
    assert.deepEqual(mfa, { ...expected, success: false }, String(expected.status));
    await client.authenticate(EMAIL);
    const { message: _n, ...initiated } = await client.initiateMfa({ userid: EMAIL, sessionId: 'ms_1' });
    assert.deepEqual(initiated, expected, String(expected.status));
  }
});

test('ERR_SESSION_INVALID forgets the session: the next verifyMfa sends nothing', async () => {
  const service = scripted({ 'POST /v1/mfa/verify': errorAnswer(400, 'ERR_SESSION_INVALID') });
  const client = await newClient(service);
  await client.authenticate(EMAIL);
  assert.equal((await client.verifyMfa({ userid: EMAIL, otp: TEST_OTP })).status, 'SESSION_EXPIRED');
  const calls = service.calls.length;
  assert.equal((await client.verifyMfa({ userid: EMAIL, otp: TEST_OTP })).status, 'SESSION_EXPIRED');
  assert.equal(service.calls.length, calls);
});

test('a device registration finished by verifyMfa without a deviceId is reported as not remembered', async () => {
  const service = fakeFetch({
    ...CLIENT_ROUTE,
    'POST /v1/authenticate': () => ({ status: 200, body: { status: 'OTP_NEEDED', message: 'sent', deviceToken: 'dt_1' } }),
    'POST /v1/email-otp/verify': () => ({ status: 200, body: { status: 'SUCCESS', message: 'ok' } }),
    'POST /v1/devices': () => ({ status: 200, body: { status: 'MFA_REQUIRED', message: 'MFA needed', sessionId: 'ms_1', method: 'totp' } }),
    'POST /v1/mfa/verify': () => ({ status: 200, body: { status: 'SUCCESS', message: 'Verified.', success: true, code: 'code_1' } }),
  });
  const indexedDB = new IDBFactory();
  const client = await newClient(service, indexedDB);
  await emailVerified(client, true);
  assert.equal((await client.verifyDevice({ userid: EMAIL })).status, 'MFA_REQUIRED');
  assert.deepEqual(await client.verifyMfa({ userid: EMAIL, otp: TEST_OTP }), {
    status: 'SUCCESS',
    message: 'Verified. This device could not be remembered: the service registered no device key.',
    success: true,
    code: 'code_1',
    iss: ISSUER,
    deviceRemembered: false,
  });
  assert.equal(await createDeviceStore(indexedDB, 1000).get(RECORD_KEY), undefined);
});

test('verifyDevice and initiateMfa answers missing their required fields are SERVICE_ERROR', async () => {
  const answers: Array<Record<string, unknown>> = [
    { status: 'MFA_ENROLLMENT_NEEDED', message: 'pick', methods: 'totp' },
    { status: 'MFA_ENROLLMENT_NEEDED', message: 'pick', methods: ['fax'] },
    { status: 'FINALIZE_REGISTRATION_NEEDED', message: 'confirm', method: 'totp' },
    { status: 'MFA_REQUIRED', message: 'mfa', sessionId: 'ms_1', method: 'carrier-pigeon' },
    { status: 'SUCCESS', message: 'no code' },
  ];
  for (const body of answers) {
    const service = fakeFetch({
      ...CLIENT_ROUTE,
      'POST /v1/authenticate': () => ({ status: 200, body: { status: 'OTP_NEEDED', message: 'sent', deviceToken: 'dt_1' } }),
      'POST /v1/email-otp/verify': () => ({ status: 200, body: { status: 'SUCCESS', message: 'ok' } }),
      'POST /v1/devices': () => ({ status: 200, body }),
      'POST /v1/mfa/initiate': () => ({ status: 200, body: { status: 'MFA_INITIATED', message: 'sent' } }),
    });
    const client = await newClient(service);
    await emailVerified(client, false);
    assert.equal((await client.verifyDevice({ userid: EMAIL })).status, 'SERVICE_ERROR', JSON.stringify(body));
    assert.equal((await client.initiateMfa({ userid: EMAIL, sessionId: 'ms_1' })).status, 'SERVICE_ERROR');
  }
});
