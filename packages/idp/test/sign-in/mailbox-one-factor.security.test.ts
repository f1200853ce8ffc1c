/**
 * One mailbox is one factor (NIST SP 800-63B counts authenticators, not codes; RFC 8176 `mfa`
 * means two different ones). On a new browser the first factor is the mailed new-device code;
 * a second mailed code (the user's email MFA), or enrolling email as the method at that
 * registration, proves the same mailbox again and must not earn `mfa`: a strict application
 * refuses the sign-in (ERR_MFA_UNAVAILABLE, nothing registered), a lax one gets a token that says
 * what happened (amr otp, acr otp). A device whose key was registered before this sign-in is a
 * factor beside the mailbox: its email MFA still earns `mfa`. Delegation's change of method
 * proves the factor in force (the mailbox, for email) and issues no `mfa`: it is the user's way
 * from email to a factor a strict application takes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as OTPAuth from 'otpauth';
import { ACR } from '../../src/oidc/acr.js';
import {
  claimsOf,
  delegationFor,
  deviceProof,
  newRawDevice,
  type RawDevice,
  registerWithMfa,
  startTestService,
  type TestService,
  uniqueEmail,
  verifiedRegistration,
} from '../support/helpers.js';

describe('one mailbox is one factor', () => {
  let service: TestService;
  // Moved past the send spacing where one address gets a second code of a purpose.
  let offset = 0;
  before(async () => {
    service = await startTestService({ testMode: true, now: () => Date.now() + offset });
  });
  after(() => service.close());

  const strict = async <T>(run: () => Promise<T>) => {
    await service.ctx.clients.setMfaPolicy(service.clientId, 'required');
    try {
      return await run();
    } finally {
      await service.ctx.clients.setMfaPolicy(service.clientId, 'optional');
    }
  };
  const later = () => {
    offset += 31_000;
  };
  const mfaCodesMailed = async (email: string) =>
    (await service.ctx.mailbox.list(50, email)).filter((mail) => /verification code/.test(mail.subject ?? '')).length;
  const userIdOf = async (email: string) => (await service.ctx.users.find(email)).id as string;
  const devicesOf = async (email: string) =>
    (await service.ctx.devices.list({ userId: await userIdOf(email), clientId: service.clientId, usedSince: 0 })).length;
  /** A user whose second factor is email, enrolled on their first browser (returned: its key is registered). */
  async function emailMfaUser(label: string) {
    const email = uniqueEmail(label);
    const { device, body } = await registerWithMfa(service, email, 'email');
    assert.equal(body.status, 'SUCCESS');
    later();
    return { email, device };
  }
  /** A new browser of `email`: the mailed new-device code, then its registration with a fresh key. */
  async function newBrowser(email: string, extra: Record<string, unknown> = {}) {
    const device = await newRawDevice();
    const deviceToken = await verifiedRegistration(service, email);
    return service.post('/v1/devices', { userid: email, deviceToken, devicePublicKey: device.publicJwk, ...extra });
  }
  /** A sign-in of a remembered device: its key proven over a fresh challenge. */
  async function rememberedLogin(email: string, device: RawDevice) {
    return service.post('/v1/authenticate', {
      userid: email,
      cryptoVersion: 'v1',
      deviceProof: await deviceProof(service, device, email),
    });
  }

  it('delegation moves a refused user from email to an app by proving the mailbox (the factor in force), with no mfa issued; the strict application then takes the new browser', async () => {
    // First: the delegation envelope is checked against the service's clock, which later tests move on.
    const email = uniqueEmail('delegated');
    // Signed in to the application: its backend may speak for the user.
    await claimsOf(service, (await registerWithMfa(service, email, 'email')).body.code);
    const { client: app } = await delegationFor(service, service.clientId);
    const started = await app.initiateMfaChange({ userid: email, mfaMethod: 'totp' });
    assert.deepEqual([started.status, started.current_method], ['current_factor_needed', 'email'], JSON.stringify(started));
    const next = await app.verifyMfaChange({ userid: email, sessionId: started.session_id, otp: await service.latestOtp(email) });
    assert.equal(next.status, 'totp_pending');
    const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32((next as { secret: string }).secret) });
    const code = (steps = 0) => totp.generate({ timestamp: Date.now() + offset + steps * 30_000 });
    assert.equal((await app.verifyMfaChange({ userid: email, sessionId: started.session_id, otp: code() })).status, 'success');
    later();
    await strict(async () => {
      const challenged = await newBrowser(email);
      assert.deepEqual([challenged.body.status, challenged.body.method], ['MFA_REQUIRED', 'totp']);
      await service.post('/v1/mfa/initiate', { userid: email, sessionId: challenged.body.sessionId });
      const verified = await service.post('/v1/mfa/verify', { userid: email, sessionId: challenged.body.sessionId, otp: code(1) });
      assert.equal(verified.body.status, 'SUCCESS', JSON.stringify(verified.body));
      assert.deepEqual((await claimsOf(service, verified.body.code)).amr, ['otp', 'mfa', 'totp']);
    });
  });
  it('a strict application refuses a new browser whose second factor would be a second mailed code: ERR_MFA_UNAVAILABLE, no code, nothing registered', async () => {
    const { email } = await emailMfaUser('strict-new');
    const mailed = await mfaCodesMailed(email);
    const refused = await strict(() => newBrowser(email));
    assert.equal(refused.status, 403);
    assert.equal(refused.body.code, 'ERR_MFA_UNAVAILABLE');
    assert.match(refused.body.message, /other than your email inbox/);
    assert.equal(refused.body.sessionId, undefined, 'no MFA step was opened');
    assert.equal(await mfaCodesMailed(email), mailed, 'no second code was mailed');
    assert.equal(await devicesOf(email), 1, 'the new browser was not registered');
  });

  it('a lax application gets a token for a new browser that says one factor: amr otp, acr otp, no second mailed code', async () => {
    const { email } = await emailMfaUser('lax-new');
    const mailed = await mfaCodesMailed(email);
    const signedIn = await newBrowser(email);
    assert.equal(signedIn.body.status, 'SUCCESS', JSON.stringify(signedIn.body));
    const claims = await claimsOf(service, signedIn.body.code);
    assert.deepEqual(claims.amr, ['otp']);
    assert.equal(claims.acr, ACR.otp);
    assert.equal(await mfaCodesMailed(email), mailed);
  });

  it('enrolling email as the method at a new-device registration earns no mfa, and a strict application refuses it before anything is enrolled', async () => {
    const lax = uniqueEmail('enroll-lax');
    const enrolled = await newBrowser(lax, { mfaMethod: 'email' });
    assert.equal(enrolled.body.status, 'SUCCESS');
    const claims = await claimsOf(service, enrolled.body.code);
    assert.deepEqual(claims.amr, ['otp']);
    assert.equal(claims.acr, ACR.otp);

    const strictUser = uniqueEmail('enroll-strict');
    const deviceToken = await verifiedRegistration(service, strictUser);
    await strict(async () => {
      const needed = await service.post('/v1/devices', { userid: strictUser, deviceToken });
      assert.equal(needed.body.status, 'MFA_ENROLLMENT_NEEDED');
      assert.ok(!needed.body.methods.includes('email'), 'email is not offered where it cannot count');
      const byMail = await service.post('/v1/devices', { userid: strictUser, deviceToken, mfaMethod: 'email' });
      assert.deepEqual([byMail.status, byMail.body.code], [403, 'ERR_MFA_UNAVAILABLE']);
    });
    assert.equal(await service.ctx.mfa.methodOf(await userIdOf(strictUser)), undefined, 'nothing was enrolled');
  });

  it('a remembered device (its key registered before this sign-in) with email MFA still earns mfa at a strict application: swk mfa email, acr mfa', async () => {
    const { email, device } = await emailMfaUser('remembered');
    await strict(async () => {
      const challenged = await rememberedLogin(email, device);
      assert.equal(challenged.body.status, 'MFA_REQUIRED', JSON.stringify(challenged.body));
      assert.equal(challenged.body.method, 'email');
      assert.equal((await service.post('/v1/mfa/initiate', { userid: email, sessionId: challenged.body.sessionId })).status, 200);
      const verified = await service.post('/v1/mfa/verify', {
        userid: email,
        sessionId: challenged.body.sessionId,
        otp: await service.latestOtp(email),
      });
      assert.equal(verified.body.status, 'SUCCESS', JSON.stringify(verified.body));
      const claims = await claimsOf(service, verified.body.code);
      assert.deepEqual(claims.amr, ['swk', 'mfa', 'email']);
      assert.equal(claims.acr, ACR.mfa);
    });
  });
});
