/**
 * MFA from enrollment to login for each method, over the wire protocol, with codes read
 * where a user would read them: the mailbox, the SMS outbox, an independent TOTP generator.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as OTPAuth from 'otpauth';
import { MFA_MAX_ATTEMPTS } from '../../src/defaults.js';
import {
  claimsOf,
  deviceProof,
  newRawDevice,
  type RawDevice,
  startTestService,
  type TestService,
  uniqueEmail,
  verifiedRegistration,
} from '../support/helpers.js';

/** The authenticator app: an independent TOTP implementation, `offsetSteps` periods from now. */
/** The code `offsetSteps` periods after the one at `at` (default now). */
const totpCode = (secret: string, offsetSteps = 0, at = Date.now()) =>
  new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({
    timestamp: at + offsetSteps * 30_000,
  });

describe('MFA flows', () => {
  let service: TestService;
  // Real time plus a skew the tests move forward past send windows (TOTP codes follow real time).
  const skew = 0;
  before(async () => {
    service = await startTestService({ testMode: true, now: () => Date.now() + skew });
  });
  after(() => service.close());

  const latestSms = async (phone: string) => {
    const [sms] = await service.ctx.smsOutbox.list(1, phone);
    const code = sms?.body.match(/\b(\d{6})\b/)?.[1];
    if (!code) throw new Error(`no SMS to ${phone}`);
    return code;
  };

  /** A device registered with an MFA enrollment that needs confirming; returns what the page got. */
  async function enroll(email: string, device: RawDevice, method: 'totp' | 'sms', phoneNumber?: string) {
    const deviceToken = await verifiedRegistration(service, email);
    const r = await service.post('/v1/devices', {
      userid: email,
      deviceToken,
      devicePublicKey: device.publicJwk,
      mfaMethod: method,
      ...(phoneNumber ? { phoneNumber } : {}),
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.status, 'FINALIZE_REGISTRATION_NEEDED');
    assert.equal(r.body.method, method);
    assert.equal(r.body.code, undefined, 'no authorization code before the method is confirmed');
    return r.body;
  }

  async function login(email: string, device: RawDevice) {
    return (
      await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1', deviceProof: await deviceProof(service, device, email) })
    ).body;
  }

  it('TOTP: enrolls with a QR payload, confirms with a first code, then asks for TOTP at login; remember_me skips it', async () => {
    const email = uniqueEmail('totp');
    const device = await newRawDevice();
    const started = await enroll(email, device, 'totp');
    assert.match(started.otpauthUri, /^otpauth:\/\/totp\//);
    const parsed = OTPAuth.URI.parse(started.otpauthUri) as OTPAuth.TOTP;
    assert.equal(parsed.secret.base32, started.secret);
    assert.equal(parsed.label, email);

    // Codes below are of the enrollment's time step, so a 30-s boundary crossed mid-test changes nothing.
    const enrolledAt = Date.now();
    const confirmed = await service.post('/v1/mfa/verify', {
      userid: email,
      sessionId: started.sessionId,
      otp: totpCode(started.secret, 0, enrolledAt),
    });
    assert.equal(confirmed.status, 200, JSON.stringify(confirmed.body));
    assert.equal(confirmed.body.success, true);
    device.deviceId = confirmed.body.deviceId;
    assert.deepEqual((await claimsOf(service, confirmed.body.code)).amr, ['otp', 'mfa', 'totp']);

    const challenged = await login(email, device);
    assert.equal(challenged.status, 'MFA_REQUIRED');
    assert.equal(challenged.method, 'totp');
    const early = await service.post('/v1/mfa/verify', {
      userid: email,
      sessionId: challenged.sessionId,
      otp: totpCode(started.secret, 1, enrolledAt),
    });
    assert.equal(early.status, 409, 'verify before initiate is out of order');
    assert.equal(early.body.code, 'ERR_SESSION_STEP');
    const initiated = await service.post('/v1/mfa/initiate', { userid: email, sessionId: challenged.sessionId });
    assert.deepEqual([initiated.body.status, initiated.body.method], ['MFA_INITIATED', 'totp']);
    // The enrollment used this step: the same step is refused, the next one (within the ±1 window) is accepted.
    const replay = await service.post('/v1/mfa/verify', {
      userid: email,
      sessionId: challenged.sessionId,
      otp: totpCode(started.secret, 0, enrolledAt),
    });
    assert.equal(replay.body.code, 'ERR_OTP_USED', 'a right code of a used step says so');
    assert.equal(replay.body.attemptsRemaining, MFA_MAX_ATTEMPTS, 'and costs no attempt');
    const verified = await service.post('/v1/mfa/verify', {
      userid: email,
      sessionId: challenged.sessionId,
      otp: totpCode(started.secret, 1, enrolledAt),
      rememberMe: true,
    });
    assert.equal(verified.status, 200, JSON.stringify(verified.body));
    assert.deepEqual((await claimsOf(service, verified.body.code)).amr, ['swk', 'mfa', 'totp']);

    const remembered = await login(email, device);
    assert.equal(remembered.status, 'SUCCESS', 'remember_me skips MFA on this device');
    assert.deepEqual((await claimsOf(service, remembered.code)).amr, ['swk']);
  });

  it('SMS: enrolls a phone number confirmed by a texted code, then texts a code at login', async () => {
    const email = uniqueEmail('sms');
    const phone = '+14155550123';
    const device = await newRawDevice();
    const started = await enroll(email, device, 'sms', '+1 (415) 555-0123');
    const confirmed = await service.post('/v1/mfa/verify', { userid: email, sessionId: started.sessionId, otp: await latestSms(phone) });
    assert.equal(confirmed.status, 200, JSON.stringify(confirmed.body));
    device.deviceId = confirmed.body.deviceId;
    assert.deepEqual((await claimsOf(service, confirmed.body.code)).amr, ['otp', 'mfa', 'sms']);

    await new Promise((r) => setTimeout(r, 5));
    const challenged = await login(email, device);
    assert.deepEqual([challenged.status, challenged.method], ['MFA_REQUIRED', 'sms']);
    // The login code right after the enrollment code is the next step, not a resend: it is sent.
    const initiate = () => service.post('/v1/mfa/initiate', { userid: email, sessionId: challenged.sessionId });
    assert.equal((await initiate()).status, 200, 'the happy path never meets the resend spacing');
    const before = (await service.ctx.smsOutbox.list(100, phone)).length;
    assert.equal((await initiate()).status, 429, 'a resend: one SMS per 30 s per number and purpose');
    assert.equal((await service.ctx.smsOutbox.list(100, phone)).length, before);
  });

  it('email: enrolls at once, adding no mfa (the address was just proven), and sends a code at login on the remembered device', async () => {
    const email = uniqueEmail('mail');
    const device = await newRawDevice();
    const deviceToken = await verifiedRegistration(service, email);
    const r = await service.post('/v1/devices', { userid: email, deviceToken, devicePublicKey: device.publicJwk, mfaMethod: 'email' });
    assert.equal(r.body.status, 'SUCCESS');
    device.deviceId = r.body.deviceId;
    assert.deepEqual((await claimsOf(service, r.body.code)).amr, ['otp'], 'the enrollment proved the same mailbox: one factor');
    const challenged = await login(email, device);
    assert.deepEqual([challenged.status, challenged.method], ['MFA_REQUIRED', 'email']);
    // No waiting: the MFA mail right after the sign-in code is the next step, not a resend.
    assert.equal((await service.post('/v1/mfa/initiate', { userid: email, sessionId: challenged.sessionId })).body.status, 'MFA_INITIATED');
    const [mail] = await service.ctx.mailbox.list(1, email);
    assert.match(mail?.subject ?? '', /verification code/);
    const otp = mail?.text.match(/\b(\d{6})\b/)?.[1] as string;
    const verified = await service.post('/v1/mfa/verify', { userid: email, sessionId: challenged.sessionId, otp });
    assert.equal(verified.body.status, 'SUCCESS');
    assert.deepEqual((await claimsOf(service, verified.body.code)).amr, ['swk', 'mfa', 'email']);
  });

  it('refuses SMS enrollment without a valid E.164 number, before spending the registration', async () => {
    const email = uniqueEmail('phone');
    const deviceToken = await verifiedRegistration(service, email);
    for (const phoneNumber of [undefined, '0415 555 0123', '+0123', 'call me']) {
      const r = await service.post('/v1/devices', {
        userid: email,
        deviceToken,
        mfaMethod: 'sms',
        ...(phoneNumber ? { phoneNumber } : {}),
      });
      assert.equal(r.status, 400, String(phoneNumber));
      assert.equal(r.body.code, 'ERR_REQUEST_INVALID');
    }
    assert.equal((await service.post('/v1/devices', { userid: email, deviceToken })).body.status, 'SUCCESS');
  });
});

describe('MFA policy and new devices', () => {
  let service: TestService;
  let clock = Date.now();
  before(async () => {
    service = await startTestService({ testMode: true, now: () => clock });
  });
  after(() => service.close());

  it('under a required policy, answers MFA_ENROLLMENT_NEEDED and issues no code until a method is chosen', async () => {
    await service.ctx.clients.setMfaPolicy(service.clientId, 'required');
    try {
      const email = uniqueEmail('required');
      const deviceToken = await verifiedRegistration(service, email);
      const needed = await service.post('/v1/devices', { userid: email, deviceToken });
      assert.equal(needed.body.status, 'MFA_ENROLLMENT_NEEDED');
      // Not email: after the email code it would prove the same mailbox again.
      assert.deepEqual(needed.body.methods, ['sms', 'totp', 'passkey']);
      assert.equal(needed.body.code, undefined);
      const byMail = await service.post('/v1/devices', { userid: email, deviceToken, mfaMethod: 'email' });
      assert.deepEqual([byMail.status, byMail.body.code], [403, 'ERR_MFA_UNAVAILABLE']);
      const enrolled = await service.post('/v1/devices', { userid: email, deviceToken, mfaMethod: 'totp' });
      assert.equal(enrolled.body.status, 'FINALIZE_REGISTRATION_NEEDED', 'the registration stayed open');
    } finally {
      await service.ctx.clients.setMfaPolicy(service.clientId, 'optional');
    }
  });

  it('sends a second device through MFA after its email OTP, and registers it only once MFA passes', async () => {
    const email = uniqueEmail('second');
    const phone = '+14155550177';
    const smsCode = async () => (await service.ctx.smsOutbox.list(1, phone))[0]?.body.match(/\b(\d{6})\b/)?.[1] as string;
    const enrolled = await service.post('/v1/devices', {
      userid: email,
      deviceToken: await verifiedRegistration(service, email),
      mfaMethod: 'sms',
      phoneNumber: phone,
    });
    assert.equal(enrolled.body.status, 'FINALIZE_REGISTRATION_NEEDED');
    const confirmed = await service.post('/v1/mfa/verify', { userid: email, sessionId: enrolled.body.sessionId, otp: await smsCode() });
    assert.equal(confirmed.body.status, 'SUCCESS');
    clock += 31_000; // the next OTP mail to this address
    const device = await newRawDevice();
    const deviceToken = await verifiedRegistration(service, email);
    const r = await service.post('/v1/devices', { userid: email, deviceToken, devicePublicKey: device.publicJwk });
    assert.equal(r.body.status, 'MFA_REQUIRED');
    assert.equal(r.body.method, 'sms');
    assert.equal(r.body.code, undefined);
    clock += 31_000;
    await service.post('/v1/mfa/initiate', { userid: email, sessionId: r.body.sessionId });
    const verified = await service.post('/v1/mfa/verify', { userid: email, sessionId: r.body.sessionId, otp: await smsCode() });
    assert.equal(verified.body.status, 'SUCCESS');
    assert.match(verified.body.deviceId, /^dev_/, 'the device key is registered once MFA passed');
  });
});
