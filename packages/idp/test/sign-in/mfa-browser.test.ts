/**
 * Each MFA method end to end through the browser library (service-web) and the server
 * library (service-oauth-client): enroll, confirm, log in with MFA, remember_me, log in again
 * without MFA. Codes come from the mailbox, the SMS outbox and an independent TOTP generator.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as OTPAuth from 'otpauth';
import { exchangeCodeForClaims } from 'service-oauth-client';
import type { ServiceClient } from 'service-web';
import { startTestService, type TestService, uniqueEmail } from '../support/helpers.js';

/** The authenticator app's code for the service's current time (real time plus `skew`), `offsetSteps` periods on. */
const totpAt = (secret: string, offsetSteps: number, skewMs: number) =>
  new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({
    timestamp: Date.now() + skewMs + offsetSteps * 30_000,
  });

describe('MFA through the browser library', () => {
  let service: TestService;
  // Real time plus a skew moved forward past send windows (TOTP codes follow real time);
  // tokens are checked with leeway for the skew.
  let skew = 0;
  before(async () => {
    service = await startTestService({ now: () => Date.now() + skew });
  });
  after(() => service.close());

  const amrOf = async (code: string) =>
    (
      await exchangeCodeForClaims({
        code,
        oauthTokenUrl: service.tokenUrl,
        clientId: service.clientId,
        apiKey: service.secretKey,
        jwksUrl: service.jwksUrl,
        leeway: 600,
      })
    ).amr;
  const mailOtp = async (email: string) => service.latestOtp(email);
  const smsOtp = async (phone: string) => (await service.ctx.smsOutbox.list(1, phone))[0]?.body.match(/\b(\d{6})\b/)?.[1] as string;

  /** New device up to verifyDevice with the chosen method. */
  async function register(device: ServiceClient, email: string, mfaMethod: 'email' | 'sms' | 'totp', phoneNumber?: string) {
    assert.equal((await device.authenticate(email, { rememberDevice: true })).status, 'OTP_NEEDED');
    const verified = await device.verifyEmailOtp({ userid: email, otp: await mailOtp(email) });
    assert.deepEqual(verified, { status: 'SUCCESS', message: verified.message, mfaEnrolled: false }, 'a new user has no second step yet');
    return device.verifyDevice({ userid: email, mfaMethod, ...(phoneNumber ? { phoneNumber } : {}) });
  }

  /** A login from the remembered device that needs MFA, completed with `otp()`; then one that does not. */
  async function loginWithMfa(device: ServiceClient, email: string, method: string, otp: () => Promise<string>) {
    const challenged = await device.authenticate(email);
    assert.equal(challenged.status, 'MFA_REQUIRED');
    assert.equal(challenged.method, method);
    const initiated = await device.initiateMfa({ userid: email, sessionId: challenged.sessionId as string });
    assert.equal(initiated.status, 'MFA_INITIATED');
    const verified = await device.verifyMfa({ userid: email, otp: await otp(), remember_me: true });
    assert.equal(verified.status, 'SUCCESS', JSON.stringify(verified));
    assert.equal(verified.success, true);
    assert.deepEqual(await amrOf(verified.code as string), ['swk', 'mfa', method]);

    const again = await device.authenticate(email);
    assert.equal(again.status, 'SUCCESS', 'remember_me: no MFA on this device');
    assert.deepEqual(await amrOf(again.code as string), ['swk']);
  }

  it('TOTP', async () => {
    const email = uniqueEmail('totp');
    const device = await service.newDevice();
    const enrolled = await register(device, email, 'totp');
    assert.equal(enrolled.status, 'FINALIZE_REGISTRATION_NEEDED');
    const secret = (enrolled as { secret: string }).secret;
    assert.match((enrolled as { otpauthUri: string }).otpauthUri, /^otpauth:\/\/totp\/.*secret=/);
    const confirmed = await device.verifyMfa({ userid: email, otp: totpAt(secret, 0, skew) });
    assert.equal(confirmed.status, 'SUCCESS', JSON.stringify(confirmed));
    assert.deepEqual(await amrOf(confirmed.code as string), ['otp', 'mfa', 'totp']);
    await loginWithMfa(device, email, 'totp', async () => totpAt(secret, 1, skew));
  });

  it('SMS', async () => {
    const email = uniqueEmail('sms');
    // A UK mobile (Ofcom's drama range 07700 900xxx is unallocated: the send rules refuse it).
    const phone = '+447700123456';
    const device = await service.newDevice();
    const enrolled = await register(device, email, 'sms', '+44 7700 123456');
    assert.equal(enrolled.status, 'FINALIZE_REGISTRATION_NEEDED');
    const confirmed = await device.verifyMfa({ userid: email, otp: await smsOtp(phone) });
    assert.equal(confirmed.status, 'SUCCESS', JSON.stringify(confirmed));
    assert.deepEqual(await amrOf(confirmed.code as string), ['otp', 'mfa', 'sms']);
    await loginWithMfa(device, email, 'sms', () => smsOtp(phone));
  });

  it('email', async () => {
    const email = uniqueEmail('email');
    const device = await service.newDevice();
    const enrolled = await register(device, email, 'email');
    assert.equal(enrolled.status, 'SUCCESS');
    assert.deepEqual(await amrOf((enrolled as { code: string }).code), ['otp'], 'the same mailbox twice is one factor');
    await loginWithMfa(device, email, 'email', () => mailOtp(email));
  });

  it('a new device of a user whose second step is email finishes after the email OTP, without mfa and without a second mailed code', async () => {
    const email = uniqueEmail('second-device');
    assert.equal((await register(await service.newDevice(), email, 'email')).status, 'SUCCESS');
    const device = await service.newDevice();
    skew += 31_000; // a second sign-in code to the address is a resend of that purpose
    assert.equal((await device.authenticate(email, { rememberDevice: true })).status, 'OTP_NEEDED');
    const verified = await device.verifyEmailOtp({ userid: email, otp: await mailOtp(email) });
    assert.equal(verified.status, 'SUCCESS');
    assert.equal((verified as { mfaEnrolled: boolean }).mfaEnrolled, true);
    const mfaCodes = async () =>
      (await service.ctx.mailbox.list(50, email)).filter((m) => /verification code/.test(m.subject ?? '')).length;
    const before = await mfaCodes();
    const next = await device.verifyDevice({ userid: email });
    assert.equal(next.status, 'SUCCESS', 'a code mailed after the email OTP would prove the same mailbox: not asked');
    assert.deepEqual(await amrOf((next as { code: string }).code), ['otp']);
    assert.equal(await mfaCodes(), before, 'no MFA code mailed');
  });

  it('MFA_ENROLLMENT_NEEDED under a required policy, then enrollment on the same registration', async () => {
    await service.ctx.clients.setMfaPolicy(service.clientId, 'required');
    try {
      const email = uniqueEmail('required');
      const device = await service.newDevice();
      assert.equal((await device.authenticate(email, { rememberDevice: true })).status, 'OTP_NEEDED');
      assert.equal((await device.verifyEmailOtp({ userid: email, otp: await mailOtp(email) })).status, 'SUCCESS');
      const needed = await device.verifyDevice({ userid: email });
      assert.equal(needed.status, 'MFA_ENROLLMENT_NEEDED');
      assert.deepEqual((needed as { methods: string[] }).methods, ['sms', 'totp', 'passkey'], 'not email: the same mailbox');
      const enrolled = await device.verifyDevice({ userid: email, mfaMethod: 'totp' });
      assert.equal(enrolled.status, 'FINALIZE_REGISTRATION_NEEDED');
    } finally {
      await service.ctx.clients.setMfaPolicy(service.clientId, 'optional');
    }
  });
});
