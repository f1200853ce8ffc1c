/**
 * Attack: an application replacing a user's second factor on its own. Delegation lets any
 * application the user ever signed in to ask for an MFA change. If the new method's code
 * alone confirmed it, an application (or whoever holds its delegation keys) could move a
 * user to TOTP, receive the new secret, compute the confirming code itself, and so own the
 * second factor every other application relies on. A change must therefore be proven with a
 * code of the factor in force first; only then is the new method's code (or secret) issued.
 * Every enrollment and change is told to the user by mail. A correctly signed request whose
 * fields have the wrong types gets the documented sealed failure, never a 500.
 */
import assert from 'node:assert/strict';
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { CompactEncrypt, SignJWT } from 'jose';
import * as OTPAuth from 'otpauth';
import type { ServiceDelegationClient } from 'service-oauth-client';
import { openEnvelope, requestClaims } from 'service-oauth-client/delegation';
import { MFA_MAX_ATTEMPTS } from '../../src/defaults.js';
import { delegationFor, startTestService, type TestService, uniqueEmail, verifiedRegistration } from '../support/helpers.js';

const totpNow = (secret: string, offsetSteps = 0) =>
  new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) }).generate({ timestamp: Date.now() + offsetSteps * 30_000 });

describe('MFA changes need the factor in force', () => {
  let service: TestService;
  /** Two applications the user signed in to: A set up the user's TOTP, B never saw its secret. */
  let appA: ServiceDelegationClient;
  let appB: ServiceDelegationClient;
  let keysB: Awaited<ReturnType<TestService['ctx']['delegation']['createKeys']>>;
  let clientB: string;

  before(async () => {
    service = await startTestService({ testMode: true });
    appA = (await delegationFor(service, service.clientId)).client;
    clientB = (await service.ctx.clients.create({ name: 'Other App', origins: ['http://other.test:3000'] })).clientId;
    const b = await delegationFor(service, clientB);
    appB = b.client;
    keysB = b.keys;
  });
  after(() => service.close());

  /** A user of both applications (signed in to each), without MFA. */
  async function userOfBoth(label: string) {
    const email = uniqueEmail(label);
    const user = await service.ctx.enabledUsers.findOrCreate(email, Date.now());
    await service.ctx.clients.recordSignIn(service.clientId, user.id);
    await service.ctx.clients.recordSignIn(clientB, user.id);
    return email;
  }
  const mails = (email: string) => service.ctx.mailbox.list(20, email);
  const mailCode = async (email: string) => (await mails(email))[0]?.text.match(/\b(\d{6})\b/)?.[1] as string;
  const smsCode = async (phone: string) => (await service.ctx.smsOutbox.list(1, phone))[0]?.body.match(/\b(\d{6})\b/)?.[1] as string;

  /** The user enrolls in TOTP through application A; returns the secret their app holds. */
  async function totpUser(label: string) {
    const email = await userOfBoth(label);
    const started = await appA.initiateMfaChange({ userid: email, mfaMethod: 'totp' });
    assert.equal(started.status, 'totp_pending', 'no factor yet: the new method is confirmed directly');
    assert.equal(
      (await appA.verifyMfaChange({ userid: email, sessionId: started.session_id, otp: totpNow(started.secret as string) })).status,
      'success',
    );
    return { email, secret: started.secret as string };
  }

  it('another application cannot move a TOTP user to a factor it holds: no secret, no code, no change', async () => {
    const { email } = await totpUser('takeover');
    const attempt = await appB.initiateMfaChange({ userid: email, mfaMethod: 'totp' });
    assert.equal(attempt.status, 'current_factor_needed');
    assert.equal(attempt.current_method, 'totp');
    assert.equal(attempt.secret, undefined, 'the new secret is not handed out before the current factor');
    assert.equal(attempt.otpauth_uri, undefined);
    // B can only guess the current factor's code: capped, and nothing changes.
    for (let i = 0; i < MFA_MAX_ATTEMPTS + 1; i++) {
      const guess = await appB.verifyMfaChange({ userid: email, sessionId: attempt.session_id, otp: String(100000 + i) });
      assert.equal(guess.status, 'failed');
    }
    assert.equal((await appB.getUserCredentials(email)).mfa_method, 'totp');
    // An email change by B: the code goes nowhere until the current factor is proven.
    const before = (await mails(email)).length;
    const toEmail = await appB.initiateMfaChange({ userid: email, mfaMethod: 'email' });
    assert.equal(toEmail.status, 'current_factor_needed');
    assert.equal((await mails(email)).length, before, 'no code was mailed: the current factor is TOTP');
  });

  it('a TOTP user changes with the current code, then the new method`s code; told by mail', async () => {
    const { email, secret } = await totpUser('totp-change');
    const started = await appB.initiateMfaChange({ userid: email, mfaMethod: 'sms', phoneNumber: '+14155550142' });
    assert.deepEqual([started.status, started.current_method], ['current_factor_needed', 'totp']);
    assert.equal(await smsCode('+14155550142'), undefined, 'the new number gets nothing yet');
    // The enrollment used this step; the next one is the user's next code.
    const proven = await appB.verifyMfaChange({ userid: email, sessionId: started.session_id, otp: totpNow(secret, 1) });
    assert.equal(proven.status, 'otp_sent');
    const otp = await smsCode('+14155550142');
    assert.ok(otp, 'the new number got its code once the current factor was proven');
    assert.equal((await appB.verifyMfaChange({ userid: email, sessionId: started.session_id, otp })).status, 'success');
    assert.equal((await appB.getUserCredentials(email)).mfa_method, 'sms');
    const [notice] = await mails(email);
    assert.match(notice?.subject ?? '', /verification method changed/);
    assert.match(notice?.text ?? '', /is now: sms/);
    assert.match(notice?.text ?? '', /Other App/, 'names the application that made the change');
  });

  it('an email user proves the mailbox code first; the TOTP secret comes only after, and the current code is spent', async () => {
    const email = await userOfBoth('email-change');
    const enroll = await appA.initiateMfaChange({ userid: email, mfaMethod: 'email' });
    assert.equal(
      (await appA.verifyMfaChange({ userid: email, sessionId: enroll.session_id, otp: await mailCode(email) })).status,
      'success',
    );

    const started = await appA.initiateMfaChange({ userid: email, mfaMethod: 'totp' });
    assert.deepEqual([started.status, started.current_method, started.secret], ['current_factor_needed', 'email', undefined]);
    const current = await mailCode(email);
    assert.match((await mails(email))[0]?.subject ?? '', /verification code/);
    const next = await appA.verifyMfaChange({ userid: email, sessionId: started.session_id, otp: current });
    assert.equal(next.status, 'totp_pending');
    assert.ok('secret' in next && next.secret);
    const secret = (next as { secret: string }).secret;
    const replay = await appA.verifyMfaChange({ userid: email, sessionId: started.session_id, otp: current });
    assert.equal(replay.status, 'failed', 'the current factor`s code does not confirm the new method');
    assert.equal((await appA.verifyMfaChange({ userid: email, sessionId: started.session_id, otp: totpNow(secret) })).status, 'success');
    assert.equal((await appA.getUserCredentials(email)).mfa_method, 'totp');
  });

  it('a sign-in followed at once by an MFA change never meets the resend spacing', async () => {
    const email = uniqueEmail('signin-then-change');
    const r = await service.post('/v1/devices', {
      userid: email,
      deviceToken: await verifiedRegistration(service, email),
      mfaMethod: 'email',
    });
    assert.equal(r.body.status, 'SUCCESS', 'signed in (the sign-in code was just mailed) and enrolled in email');
    const user = await service.ctx.enabledUsers.findByEmail(email);
    await service.ctx.clients.recordSignIn(service.clientId, user?.id as string);
    const started = await appA.initiateMfaChange({ userid: email, mfaMethod: 'email' });
    assert.equal(started.status, 'current_factor_needed', started.message);
    const next = await appA.verifyMfaChange({ userid: email, sessionId: started.session_id, otp: await mailCode(email) });
    assert.equal(next.status, 'otp_sent', 'the new method`s code follows the current one at once');
  });

  it('tells the user by mail of an enrollment at device registration, by email at once and by TOTP once confirmed', async () => {
    const byEmail = uniqueEmail('enroll-mail');
    const r = await service.post('/v1/devices', {
      userid: byEmail,
      deviceToken: await verifiedRegistration(service, byEmail),
      mfaMethod: 'email',
    });
    assert.equal(r.body.status, 'SUCCESS');
    const [mailNotice] = await mails(byEmail);
    assert.match(mailNotice?.subject ?? '', /Two-step verification is now on for your Test App account/);
    assert.match(mailNotice?.text ?? '', /by: email/);

    const byTotp = uniqueEmail('enroll-totp');
    const started = await service.post('/v1/devices', {
      userid: byTotp,
      deviceToken: await verifiedRegistration(service, byTotp),
      mfaMethod: 'totp',
    });
    assert.equal(started.body.status, 'FINALIZE_REGISTRATION_NEEDED');
    assert.doesNotMatch((await mails(byTotp))[0]?.subject ?? '', /Two-step/, 'not before it is confirmed');
    const confirmed = await service.post('/v1/mfa/verify', {
      userid: byTotp,
      sessionId: started.body.sessionId,
      otp: totpNow(started.body.secret),
    });
    assert.equal(confirmed.status, 200, JSON.stringify(confirmed.body));
    assert.match((await mails(byTotp))[0]?.text ?? '', /Two-step verification is now on .* by: totp/);
  });

  describe('a signed request with fields of the wrong type', () => {
    /** A correctly signed and encrypted request from B with any body (jose directly: the library refuses bad input). */
    const seal = async (op: string, body: unknown) => {
      const claims = requestClaims({ iss: clientB, aud: service.url, op: op as never, body: {} as never, ttlSeconds: 60 });
      const jws = await new SignJWT({ ...claims, body } as never)
        .setProtectedHeader({ alg: 'EdDSA', typ: 'delegation+jwt' })
        .sign(createPrivateKey(keysB.sp?.signingPrivatePem as string));
      const jwe = await new CompactEncrypt(new TextEncoder().encode(jws))
        .setProtectedHeader({ alg: 'ECDH-ES', enc: 'A256GCM', cty: 'JWT', typ: 'delegation+jwe' })
        .encrypt(createPublicKey(keysB.idp.encryptionPublicPem));
      return { jwe, jti: claims.jti };
    };
    const FIELDS = {
      initiate_mfa_change: { userid: 'a@example.com', mfaMethod: 'email', phoneNumber: '+14155550100' },
      verify_mfa_change: { userid: 'a@example.com', sessionId: 'mfa_xxxxxxxxxxxxxxxx', otp: '123456' },
      get_user_credentials: { userid: 'a@example.com' },
      list_devices: { userid: 'a@example.com' },
      revoke_device: { userid: 'a@example.com', deviceId: 'dev_xxxxxxxxxxxxxxxxxxxxxx' },
      revoke_all_devices: { userid: 'a@example.com' },
    } as const;
    const wrongValue = fc.oneof(
      fc.integer(),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.string(), { maxLength: 3 }),
      fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 3 }),
      fc.string({ minLength: 321, maxLength: 400 }),
    );

    it('gets the operation`s sealed failure for every field of every operation, never a 500', async () => {
      const cases = Object.entries(FIELDS).flatMap(([op, body]) =>
        Object.keys(body).flatMap((field) => [
          { op, field, value: undefined as unknown },
          ...fc.sample(wrongValue, { numRuns: 6, seed: field.length * 7 + op.length }).map((value) => ({ op, field, value })),
        ]),
      );
      for (const { op, field, value } of cases) {
        const body: Record<string, unknown> = { ...FIELDS[op as keyof typeof FIELDS] };
        if (value === undefined) delete body[field];
        else body[field] = value;
        const { jwe, jti } = await seal(op, body);
        const response = await fetch(`${service.url}/v1/delegation`, {
          method: 'POST',
          headers: { 'content-type': 'application/jose' },
          body: jwe,
        });
        const label = `${op}.${field} = ${JSON.stringify(value)?.slice(0, 40)}`;
        if (value === undefined && field === 'phoneNumber') {
          assert.equal(response.status, 200, label); // optional: the request proceeds
          await response.arrayBuffer();
          continue;
        }
        assert.equal(response.status, 200, label);
        const opened = await openEnvelope(await response.text(), {
          decryptionKey: createPrivateKey(keysB.sp?.encryptionPrivatePem as string),
          verifyKey: createPublicKey(keysB.idp.verifyPublicPem),
          audience: clientB,
          issuer: service.url,
          expectedOp: op as never,
          inResponseTo: jti,
        });
        const result = (opened as { result: Record<string, unknown> }).result;
        assert.equal(result.status, 'failed', label);
        assert.match(String(result.message), new RegExp(`field ${field} must be a string`), label);
      }
    });
  });
});
