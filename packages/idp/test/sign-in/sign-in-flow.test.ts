/**
 * The spine end to end: the real browser library (under Node, with an IndexedDB
 * implementation) against the real service, and the real server library for the exchange.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { exchangeCodeForClaims, OAuthExchangeError } from 'service-oauth-client';
import type { ServiceClient } from 'service-web';
import { createPkcePair } from 'service-web';
import { OTP_MAX_ATTEMPTS } from '../../src/defaults.js';
import { startTestService, type TestService, uniqueEmail } from '../support/helpers.js';

describe('device registration and trusted-device login', () => {
  let service: TestService;
  before(async () => {
    service = await startTestService();
  });
  after(() => service.close());

  const exchange = (code: string, codeVerifier?: string) =>
    exchangeCodeForClaims({
      code,
      oauthTokenUrl: service.tokenUrl,
      clientId: service.clientId,
      apiKey: service.secretKey,
      jwksUrl: service.jwksUrl,
      issuer: service.url,
      ...(codeVerifier ? { codeVerifier } : {}),
    });

  /** New device: authenticate → OTP from the mailbox → verifyEmailOtp → verifyDevice → code. */
  async function register(device: ServiceClient, email: string, options: { rememberDevice?: boolean; code_challenge?: string } = {}) {
    const started = await device.authenticate(email, {
      rememberDevice: options.rememberDevice ?? true,
      ...(options.code_challenge ? { code_challenge: options.code_challenge, code_challenge_method: 'S256' } : {}),
    });
    assert.equal(started.status, 'OTP_NEEDED');
    assert.equal(typeof started.deviceToken, 'string');
    assert.equal(started.code, undefined, 'the OTP is only in responses in test mode');
    const verified = await device.verifyEmailOtp({ userid: email, otp: await service.latestOtp(email) });
    assert.deepEqual(verified.status, 'SUCCESS');
    const registered = await device.verifyDevice({ userid: email });
    assert.equal(registered.status, 'SUCCESS');
    assert.match(registered.code ?? '', /^ac_/);
    return registered.code as string;
  }

  it('registers a new device by email OTP and exchanges the code for verified claims', async () => {
    const email = uniqueEmail('ann');
    const device = await service.newDevice();
    const code = await register(device, email);
    const claims = await exchange(code);
    assert.equal(claims.email, email);
    assert.equal(claims.email_verified, true);
    assert.equal(claims.aud, service.clientId);
    assert.equal(claims.iss, service.url);
    assert.match(claims.sub, /^usr_/);
    assert.notEqual(claims.sub, email, 'the subject is an opaque id, not the email');
    assert.deepEqual(claims.amr, ['otp']);
    for (const claim of ['iat', 'exp', 'nbf', 'auth_time']) assert.equal(typeof claims[claim], 'number', claim);
    assert.equal(typeof claims.jti, 'string');
  });

  it('logs in again from the remembered device without an OTP, as the same user', async () => {
    const email = uniqueEmail('bob');
    const device = await service.newDevice();
    const first = await exchange(await register(device, email));
    const mailsBefore = (await service.ctx.mailbox.list(100, email)).length;

    const again = await device.authenticate(email);
    assert.equal(again.status, 'SUCCESS');
    assert.equal(again.success, true);
    const claims = await exchange(again.code as string);
    assert.equal(claims.sub, first.sub);
    assert.deepEqual(claims.amr, ['swk']);
    assert.equal((await service.ctx.mailbox.list(100, email)).length, mailsBefore, 'no OTP mail was sent');
  });

  it('refuses a replayed code', async () => {
    const code = await register(await service.newDevice(), uniqueEmail('eve'));
    await exchange(code);
    await assert.rejects(exchange(code), (error: unknown) => error instanceof OAuthExchangeError && error.error === 'invalid_grant');
  });

  it('exchanges a PKCE-bound code with its verifier, and burns it on a wrong verifier', async () => {
    const email = uniqueEmail('fay');
    const device = await service.newDevice();
    const good = await createPkcePair();
    const claims = await exchange(await register(device, email, { code_challenge: good.codeChallenge }), good.codeVerifier);
    assert.equal(claims.email, email);

    const pkce = await createPkcePair();
    const wrong = await createPkcePair();
    const login = await device.authenticate(email, { code_challenge: pkce.codeChallenge, code_challenge_method: 'S256' });
    assert.equal(login.status, 'SUCCESS');
    await assert.rejects(
      exchange(login.code as string, wrong.codeVerifier),
      (e: unknown) => e instanceof OAuthExchangeError && e.error === 'invalid_grant',
    );
    // The wrong attempt consumed the code: the right verifier no longer helps.
    await assert.rejects(
      exchange(login.code as string, pkce.codeVerifier),
      (e: unknown) => e instanceof OAuthExchangeError && e.error === 'invalid_grant',
    );
  });

  it('refuses a PKCE-bound code without a verifier, and a verifier for a code without a challenge', async () => {
    const email = uniqueEmail('gus');
    const device = await service.newDevice();
    const pkce = await createPkcePair();
    await assert.rejects(exchange(await register(device, email, { code_challenge: pkce.codeChallenge })), OAuthExchangeError);
    const plain = await device.authenticate(email);
    await assert.rejects(exchange(plain.code as string, pkce.codeVerifier), OAuthExchangeError);
  });

  it('refuses a sixth OTP even when it is right', async () => {
    const email = uniqueEmail('guess');
    const device = await service.newDevice();
    assert.equal((await device.authenticate(email)).status, 'OTP_NEEDED');
    const otp = await service.latestOtp(email);
    const wrong = String((Number(otp) + 1) % 1_000_000).padStart(6, '0');
    for (let i = 0; i < OTP_MAX_ATTEMPTS; i++)
      assert.equal((await device.verifyEmailOtp({ userid: email, otp: wrong })).status, 'INVALID_OTP');
    assert.equal((await device.verifyEmailOtp({ userid: email, otp })).status, 'OTP_EXPIRED');
    assert.equal((await device.verifyDevice({ userid: email })).code, undefined, 'no code without a verified email');
  });

  it('creates the account on the first verified email, with a stable opaque id', async () => {
    const email = uniqueEmail('new');
    const device = await service.newDevice();
    await device.authenticate(email);
    assert.equal(await service.ctx.enabledUsers.findByEmail(email), undefined, 'no account before the email is verified');
    await device.verifyEmailOtp({ userid: email, otp: await service.latestOtp(email) });
    const account = await service.ctx.enabledUsers.findByEmail(email);
    assert.match(account?.id ?? '', /^usr_/);
    const claims = await exchange((await device.verifyDevice({ userid: email })).code as string);
    assert.equal(claims.sub, account?.id);
  });

  it('answers INVALID_EMAIL for a malformed address', async () => {
    const device = await service.newDevice();
    assert.equal((await device.authenticate('not-an-email')).status, 'INVALID_EMAIL');
    const direct = await service.post('/v1/authenticate', { userid: 'nope@', cryptoVersion: 'v1' });
    assert.equal(direct.status, 400);
    assert.equal(direct.body.code, 'ERR_EMAIL_INVALID');
  });
});

describe('a second device, and a device not remembered', () => {
  // These need a second OTP send to the same address, so the service clock moves past the
  // per-recipient send window. No code is exchanged here: the client's clock stays real.
  let service: TestService;
  let clock = Date.now();
  before(async () => {
    service = await startTestService({ now: () => clock });
  });
  after(() => service.close());

  async function register(device: ServiceClient, email: string, options: { rememberDevice?: boolean } = {}) {
    assert.equal((await device.authenticate(email, { rememberDevice: options.rememberDevice ?? true })).status, 'OTP_NEEDED');
    assert.equal((await device.verifyEmailOtp({ userid: email, otp: await service.latestOtp(email) })).status, 'SUCCESS');
    assert.equal((await device.verifyDevice({ userid: email })).status, 'SUCCESS');
  }

  it('gives another device OTP_NEEDED', async () => {
    const email = uniqueEmail('cat');
    await register(await service.newDevice(), email);
    clock += 31_000; // past the per-recipient OTP send window
    const other = await service.newDevice();
    const result = await other.authenticate(email);
    assert.equal(result.status, 'OTP_NEEDED');
  });

  it('does not remember a device registered without rememberDevice', async () => {
    const email = uniqueEmail('dan');
    const device = await service.newDevice();
    await register(device, email, { rememberDevice: false });
    clock += 31_000;
    assert.equal((await device.authenticate(email)).status, 'OTP_NEEDED');
  });
});
