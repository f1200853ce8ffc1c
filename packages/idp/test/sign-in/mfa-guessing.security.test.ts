/**
 * Attacks on the second factor: guessing MFA codes (in parallel), replaying a right code,
 * moving a code or a session to another session, user or client, keeping a remembered
 * device past a change of method, and learning a code that was never delivered.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MFA_MAX_ATTEMPTS } from '../../src/defaults.js';
import { SmsDeliveryError, type SmsTransport } from '../../src/sms/transport.js';
import { deviceProof, newRawDevice, startTestService, type TestService, uniqueEmail, verifiedRegistration } from '../support/helpers.js';

const other = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

describe('MFA code guessing and binding', () => {
  let service: TestService;
  let clock = Date.now();
  before(async () => {
    service = await startTestService({ testMode: true, now: () => clock });
  });
  after(() => service.close());

  /** A user with email MFA and a remembered device, and a fresh initiated MFA session with its code. */
  async function mfaSession(email = uniqueEmail()) {
    const device = await newRawDevice();
    const r = await service.post('/v1/devices', {
      userid: email,
      deviceToken: await verifiedRegistration(service, email),
      devicePublicKey: device.publicJwk,
      mfaMethod: 'email',
    });
    device.deviceId = r.body.deviceId;
    clock += 31_000; // past the per-recipient send window
    const started = await service.post('/v1/authenticate', {
      userid: email,
      cryptoVersion: 'v1',
      deviceProof: await deviceProof(service, device, email),
    });
    assert.equal(started.body.status, 'MFA_REQUIRED');
    assert.equal((await service.post('/v1/mfa/initiate', { userid: email, sessionId: started.body.sessionId })).status, 200);
    const otp = (await service.ctx.mailbox.list(1, email))[0]?.text.match(/\b(\d{6})\b/)?.[1] as string;
    return { email, device, sessionId: started.body.sessionId as string, otp };
  }

  it(`evaluates at most ${MFA_MAX_ATTEMPTS} of 50 parallel wrong guesses, then refuses even the right code`, async () => {
    const { email, sessionId, otp } = await mfaSession();
    const results = await Promise.all(
      Array.from({ length: 50 }, () => service.post('/v1/mfa/verify', { userid: email, sessionId, otp: other(otp) })),
    );
    assert.equal(results.filter((r) => r.body.code === 'ERR_OTP_INVALID').length, MFA_MAX_ATTEMPTS);
    assert.equal(results.filter((r) => r.body.code === 'ERR_OTP_EXPIRED').length, 50 - MFA_MAX_ATTEMPTS);
    assert.equal((await service.post('/v1/mfa/verify', { userid: email, sessionId, otp })).body.code, 'ERR_OTP_EXPIRED');
  });

  it('accepts the right code once when it is sent 20 times in parallel', async () => {
    const { email, sessionId, otp } = await mfaSession();
    const results = await Promise.all(Array.from({ length: 20 }, () => service.post('/v1/mfa/verify', { userid: email, sessionId, otp })));
    assert.equal(results.filter((r) => r.status === 200).length, 1);
    assert.equal(new Set(results.filter((r) => r.status === 200).map((r) => r.body.code)).size, 1);
  });

  it("refuses one session's code in another session, and a session for another user or client", async () => {
    const a = await mfaSession();
    const b = await mfaSession();
    assert.equal(
      (await service.post('/v1/mfa/verify', { userid: b.email, sessionId: b.sessionId, otp: a.otp })).body.code,
      'ERR_OTP_INVALID',
    );
    assert.equal(
      (await service.post('/v1/mfa/verify', { userid: b.email, sessionId: a.sessionId, otp: a.otp })).body.code,
      'ERR_SESSION_INVALID',
    );
    const otherClient = await service.ctx.clients.create({ name: 'Other', origins: ['http://other.test'] });
    const foreign = await fetch(`${service.url}/v1/mfa/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://other.test', 'x-service-key': otherClient.publishableKey },
      body: JSON.stringify({ userid: a.email, sessionId: a.sessionId, otp: a.otp }),
    });
    assert.equal((await foreign.json()).code, 'ERR_SESSION_INVALID');
    // Still usable by its owner: the refusals spent nothing of it.
    assert.equal((await service.post('/v1/mfa/verify', { userid: a.email, sessionId: a.sessionId, otp: a.otp })).status, 200);
  });

  it('ends remember_me when the device is removed or the MFA method changes', async () => {
    const s = await mfaSession();
    assert.equal(
      (await service.post('/v1/mfa/verify', { userid: s.email, sessionId: s.sessionId, otp: s.otp, rememberMe: true })).status,
      200,
    );
    const again = async () =>
      (
        await service.post('/v1/authenticate', {
          userid: s.email,
          cryptoVersion: 'v1',
          deviceProof: await deviceProof(service, s.device, s.email),
        })
      ).body.status;
    assert.equal(await again(), 'SUCCESS');
    const user = await service.ctx.enabledUsers.findByEmail(s.email);
    const method = await service.ctx.mfa.methodOf(user?.id as string);
    await service.ctx.db
      .updateTable('mfa_methods')
      .set({ version: 'changed' })
      .where('user_id', '=', user?.id as string)
      .execute();
    assert.equal(await again(), 'MFA_REQUIRED', 'a changed method ends remember_me');
    await service.ctx.db
      .updateTable('mfa_methods')
      .set({ version: method?.version as string })
      .where('user_id', '=', user?.id as string)
      .execute();
    assert.equal(await again(), 'SUCCESS');
    await service.ctx.devices.revokeById(s.device.deviceId as string, clock);
    clock += 31_000;
    assert.equal(await again(), 'OTP_NEEDED', 'a removed device is not trusted at all');
  });

  it('expires the MFA code with the OTP lifetime, without counting it as a wrong guess', async () => {
    const { OTP_TTL_SECONDS } = await import('../../src/defaults.js');
    const s = await mfaSession();
    clock += OTP_TTL_SECONDS * 1000;
    for (let i = 0; i < MFA_MAX_ATTEMPTS + 2; i++) {
      const r = await service.post('/v1/mfa/verify', { userid: s.email, sessionId: s.sessionId, otp: s.otp });
      assert.equal(r.body.code, 'ERR_OTP_EXPIRED');
    }
    clock += 31_000;
    assert.equal((await service.post('/v1/mfa/initiate', { userid: s.email, sessionId: s.sessionId })).status, 200, 'a new code');
    const fresh = (await service.ctx.mailbox.list(1, s.email))[0]?.text.match(/\b(\d{6})\b/)?.[1] as string;
    assert.equal((await service.post('/v1/mfa/verify', { userid: s.email, sessionId: s.sessionId, otp: fresh })).status, 200);
  });
});

describe('SMS delivery failure', () => {
  let service: TestService;
  const failing: SmsTransport = {
    send: async () => {
      throw new SmsDeliveryError('provider answered 503; gave up after 3 attempts', true);
    },
    describe: () => 'failing test transport',
  };
  before(async () => {
    service = await startTestService({ testMode: true, sms: failing });
  });
  after(() => service.close());

  it('answers 503 without the code, and no code from that attempt is usable', async () => {
    const email = uniqueEmail();
    const deviceToken = await verifiedRegistration(service, email);
    const r = await service.post('/v1/devices', { userid: email, deviceToken, mfaMethod: 'sms', phoneNumber: '+14155550100' });
    assert.equal(r.status, 503);
    assert.equal(r.body.code, 'ERR_DELIVERY_FAILED');
    assert.doesNotMatch(JSON.stringify(r.body), /\d{6}/, 'no code in the answer, even in test mode');
    const sessions = await service.ctx.db.selectFrom('mfa_sessions').select(['otp_hash']).execute();
    assert.ok(sessions.length > 0 && sessions.every((s) => s.otp_hash === null), 'the undelivered code was forgotten');
  });
});
