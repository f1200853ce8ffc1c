/**
 * ServiceDelegationClient against a fake delegation endpoint: the round trip of each
 * operation, what goes on the wire, every answer that must not be trusted, and every
 * misconfiguration refused at construction.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { DELEGATION_ENV } from '../src/delegation/index.js';
import {
  DelegationConfigError,
  DelegationRequestError,
  DelegationResponseError,
  MfaMethod,
  ServiceDelegationClient,
  ServiceOAuthError,
} from '../src/index.js';
import { FIXED, privatePem, publicPem, randomPair, SP_ID } from './delegation-fixtures.js';
import { type FakeDelegationService, sealResponse, startFakeDelegationService } from './fake-delegation-service.js';

const API_KEY = 'sk_test_delegation';
let fake: FakeDelegationService;

before(async () => {
  fake = await startFakeDelegationService();
});
after(() => fake.close());
beforeEach(() => {
  fake.requests.length = 0;
  fake.reply = undefined;
});

function env(overrides: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  return {
    SERVICE_BASE_URL: `${fake.url}/`,
    SERVICE_API_KEY: API_KEY,
    SP_ED25519_PRIVATE_KEY_PEM: FIXED.spEd25519.privatePem,
    SP_X25519_PRIVATE_KEY_PEM: FIXED.spX25519.privatePem,
    IDP_ED25519_PUBLIC_KEY_PEM: FIXED.idpEd25519.publicPem,
    IDP_X25519_PUBLIC_KEY_PEM: FIXED.idpX25519.publicPem,
    OAUTH_CLIENT_ID: SP_ID,
    ...overrides,
  };
}

function client(): ServiceDelegationClient {
  return ServiceDelegationClient.fromEnv(env());
}

async function assertResponseRefused(promise: Promise<unknown>, reason?: string) {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof DelegationResponseError, String(err));
    assert.equal(err.code, 'ERR_DELEGATION_RESPONSE_INVALID');
    if (reason !== undefined) assert.equal(err.reason, reason, err.message);
    return true;
  });
}

describe('ServiceDelegationClient: round trips', () => {
  it('initiateMfaChange (sms) sends a sealed, addressed request and returns the sealed result', async () => {
    const result = await client().initiateMfaChange({ userid: 'ann@example.com', mfaMethod: MfaMethod.SMS, phoneNumber: '+15555550100' });
    assert.deepEqual(result, { session_id: 'mcs_1', status: 'otp_sent', message: 'code sent by sms' });

    assert.equal(fake.requests.length, 1);
    const [received] = fake.requests;
    assert.ok(received);
    assert.equal(received.method, 'POST');
    assert.equal(received.path, '/v1/delegation');
    assert.equal(received.headers['content-type'], 'application/jose');
    assert.equal(received.headers.accept, 'application/jose');
    assert.equal(received.headers.authorization, `Bearer ${API_KEY}`);
    const { claims } = received;
    assert.equal(claims.aud, fake.url, 'audience is the base URL without its trailing slash');
    assert.equal(claims.iss, SP_ID);
    assert.equal(claims.op, 'initiate_mfa_change');
    assert.deepEqual(claims.body, { userid: 'ann@example.com', mfaMethod: 'sms', phoneNumber: '+15555550100' });
    assert.equal(claims.exp - claims.iat, 120);
    assert.ok(Math.abs(claims.iat - Date.now() / 1000) < 5);
    assert.match(claims.jti, /^[A-Za-z0-9_-]{22}$/);
  });

  it('initiateMfaChange (totp) returns the otpauth URI and secret; phoneNumber is not sent', async () => {
    const result = await client().initiateMfaChange({ userid: 'ann@example.com', mfaMethod: 'totp', phoneNumber: '+15555550100' });
    assert.equal(result.status, 'totp_pending');
    assert.match(result.otpauth_uri ?? '', /^otpauth:\/\/totp\//);
    assert.equal(result.secret, 'JBSWY3DPEHPK3PXP');
    assert.deepEqual(fake.requests[0]?.claims.body, { userid: 'ann@example.com', mfaMethod: 'totp' });
  });

  it('verifyMfaChange', async () => {
    const c = client();
    assert.deepEqual(await c.verifyMfaChange({ userid: 'ann@example.com', sessionId: 'mcs_1', otp: '123456' }), {
      status: 'success',
      message: 'MFA method changed',
    });
    assert.deepEqual(await c.verifyMfaChange({ userid: 'ann@example.com', sessionId: 'mcs_1', otp: '654321' }), { status: 'failed' });
    assert.deepEqual(fake.requests[0]?.claims.body, { userid: 'ann@example.com', sessionId: 'mcs_1', otp: '123456' });
    assert.equal(fake.requests[0]?.claims.op, 'verify_mfa_change');
    assert.notEqual(fake.requests[0]?.claims.jti, fake.requests[1]?.claims.jti, 'every request has its own jti');
  });

  it('getUserCredentials', async () => {
    assert.deepEqual(await client().getUserCredentials('ann@example.com'), { mfa_method: 'sms', status: 'ok' });
    assert.equal(fake.requests[0]?.claims.op, 'get_user_credentials');
    assert.deepEqual(fake.requests[0]?.claims.body, { userid: 'ann@example.com' });
  });

  it('without an API key, no authorization header', async () => {
    await ServiceDelegationClient.fromEnv(env({ SERVICE_API_KEY: undefined })).getUserCredentials('ann@example.com');
    assert.equal(fake.requests[0]?.headers.authorization, undefined);
  });

  it('fromKeys with the same keys works the same', async () => {
    const c = ServiceDelegationClient.fromKeys({
      spSigningKey: FIXED.spEd25519.privatePem,
      spEncryptionKey: FIXED.spX25519.privatePem,
      idpVerifyKey: FIXED.idpEd25519.publicPem,
      idpEncryptionKey: FIXED.idpX25519.publicPem,
      baseUrl: fake.url,
      spId: SP_ID,
    });
    assert.equal(c.audience, fake.url);
    assert.equal((await c.getUserCredentials('ann@example.com')).mfa_method, 'sms');
  });
});

describe('ServiceDelegationClient: answers that must not be trusted', () => {
  const call = () => client().verifyMfaChange({ userid: 'ann@example.com', sessionId: 'mcs_1', otp: '123456' });

  it('signed by another Ed25519 key', async () => {
    fake.reply = async (req) => ({ body: await sealResponse(req, {}, { signingKey: randomPair('ed25519').privateKey }) });
    await assertResponseRefused(call(), 'ERR_DELEGATION_SIGNATURE');
  });

  it('encrypted to another SP', async () => {
    fake.reply = async (req) => ({ body: await sealResponse(req, {}, { encryptionKey: randomPair('x25519').publicKey }) });
    await assertResponseRefused(call(), 'ERR_DELEGATION_DECRYPT');
  });

  it('expired', async () => {
    const now = Math.floor(Date.now() / 1000);
    fake.reply = async (req) => ({ body: await sealResponse(req, { iat: now - 200, exp: now - 1 }) });
    await assertResponseRefused(call(), 'ERR_DELEGATION_EXPIRED');
  });

  it('bound to another request (irt)', async () => {
    fake.reply = async (req) => ({ body: await sealResponse(req, { irt: 'another-request-jti' }) });
    await assertResponseRefused(call(), 'ERR_DELEGATION_REPLY_MISMATCH');
  });

  it('a replayed answer to an earlier request', async () => {
    let first: string | undefined;
    fake.reply = async (req) => {
      first ??= await sealResponse(req);
      return { body: first };
    };
    await call();
    await assertResponseRefused(call(), 'ERR_DELEGATION_REPLY_MISMATCH');
  });

  it('addressed to another SP (aud)', async () => {
    fake.reply = async (req) => ({ body: await sealResponse(req, { aud: 'client-999' }) });
    await assertResponseRefused(call(), 'ERR_DELEGATION_AUDIENCE');
  });

  it('from another issuer', async () => {
    fake.reply = async (req) => ({ body: await sealResponse(req, { iss: 'https://evil.example.com' }) });
    await assertResponseRefused(call(), 'ERR_DELEGATION_ISSUER');
  });

  it('answering another operation', async () => {
    fake.reply = async (req) => ({ body: await sealResponse(req, { op: 'get_user_credentials' }) });
    await assertResponseRefused(call(), 'ERR_DELEGATION_REPLY_MISMATCH');
  });

  it('plain JSON {status: "success"} with a 200, whatever its content type', async () => {
    fake.reply = async () => ({ contentType: 'application/json', body: JSON.stringify({ status: 'success' }) });
    await assertResponseRefused(call());
    fake.reply = async () => ({ contentType: 'application/jose', body: JSON.stringify({ status: 'success' }) });
    await assertResponseRefused(call(), 'ERR_DELEGATION_DECRYPT');
  });

  it('a sealed result of the wrong shape', async () => {
    fake.reply = async (req) => ({ body: await sealResponse(req, { result: { status: 'SUCCESS' } }) });
    await assertResponseRefused(call());
    fake.reply = async (req) => ({ body: await sealResponse(req, { result: { status: 'success', message: 42 } }) });
    await assertResponseRefused(call());
  });
});

describe('ServiceDelegationClient: failures', () => {
  it('a non-200 answer: DelegationRequestError with status and the service code and message', async () => {
    fake.reply = async () => ({
      status: 409,
      contentType: 'application/json',
      body: JSON.stringify({ code: 'ERR_DELEGATION_REPLAY', message: 'request already seen' }),
    });
    await assert.rejects(client().getUserCredentials('ann@example.com'), (err: unknown) => {
      assert.ok(err instanceof DelegationRequestError);
      assert.ok(err instanceof ServiceOAuthError);
      assert.equal(err.code, 'ERR_DELEGATION_REQUEST_FAILED');
      assert.equal(err.status, 409);
      assert.equal(err.serviceCode, 'ERR_DELEGATION_REPLAY');
      assert.equal(err.serviceMessage, 'request already seen');
      assert.match(err.message, /409 ERR_DELEGATION_REPLAY: request already seen/);
      return true;
    });
  });

  it('a non-200 answer without JSON', async () => {
    fake.reply = async () => ({ status: 502, contentType: 'text/html', body: '<h1>Bad gateway</h1>' });
    await assert.rejects(client().getUserCredentials('ann@example.com'), {
      code: 'ERR_DELEGATION_REQUEST_FAILED',
      status: 502,
      serviceCode: undefined,
    });
  });

  it('an unreachable service: ERR_DELEGATION_NETWORK', async () => {
    const server = createServer();
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((ok) => server.close(() => ok()));
    const c = ServiceDelegationClient.fromEnv(env({ SERVICE_BASE_URL: `http://127.0.0.1:${port}` }));
    await assert.rejects(c.getUserCredentials('ann@example.com'), { name: 'DelegationRequestError', code: 'ERR_DELEGATION_NETWORK' });
  });

  it('a service that does not answer in time: ERR_DELEGATION_TIMEOUT', async () => {
    fake.reply = () => new Promise(() => {});
    const c = ServiceDelegationClient.fromKeys({
      spSigningKey: FIXED.spEd25519.privatePem,
      spEncryptionKey: FIXED.spX25519.privatePem,
      idpVerifyKey: FIXED.idpEd25519.publicPem,
      idpEncryptionKey: FIXED.idpX25519.publicPem,
      baseUrl: fake.url,
      spId: SP_ID,
      timeoutMs: 200,
    });
    await assert.rejects(c.getUserCredentials('ann@example.com'), { code: 'ERR_DELEGATION_TIMEOUT' });
  });

  it('bad input is refused locally, before any request', async () => {
    const c = client();
    const cases: [() => Promise<unknown>, RegExp][] = [
      [() => c.initiateMfaChange({ userid: 'ann@example.com', mfaMethod: 'sms' }), /phoneNumber.*sms/],
      [
        () => c.initiateMfaChange({ userid: 'ann@example.com', mfaMethod: 'voice' as MfaMethod }),
        /mfaMethod must be one of 'email', 'sms', 'totp'/,
      ],
      [() => c.initiateMfaChange({ userid: '', mfaMethod: 'email' }), /userid/],
      [() => c.verifyMfaChange({ userid: 'ann@example.com', sessionId: 'mcs_1', otp: '12345' }), /otp must be 6 digits/],
      [() => c.verifyMfaChange({ userid: 'ann@example.com', sessionId: 'mcs_1', otp: '12345a' }), /otp must be 6 digits/],
      [() => c.verifyMfaChange({ userid: 'ann@example.com', sessionId: '', otp: '123456' }), /sessionId/],
      [() => c.getUserCredentials(undefined as unknown as string), /userid/],
    ];
    for (const [fn, pattern] of cases) {
      await assert.rejects(fn(), (err: unknown) => {
        assert.ok(err instanceof DelegationRequestError);
        assert.equal(err.code, 'ERR_DELEGATION_INPUT_INVALID');
        assert.match(err.message, pattern);
        return true;
      });
    }
    assert.equal(fake.requests.length, 0);
  });

  it('MfaMethod is the spec enumeration', () => {
    assert.deepEqual(MfaMethod, { EMAIL: 'email', SMS: 'sms', TOTP: 'totp' });
  });
});

describe('ServiceDelegationClient: construction errors name the variable', () => {
  function assertConfig(overrides: Record<string, string | undefined>, name: string, pattern: RegExp) {
    assert.throws(
      () => ServiceDelegationClient.fromEnv(env(overrides)),
      (err: unknown) => {
        assert.ok(err instanceof DelegationConfigError, String(err));
        assert.equal(err.code, 'ERR_DELEGATION_CONFIG');
        assert.equal(err.option, name);
        assert.ok(err.message.includes(name), err.message);
        assert.match(err.message, pattern);
        assert.ok(!/BEGIN|MC4CAQ/.test(err.message), 'never echoes a key');
        return true;
      },
    );
  }

  for (const name of Object.values(DELEGATION_ENV).filter((n) => n !== 'SERVICE_API_KEY')) {
    it(`missing ${name}`, () => {
      assertConfig({ [name]: undefined }, name, /is not set/);
      assertConfig({ [name]: '' }, name, /is not set/);
    });
  }

  it('all missing are named at once', () => {
    assert.throws(
      () => ServiceDelegationClient.fromEnv({}),
      /SERVICE_BASE_URL, SP_ED25519_PRIVATE_KEY_PEM, SP_X25519_PRIVATE_KEY_PEM, IDP_ED25519_PUBLIC_KEY_PEM, IDP_X25519_PUBLIC_KEY_PEM, OAUTH_CLIENT_ID are not set/,
    );
  });

  it('Ed25519 and X25519 swapped', () => {
    assertConfig(
      { SP_ED25519_PRIVATE_KEY_PEM: FIXED.spX25519.privatePem, SP_X25519_PRIVATE_KEY_PEM: FIXED.spEd25519.privatePem },
      'SP_ED25519_PRIVATE_KEY_PEM',
      /X25519 key; expected an Ed25519 private key.*swapped/,
    );
    assertConfig(
      { IDP_ED25519_PUBLIC_KEY_PEM: FIXED.idpX25519.publicPem, IDP_X25519_PUBLIC_KEY_PEM: FIXED.idpEd25519.publicPem },
      'IDP_ED25519_PUBLIC_KEY_PEM',
      /swapped/,
    );
    assertConfig(
      { IDP_X25519_PUBLIC_KEY_PEM: FIXED.idpEd25519.publicPem },
      'IDP_X25519_PUBLIC_KEY_PEM',
      /Ed25519 key; expected an X25519 public key/,
    );
  });

  it('an RSA key', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    assertConfig({ SP_ED25519_PRIVATE_KEY_PEM: privatePem(rsa.privateKey) }, 'SP_ED25519_PRIVATE_KEY_PEM', /RSA key/);
    assertConfig({ IDP_ED25519_PUBLIC_KEY_PEM: publicPem(rsa.publicKey) }, 'IDP_ED25519_PUBLIC_KEY_PEM', /RSA key/);
  });

  it('a public key where a private one belongs, and the reverse', () => {
    assertConfig(
      { SP_X25519_PRIVATE_KEY_PEM: FIXED.spX25519.publicPem },
      'SP_X25519_PRIVATE_KEY_PEM',
      /public key where a private key belongs/,
    );
    assertConfig(
      { IDP_X25519_PUBLIC_KEY_PEM: FIXED.idpX25519.privatePem },
      'IDP_X25519_PUBLIC_KEY_PEM',
      /private key where a public key belongs/,
    );
  });

  it('a malformed PEM', () => {
    const broken = FIXED.spEd25519.privatePem.replace(/MC4C/, 'MC4D');
    assertConfig({ SP_ED25519_PRIVATE_KEY_PEM: broken }, 'SP_ED25519_PRIVATE_KEY_PEM', /malformed PEM/);
    assertConfig({ SP_ED25519_PRIVATE_KEY_PEM: 'not a key' }, 'SP_ED25519_PRIVATE_KEY_PEM', /not a PEM key/);
  });

  it('base64-wrapped and \\n-escaped PEM are accepted', async () => {
    const c = ServiceDelegationClient.fromEnv(
      env({
        SP_ED25519_PRIVATE_KEY_PEM: Buffer.from(FIXED.spEd25519.privatePem).toString('base64'),
        SP_X25519_PRIVATE_KEY_PEM: FIXED.spX25519.privatePem.trim().replaceAll('\n', '\\n'),
        IDP_ED25519_PUBLIC_KEY_PEM: Buffer.from(FIXED.idpEd25519.publicPem).toString('base64'),
      }),
    );
    assert.equal((await c.getUserCredentials('ann@example.com')).mfa_method, 'sms');
  });

  it('a base URL that is not https (except loopback), or carries a query', () => {
    assertConfig({ SERVICE_BASE_URL: 'http://idp.example.com' }, 'SERVICE_BASE_URL', /https/);
    assertConfig({ SERVICE_BASE_URL: 'ftp://idp.example.com' }, 'SERVICE_BASE_URL', /https/);
    assertConfig({ SERVICE_BASE_URL: 'idp.example.com' }, 'SERVICE_BASE_URL', /not a valid URL/);
    assertConfig({ SERVICE_BASE_URL: 'https://idp.example.com/?x=1' }, 'SERVICE_BASE_URL', /query/);
    assert.equal(
      ServiceDelegationClient.fromEnv(env({ SERVICE_BASE_URL: 'https://idp.example.com/' })).audience,
      'https://idp.example.com',
    );
  });

  it('fromKeys names the option', () => {
    assert.throws(
      () =>
        ServiceDelegationClient.fromKeys({
          spSigningKey: FIXED.spEd25519.privatePem,
          spEncryptionKey: FIXED.spX25519.privatePem,
          idpVerifyKey: FIXED.idpEd25519.privatePem,
          idpEncryptionKey: FIXED.idpX25519.publicPem,
          baseUrl: 'https://idp.example.com',
          spId: SP_ID,
        }),
      (err: unknown) =>
        err instanceof DelegationConfigError && err.option === 'idpVerifyKey' && /^idpVerifyKey holds a private key/.test(err.message),
    );
    assert.throws(
      () =>
        ServiceDelegationClient.fromKeys({
          spSigningKey: FIXED.spEd25519.privatePem,
          spEncryptionKey: FIXED.spX25519.privatePem,
          idpVerifyKey: FIXED.idpEd25519.publicPem,
          idpEncryptionKey: FIXED.idpX25519.publicPem,
          baseUrl: 'https://idp.example.com',
          spId: '',
        }),
      { code: 'ERR_DELEGATION_CONFIG', option: 'spId' },
    );
  });
});
