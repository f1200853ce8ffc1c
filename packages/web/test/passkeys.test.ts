/**
 * service-web/passkeys against a fake service and a fake CredentialsContainer: the statuses of
 * each way a WebAuthn ceremony ends in a browser (cancelled, no authenticator, not supported,
 * already registered), the service's refusal, and the JSON an assertion is sent as.
 * examples/demo/test/passkeys.test.ts runs the real thing in Chromium.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IDBFactory } from 'fake-indexeddb';
import { ServicePasskeys } from '../src/passkeys.ts';
import { BASE_URL, CLIENT_ROUTE, fakeFetch, ISSUER, type Route } from './helpers.ts';

const OPTIONS: Route = () => ({
  status: 200,
  body: {
    status: 'SUCCESS',
    message: '',
    options: { rpId: 'example.com', challenge: 'AQID', timeout: 300000, userVerification: 'required' },
  },
});

const bytes = (...values: number[]) => new Uint8Array(values).buffer;

/** A PublicKeyCredential as get() resolves it, with fixed bytes. */
const assertion = {
  id: 'BAU',
  rawId: bytes(4, 5),
  type: 'public-key',
  authenticatorAttachment: 'platform',
  response: { clientDataJSON: bytes(1), authenticatorData: bytes(2), signature: bytes(3), userHandle: bytes(255) },
};

async function passkeys(credentials: Partial<CredentialsContainer> | undefined, routes: Record<string, Route> = {}) {
  const service = fakeFetch({ ...CLIENT_ROUTE, 'POST /v1/passkeys/authentication/options': OPTIONS, ...routes });
  const client = new ServicePasskeys({
    fetch: service.fetch,
    indexedDB: new IDBFactory(),
    ...(credentials ? { credentials: credentials as CredentialsContainer } : {}),
  });
  assert.equal((await client.init('pk_test', BASE_URL)).status, 'INITIALIZED');
  return { client, calls: service.calls };
}

const throwing = (name: string) => ({
  get: async () => {
    throw new DOMException('refused', name);
  },
  create: async () => {
    throw new DOMException('refused', name);
  },
});

test('every operation before init returns NOT_INITIALIZED with success false', async () => {
  const client = new ServicePasskeys({ fetch: fakeFetch({}).fetch });
  const r = await client.signIn();
  assert.deepEqual([r.status, r.success], ['NOT_INITIALIZED', false]);
  assert.equal((await client.add({ userid: 'ann@example.com' })).status, 'NOT_INITIALIZED');
});

test('signIn: the assertion is sent as base64url JSON, and SUCCESS carries the code', async () => {
  const { client, calls } = await passkeys(
    { get: async () => assertion as unknown as Credential },
    {
      'POST /v1/passkeys/authentication': () => ({ status: 200, body: { status: 'SUCCESS', message: 'ok', success: true, code: 'ac_1' } }),
    },
  );
  const r = await client.signIn({ userid: 'Ann@Example.com' });
  assert.deepEqual(r, { status: 'SUCCESS', message: 'ok', success: true, code: 'ac_1', iss: ISSUER });
  const sent = calls.at(-1)?.body as any;
  assert.equal(sent.userid, 'ann@example.com');
  assert.deepEqual(sent.credential, {
    id: 'BAU',
    rawId: 'BAU',
    type: 'public-key',
    response: { clientDataJSON: 'AQ', authenticatorData: 'Ag', signature: 'Aw', userHandle: '_w' },
    authenticatorAttachment: 'platform',
    clientExtensionResults: {},
  });
});

test('signIn: MFA_REQUIRED carries the passkey`s user, whom a sign-in without an address did not name', async () => {
  const { client } = await passkeys(
    { get: async () => assertion as unknown as Credential },
    {
      'POST /v1/passkeys/authentication': () => ({
        status: 200,
        body: { status: 'MFA_REQUIRED', message: 'mfa', sessionId: 'ms_1', method: 'totp', userid: 'ann@example.com' },
      }),
    },
  );
  const r = await client.signIn();
  assert.deepEqual(r, { status: 'MFA_REQUIRED', message: 'mfa', sessionId: 'ms_1', method: 'totp', userid: 'ann@example.com' });
});

test('maps the browser’s refusals: cancelled, no authenticator, not allowed here', async () => {
  for (const [name, status] of [
    ['NotAllowedError', 'PASSKEY_CANCELLED'],
    ['AbortError', 'PASSKEY_CANCELLED'],
    ['NotSupportedError', 'NO_AUTHENTICATOR'],
    ['SecurityError', 'PASSKEY_NOT_SUPPORTED'],
  ] as const) {
    const { client } = await passkeys(throwing(name));
    const r = await client.signIn();
    assert.deepEqual([r.status, r.success], [status, false], name);
  }
});

test('PASSKEY_NOT_SUPPORTED without WebAuthn, before any request', async () => {
  const { client, calls } = await passkeys(undefined);
  const before = calls.length;
  assert.equal((await client.signIn()).status, 'PASSKEY_NOT_SUPPORTED');
  assert.equal(calls.length, before);
  assert.deepEqual(await client.support(), { passkeys: false, conditionalUi: false, platformAuthenticator: false });
});

test('the service’s refusal (401 ERR_PASSKEY_INVALID) is PASSKEY_REFUSED', async () => {
  const { client } = await passkeys(
    { get: async () => assertion as unknown as Credential },
    {
      'POST /v1/passkeys/authentication': () => ({ status: 401, body: { code: 'ERR_PASSKEY_INVALID', message: 'not accepted' } }),
    },
  );
  const r = await client.signIn();
  assert.deepEqual([r.status, r.message, r.success], ['PASSKEY_REFUSED', 'not accepted', false]);
});

test('add: DEVICE_KEY_UNAVAILABLE on a browser that is not signed in, INVALID_EMAIL for a bad address', async () => {
  const { client, calls } = await passkeys(throwing('InvalidStateError'));
  const before = calls.length;
  assert.equal((await client.add({ userid: 'ann@example.com' })).status, 'DEVICE_KEY_UNAVAILABLE');
  assert.equal((await client.add({ userid: 'not an address' })).status, 'INVALID_EMAIL');
  assert.equal(calls.length, before, 'no request');
});

const MFA_OPTIONS: Route = () => ({
  status: 200,
  body: {
    status: 'SUCCESS',
    message: '',
    options: {
      rpId: 'example.com',
      challenge: 'AQID',
      timeout: 300000,
      userVerification: 'required',
      allowCredentials: [{ type: 'public-key', id: 'BAU', transports: ['internal'] }],
    },
  },
});

test("verifyMfa: asks for the user's passkeys (allowCredentials), sends the assertion bound to the session, ends like the core verifyMfa", async () => {
  let asked: PublicKeyCredentialRequestOptions | undefined;
  const { client, calls } = await passkeys(
    {
      get: async (options?: CredentialRequestOptions) => {
        asked = options?.publicKey;
        return assertion as unknown as Credential;
      },
    },
    {
      'POST /v1/passkeys/mfa/options': MFA_OPTIONS,
      'POST /v1/passkeys/mfa/verify': () => ({
        status: 200,
        body: { status: 'SUCCESS', message: 'Verified.', success: true, code: 'ac_2' },
      }),
    },
  );
  const r = await client.verifyMfa({ userid: 'Ann@Example.com', sessionId: 'mfa_123456789', remember_me: true });
  assert.deepEqual(r, { status: 'SUCCESS', message: 'Verified.', success: true, code: 'ac_2', iss: ISSUER });
  assert.deepEqual(
    asked?.allowCredentials?.map((c) => [new Uint8Array(c.id as ArrayBuffer).join(','), c.transports]),
    [['4,5', ['internal']]],
  );
  const sent = calls.at(-1)?.body as any;
  assert.deepEqual([sent.userid, sent.sessionId, sent.rememberMe, sent.credential.id], ['ann@example.com', 'mfa_123456789', true, 'BAU']);
  assert.deepEqual(Object.keys(sent.devicePublicKey ?? {}).sort(), ['crv', 'kty', 'x', 'y'], 'a device key of its own, public half only');
});

test('verifyMfa: a refused passkey is PASSKEY_REFUSED with the attempts left; a bad input sends nothing', async () => {
  const { client, calls } = await passkeys(
    { get: async () => assertion as unknown as Credential },
    {
      'POST /v1/passkeys/mfa/options': MFA_OPTIONS,
      'POST /v1/passkeys/mfa/verify': () => ({
        status: 401,
        body: { code: 'ERR_PASSKEY_INVALID', message: 'not accepted', attemptsRemaining: 4 },
      }),
    },
  );
  const r = await client.verifyMfa({ userid: 'ann@example.com', sessionId: 'mfa_123456789' });
  assert.deepEqual([r.status, r.success, (r as { attemptsRemaining?: number }).attemptsRemaining], ['PASSKEY_REFUSED', false, 4]);
  const before = calls.length;
  assert.equal((await client.verifyMfa({ userid: 'nope', sessionId: 'mfa_1' })).status, 'INVALID_EMAIL');
  assert.equal((await client.verifyMfa({ userid: 'ann@example.com', sessionId: '' })).status, 'INVALID_REQUEST');
  assert.equal(calls.length, before, 'no request');
});

test('enrollMfa: creates the passkey for the session and returns the code and the recovery codes; a new device keeps its key', async () => {
  const indexedDB = new IDBFactory();
  const service = fakeFetch({
    ...CLIENT_ROUTE,
    'POST /v1/passkeys/mfa/enrollment/options': () => ({
      status: 200,
      body: {
        status: 'SUCCESS',
        message: '',
        options: {
          rp: { id: 'example.com', name: 'App' },
          user: { id: 'AQ', name: 'ann@example.com', displayName: 'ann@example.com' },
          challenge: 'AQID',
          pubKeyCredParams: [{ type: 'public-key', alg: -7 }],
          timeout: 300000,
          excludeCredentials: [],
          authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
          attestation: 'none',
        },
      },
    }),
    'POST /v1/passkeys/mfa/enrollment': () => ({
      status: 200,
      body: { status: 'SUCCESS', message: 'ok', success: true, code: 'ac_3', deviceId: 'dev_new', recoveryCodes: ['AAAAA-BBBBB'] },
    }),
  });
  const attestation = {
    id: 'BAU',
    rawId: bytes(4, 5),
    type: 'public-key',
    response: { clientDataJSON: bytes(1), attestationObject: bytes(6), getTransports: () => ['internal'] },
  };
  const client = new ServicePasskeys({
    fetch: service.fetch,
    indexedDB,
    credentials: { create: async () => attestation as unknown as Credential } as unknown as CredentialsContainer,
  });
  await client.init('pk_test', BASE_URL);
  const r = await client.enrollMfa({ userid: 'ann@example.com', sessionId: 'mfa_123456789' });
  assert.deepEqual(r, {
    status: 'SUCCESS',
    message: 'ok',
    success: true,
    code: 'ac_3',
    iss: ISSUER,
    deviceId: 'dev_new',
    recoveryCodes: ['AAAAA-BBBBB'],
    deviceRemembered: true,
  });
  const sent = service.calls.at(-1)?.body as any;
  assert.deepEqual(sent.credential.response, { clientDataJSON: 'AQ', attestationObject: 'Bg', transports: ['internal'] });
});
