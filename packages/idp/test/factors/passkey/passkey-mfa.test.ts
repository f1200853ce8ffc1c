/**
 * A passkey as the user's MFA method (issue #15): enrollment at a new device's registration
 * (verifyDevice with mfaMethod passkey, then the passkey's creation bound to that MFA session),
 * the MFA step of later sign-ins by an assertion bound to the MFA session, remember_me, amr and
 * acr, recovery codes, initiateMfa's answer, a passkey sign-in without an address reaching the
 * MFA step, the delegation API, and the last passkey's revocation. The threats have their own
 * files (passkey-mfa-*.security.test.ts). Runs on SQLite and, with SERVICE_TEST_DATABASE_URL,
 * on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Paths } from 'service-protocol';
import { RECOVERY_CODE_COUNT } from '../../../src/defaults.js';
import { ACR } from '../../../src/oidc/acr.js';
import {
  APP_ORIGIN,
  claimsOf,
  delegationFor,
  loginWithDevice,
  newRawDevice,
  sendClock,
  startTestService,
  type TestService,
} from '../../support/helpers.js';
import { getAssertion } from '../../support/webauthn-authenticator.js';
import {
  newDeviceMfaSession,
  passkeyMfaOptions,
  passkeyMfaStep,
  signInWithPasskey,
  userWithPasskey,
  userWithPasskeyMfa,
} from '../../support/webauthn-helpers.js';

const RP_ID = new URL('http://app.test:3000').hostname;

describe('a passkey as the MFA method', () => {
  let service: TestService;
  // A second registration of one address within the send spacing would be refused: the clock moves past it.
  const clock = sendClock();
  before(async () => {
    service = await startTestService({ testMode: true, now: clock.now });
  });
  after(() => service.close());

  // First: the envelopes' iat must not run ahead of the service's clock, which later tests move.
  it('getUserCredentials reports passkey; initiateMfaChange refuses to move a user to a passkey; a passkey user changes with a recovery code', async () => {
    const { client } = await delegationFor(service, service.clientId);
    const { email, enrolled } = await userWithPasskeyMfa(service);
    await claimsOf(service, enrolled.code); // the user has signed in to the application
    assert.deepEqual(await client.getUserCredentials(email), { mfa_method: 'passkey', status: 'enrolled' });
    await assert.rejects(
      client.initiateMfaChange({ userid: email, mfaMethod: 'passkey' as never }),
      (error: Error & { code?: string }) => error.code === 'ERR_DELEGATION_INPUT_INVALID',
    );
    const started = await client.initiateMfaChange({ userid: email, mfaMethod: 'email' });
    assert.equal(started.status, 'current_factor_needed');
    assert.equal(started.current_method, 'passkey');
    assert.match(started.message ?? '', /recovery code/);
    const byCode = await client.verifyMfaChange({ userid: email, sessionId: started.session_id, otp: '123456' });
    assert.equal(byCode.status, 'failed');
    assert.match(byCode.message ?? '', /recovery code/);
    const next = await client.verifyMfaChange({ userid: email, sessionId: started.session_id, otp: enrolled.recoveryCodes[1] });
    assert.equal(next.status, 'otp_sent');
    // The service's clock stands still here (sendClock): find the code's mail by its subject.
    const mail = (await service.ctx.mailbox.list(20, email)).find((m) => /verification code/.test(m.subject));
    const code = mail?.text.match(/\b(\d{6})\b/)?.[1] as string;
    const done = await client.verifyMfaChange({ userid: email, sessionId: started.session_id, otp: code });
    assert.equal(done.status, 'success');
    assert.equal((await client.getUserCredentials(email)).mfa_method, 'email');
  });

  it('is offered among the methods to enroll, and enrolled at a registration: creation options, then a code, recovery codes, a mail', async () => {
    const { email, options, enrolled, device } = await userWithPasskeyMfa(service);
    assert.equal(options.rp.id, RP_ID);
    assert.deepEqual(options.authenticatorSelection, { residentKey: 'required', requireResidentKey: true, userVerification: 'required' });
    assert.equal(enrolled.status, 'SUCCESS');
    assert.equal(enrolled.recoveryCodes.length, RECOVERY_CODE_COUNT);
    assert.match(device.deviceId as string, /^dev_/, 'the new browser is remembered, as at every enrollment');
    const claims = await claimsOf(service, enrolled.code);
    assert.deepEqual(claims.amr, ['otp', 'mfa', 'hwk', 'user']);
    assert.equal(claims.acr, ACR.phishingResistant);
    const user = await service.ctx.enabledUsers.findByEmail(email);
    assert.equal((await service.ctx.mfa.methodOf(user?.id as string))?.method, 'passkey');
    const mails = await service.ctx.mailbox.list(10, email);
    assert.ok(
      mails.some((m) => /Two-step verification is now on/.test(m.subject) && /by: passkey/.test(m.text)),
      'the user is told',
    );
    const listed = await service.ctx.passkeys.list(service.clientId, user?.id as string);
    assert.equal(listed.length, 1, 'the passkey joins the device list');
  });

  it('passes the MFA step of a new device with the passkey: initiateMfa says so, a 6-digit code is refused uncounted, the assertion ends in a code', async () => {
    const { email, credential } = await userWithPasskeyMfa(service);
    clock.tick();
    const { sessionId, method } = await newDeviceMfaSession(service, email);
    assert.equal(method, 'passkey');
    const initiated = await service.post(Paths.mfaInitiate, { userid: email, sessionId });
    assert.equal(initiated.status, 200);
    assert.equal(initiated.body.method, 'passkey');
    assert.match(initiated.body.message, /passkey/);
    const code = await service.post(Paths.mfaVerify, { userid: email, sessionId, otp: '123456' });
    assert.equal(code.status, 400);
    assert.equal(code.body.code, 'ERR_REQUEST_INVALID');
    const options = await passkeyMfaOptions(service, email, sessionId);
    assert.equal(options.userVerification, 'required');
    assert.deepEqual(
      options.allowCredentials.map((c: { id: string }) => c.id),
      [credential.id.toString('base64url')],
    );
    const r = await passkeyMfaStep(service, email, sessionId, credential);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.status, 'SUCCESS');
    assert.equal(r.body.success, true);
    const claims = await claimsOf(service, r.body.code);
    assert.deepEqual(claims.amr, ['otp', 'mfa', 'hwk', 'user']);
    assert.equal(claims.acr, ACR.phishingResistant);
    const attempts = await service.ctx.events.list({ type: 'passkey.refused', limit: 100 });
    assert.ok(!attempts.events.some((e) => e.userId === claims.sub), 'nothing was refused');
  });

  it('a new device remembered at the MFA step keeps the key service-web/passkeys sends (devicePublicKey), checked before anything is spent', async () => {
    const { email, credential } = await userWithPasskeyMfa(service);
    clock.tick();
    const { device: sentAtDevices, sessionId } = await newDeviceMfaSession(service, email);
    const kept = await newRawDevice();
    const options = await passkeyMfaOptions(service, email, sessionId);
    const assertion = getAssertion(options, credential, { origin: APP_ORIGIN });
    const bad = await service.post(Paths.passkeyMfaVerify, {
      userid: email,
      sessionId,
      credential: assertion,
      devicePublicKey: { ...kept.publicJwk, y: kept.publicJwk.x },
    });
    assert.equal(bad.status, 400, JSON.stringify(bad.body));
    assert.equal(bad.body.code, 'ERR_DEVICE_KEY_INVALID');
    const r = await service.post(Paths.passkeyMfaVerify, {
      userid: email,
      sessionId,
      credential: assertion,
      devicePublicKey: kept.publicJwk,
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.match(r.body.deviceId, /^dev_/);
    kept.deviceId = r.body.deviceId;
    sentAtDevices.deviceId = r.body.deviceId;
    assert.equal((await loginWithDevice(service, kept, email)).status, 'MFA_REQUIRED', 'the kept key proves the device');
    // The key sent at /v1/devices was replaced: its proof is refused (the email OTP follows, here still within its send spacing).
    const old = await loginWithDevice(service, sentAtDevices, email);
    assert.ok(old.status !== 'MFA_REQUIRED' && old.status !== 'SUCCESS', JSON.stringify(old));
  });

  it('a synced passkey reports swk (acr mfa, not phishing-resistant), on a remembered device', async () => {
    const { email, credential, device } = await userWithPasskeyMfa(service, { synced: true });
    const { sessionId } = await loginWithDevice(service, device, email);
    const r = await passkeyMfaStep(service, email, sessionId, credential, { ceremony: { synced: true } });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const claims = await claimsOf(service, r.body.code);
    assert.deepEqual(claims.amr, ['swk', 'mfa', 'user'], 'the remembered device (swk) and the synced passkey (swk): one value');
    assert.equal(claims.acr, ACR.mfa);
  });

  it('remember_me: a remembered device signs in without the MFA step; without it, the step is asked again', async () => {
    const { email, credential, device } = await userWithPasskeyMfa(service);
    const again = await loginWithDevice(service, device, email);
    assert.equal(again.status, 'MFA_REQUIRED', 'the enrollment did not remember the device');
    const r = await passkeyMfaStep(service, email, again.sessionId, credential, { rememberMe: true });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const next = await loginWithDevice(service, device, email);
    assert.equal(next.status, 'SUCCESS', JSON.stringify(next));
  });

  it('a recovery code still passes the MFA step (through the core verifyMfa) and does not remember the device', async () => {
    const { email, enrolled, device } = await userWithPasskeyMfa(service);
    const step = await loginWithDevice(service, device, email);
    assert.equal(step.status, 'MFA_REQUIRED');
    const r = await service.post(Paths.mfaVerify, {
      userid: email,
      sessionId: step.sessionId,
      otp: enrolled.recoveryCodes[0],
      rememberMe: true,
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual((await claimsOf(service, r.body.code)).amr, ['swk', 'mfa', 'recovery_code']);
    assert.equal((await loginWithDevice(service, device, email)).status, 'MFA_REQUIRED');
  });

  it("an application that does not count a passkey as MFA: a passkey sign-in without an address gets the user's address and passes the MFA step", async () => {
    const { email, credential, device } = await userWithPasskeyMfa(service);
    await service.ctx.operations.setPasskeyMfa(service.clientId, 'no', 'test');
    try {
      const signIn = await signInWithPasskey(service, credential);
      assert.equal(signIn.body.status, 'MFA_REQUIRED', JSON.stringify(signIn.body));
      assert.equal(signIn.body.userid, email, 'the address comes back with the MFA session');
      assert.equal(signIn.body.method, 'passkey');
      const r = await passkeyMfaStep(service, signIn.body.userid, signIn.body.sessionId, credential);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.deepEqual((await claimsOf(service, r.body.code)).amr, ['hwk', 'user', 'mfa']);
      // The same for a user whose method is email: the address reaches initiateMfa.
      const other = await userWithPasskey(service);
      void device;
      const plain = await signInWithPasskey(service, other.credential);
      assert.equal(plain.body.status, 'SUCCESS', 'a user without MFA signs in');
    } finally {
      await service.ctx.operations.setPasskeyMfa(service.clientId, 'yes', 'test');
    }
  });

  it('revoking one of two passkeys keeps the method; revoking the last falls back to email MFA, tells the user by mail and records it', async () => {
    const { email, credential, device } = await userWithPasskeyMfa(service);
    const user = await service.ctx.enabledUsers.findByEmail(email);
    const userId = user?.id as string;
    const second = await userWithPasskey(service, { email, device: device as Parameters<typeof userWithPasskey>[1]['device'] & object });
    const [first] = (await service.ctx.passkeys.list(service.clientId, userId)).filter(
      (p) => p.credentialId === credential.id.toString('base64url'),
    );
    await service.ctx.deviceService.revoke(service.clientId, userId, first?.id as string);
    assert.equal((await service.ctx.mfa.methodOf(userId))?.method, 'passkey', 'another passkey remains');
    const mailsBefore = (await service.ctx.mailbox.list(20, email)).length;
    await service.ctx.users.revokeDevice(second.passkeyId, 'admin:test');
    assert.equal((await service.ctx.mfa.methodOf(userId))?.method, 'email');
    const mails = await service.ctx.mailbox.list(20, email);
    assert.equal(mails.length, mailsBefore + 1);
    const notice = mails.find((m) => /now asks for a code by email/.test(m.subject));
    assert.match(notice?.text ?? '', /last passkey .* was removed/);
    const [changed] = (await service.ctx.events.list({ userId, type: 'mfa.changed', limit: 5 })).events;
    assert.deepEqual(changed?.detail, { method: 'email', from: 'passkey', reason: 'last_passkey_revoked' });
    assert.equal(changed?.actor, 'admin:test');
    const step = await loginWithDevice(service, device, email);
    assert.equal(step.status, 'MFA_REQUIRED');
    assert.equal(step.method, 'email', 'the next sign-in asks for an emailed code, not a passkey the user no longer has');
  });
});
