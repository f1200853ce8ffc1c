/**
 * MFA delegation end to end: the SP's backend (ServiceDelegationClient from
 * service-oauth-client) against the running service, with keys made by the service, for each
 * method; and the service refusing envelopes that are replayed, expired, re-addressed,
 * tampered with or signed by another key.
 */
import assert from 'node:assert/strict';
import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { CompactEncrypt, SignJWT } from 'jose';
import * as OTPAuth from 'otpauth';
import { ServiceDelegationClient } from 'service-oauth-client';
import { requestClaims } from 'service-oauth-client/delegation';
import { claimsOf, startTestService, type TestService, uniqueEmail, verifiedRegistration } from '../support/helpers.js';

describe('MFA delegation', () => {
  let service: TestService;
  let sp: ServiceDelegationClient;
  let keys: Awaited<ReturnType<TestService['ctx']['delegation']['createKeys']>>;
  before(async () => {
    service = await startTestService({ testMode: true });
    keys = await service.ctx.delegation.createKeys(service.clientId);
    sp = ServiceDelegationClient.fromKeys({
      spSigningKey: keys.sp?.signingPrivatePem as string,
      spEncryptionKey: keys.sp?.encryptionPrivatePem as string,
      idpVerifyKey: keys.idp.verifyPublicPem,
      idpEncryptionKey: keys.idp.encryptionPublicPem,
      baseUrl: service.url,
      spId: service.clientId,
      apiKey: service.secretKey,
    });
  });
  after(() => service.close());

  /** A user who signed in to the client (registration and code exchange), without MFA. */
  async function signedInUser(label = 'user') {
    const email = uniqueEmail(label);
    const r = await service.post('/v1/devices', { userid: email, deviceToken: await verifiedRegistration(service, email) });
    const claims = await claimsOf(service, r.body.code);
    return { email, sub: claims.sub as string };
  }
  /**
   * A user who has signed in to the client, set up directly: the change tests need the
   * address's mail budget untouched by a sign-in code (the sign-in path itself is tested above).
   */
  async function knownUser(label: string) {
    const email = uniqueEmail(label);
    const user = await service.ctx.enabledUsers.findOrCreate(email, Date.now());
    if (!user) throw new Error(`${email} is disabled`);
    await service.ctx.clients.recordSignIn(service.clientId, user.id);
    return { email, sub: user.id };
  }
  const mailCode = async (email: string) => (await service.ctx.mailbox.list(1, email))[0]?.text.match(/\b(\d{6})\b/)?.[1] as string;

  it('reads credentials: the same shape for an unknown user, a user without MFA, and a user of another client', async () => {
    const user = await signedInUser();
    const none = await sp.getUserCredentials(user.email);
    assert.deepEqual(none, { mfa_method: 'none', status: 'not_enrolled', message: 'No MFA method is enrolled.' });
    assert.deepEqual(await sp.getUserCredentials(user.sub), none, 'by user id too');
    assert.deepEqual(await sp.getUserCredentials('nobody@example.com'), none);
  });

  it('sets the method to email for a user without one: code by mail, applied once, and the user is told', async () => {
    const user = await knownUser('email');
    const started = await sp.initiateMfaChange({ userid: user.email, mfaMethod: 'email' });
    assert.equal(started.status, 'otp_sent');
    assert.ok(started.session_id);
    const verified = await sp.verifyMfaChange({ userid: user.email, sessionId: started.session_id, otp: await mailCode(user.email) });
    assert.equal(verified.status, 'success');
    assert.equal((await sp.getUserCredentials(user.email)).mfa_method, 'email');
    const [notice] = await service.ctx.mailbox.list(1, user.email);
    assert.match(notice?.subject ?? '', /Two-step verification is now on/);
    assert.match(notice?.text ?? '', /by: email/);
    const { events } = await service.ctx.events.list({ userId: user.sub, limit: 10 });
    assert.deepEqual(
      events.filter((e) => e.type === 'mfa.enrolled').map((e) => [e.clientId, e.detail]),
      [[service.clientId, { method: 'email' }]],
    );
    const calls = (await service.ctx.events.list({ type: 'delegation.called', limit: 1000 })).events;
    assert.ok(calls.some((e) => e.clientId === service.clientId && e.detail?.op === 'verify_mfa_change'));
  });

  it('changes the method to SMS, with the code sent to the new number', async () => {
    const user = await signedInUser('sms');
    const phone = '+14155550199';
    const started = await sp.initiateMfaChange({ userid: user.email, mfaMethod: 'sms', phoneNumber: phone });
    assert.equal(started.status, 'otp_sent');
    const otp = (await service.ctx.smsOutbox.list(1, phone))[0]?.body.match(/\b(\d{6})\b/)?.[1] as string;
    assert.equal((await sp.verifyMfaChange({ userid: user.email, sessionId: started.session_id, otp })).status, 'success');
    assert.equal((await sp.getUserCredentials(user.email)).mfa_method, 'sms');
  });

  it('changes the method to TOTP, confirmed by the first code of an independent authenticator', async () => {
    const user = await signedInUser('totp');
    const started = await sp.initiateMfaChange({ userid: user.email, mfaMethod: 'totp' });
    assert.equal(started.status, 'totp_pending');
    assert.match(started.otpauth_uri as string, /^otpauth:\/\/totp\//);
    const otp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(started.secret as string) }).generate({
      timestamp: Date.now(),
    });
    assert.equal((await sp.verifyMfaChange({ userid: user.email, sessionId: started.session_id, otp })).status, 'success');
    assert.equal((await sp.getUserCredentials(user.email)).mfa_method, 'totp');
  });

  it('allows at most 5 wrong codes, and the right code in 10 parallel requests applies once', async () => {
    const user = await signedInUser('guess');
    const started = await sp.initiateMfaChange({ userid: user.email, mfaMethod: 'sms', phoneNumber: '+14155550177' });
    const otp = (await service.ctx.smsOutbox.list(1, '+14155550177'))[0]?.body.match(/\b(\d{6})\b/)?.[1] as string;
    const wrong = String((Number(otp) + 1) % 1_000_000).padStart(6, '0');
    for (let i = 0; i < 5; i++)
      assert.equal((await sp.verifyMfaChange({ userid: user.email, sessionId: started.session_id, otp: wrong })).status, 'failed');
    assert.equal(
      (await sp.verifyMfaChange({ userid: user.email, sessionId: started.session_id, otp })).status,
      'failed',
      'the sixth is refused even when right',
    );

    const again = await signedInUser('race');
    const second = await sp.initiateMfaChange({ userid: again.email, mfaMethod: 'sms', phoneNumber: '+14155550166' });
    const code = (await service.ctx.smsOutbox.list(1, '+14155550166'))[0]?.body.match(/\b(\d{6})\b/)?.[1] as string;
    const results = await Promise.all(
      Array.from({ length: 10 }, () => sp.verifyMfaChange({ userid: again.email, sessionId: second.session_id, otp: code })),
    );
    assert.equal(results.filter((r) => r.status === 'success').length, 1);
  });

  it('refuses to act on a user who never signed in to this client', async () => {
    const email = uniqueEmail('elsewhere');
    // Registered (email verified) but never exchanged a code with this client.
    await verifiedRegistration(service, email);
    const started = await sp.initiateMfaChange({ userid: email, mfaMethod: 'email' });
    assert.equal(started.status, 'failed');
    assert.equal((await sp.getUserCredentials(email)).mfa_method, 'none');
  });

  describe('envelopes the service refuses', () => {
    const send = (body: string) =>
      fetch(`${service.url}/v1/delegation`, { method: 'POST', headers: { 'content-type': 'application/jose' }, body }).then(async (r) => ({
        status: r.status,
        body: await r.json().catch(() => undefined),
      }));
    /**
     * A request envelope built with jose directly (the library refuses to seal bad claims), so
     * the service's own checks are what is tested.
     */
    const seal = async (overrides: Record<string, unknown> = {}, signingPem = keys.sp?.signingPrivatePem as string) => {
      const claims = {
        ...requestClaims({
          iss: service.clientId,
          aud: service.url,
          op: 'get_user_credentials',
          body: { userid: 'a@example.com' },
          ttlSeconds: 60,
        }),
        ...overrides,
      };
      const jws = await new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA', typ: 'delegation+jwt' }).sign(createPrivateKey(signingPem));
      return new CompactEncrypt(new TextEncoder().encode(jws))
        .setProtectedHeader({ alg: 'ECDH-ES', enc: 'A256GCM', cty: 'JWT', typ: 'delegation+jwe' })
        .encrypt(createPublicKey(keys.idp.encryptionPublicPem));
    };

    it('accepts a well-formed request once, and refuses its replay (across nodes: the cache is in the database)', async () => {
      const jwe = await seal();
      assert.equal((await send(jwe)).status, 200);
      const replay = await send(jwe);
      assert.equal(replay.status, 409);
      assert.equal(replay.body.code, 'ERR_DELEGATION_REPLAYED');
    });

    it('refuses expired, future-dated, over-long, re-addressed, foreign-signed and tampered requests', async () => {
      const now = Math.floor(Date.now() / 1000);
      const cases: Array<[string, Promise<string>]> = [
        ['expired', seal({ iat: now - 400, exp: now - 100 })],
        ['future-dated', seal({ iat: now + 120, exp: now + 180 })],
        ['over five minutes', seal({ iat: now, exp: now + 301 })],
        ['another audience', seal({ aud: 'https://other-idp.example' })],
        ['another issuer claimed', seal({ iss: 'cli_someone_else' })],
        ['signed by another key', seal({}, generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString())],
      ];
      for (const [label, jwe] of cases) {
        const r = await send(await jwe);
        assert.equal(r.status, 401, label);
        assert.equal(r.body.code, 'ERR_DELEGATION_INVALID', label);
      }
      const parts = (await seal()).split('.');
      const ciphertext = Buffer.from(parts[3] as string, 'base64url');
      ciphertext[0] = (ciphertext[0] as number) ^ 1;
      parts[3] = ciphertext.toString('base64url');
      assert.equal((await send(parts.join('.'))).status, 401, 'tampered ciphertext');
      assert.equal((await send('not a jwe')).status, 401);
    });

    it('refuses a wrong API key when one is sent', async () => {
      const r = await fetch(`${service.url}/v1/delegation`, {
        method: 'POST',
        headers: { 'content-type': 'application/jose', authorization: 'Bearer sk_wrong' },
        body: await seal(),
      });
      assert.equal(r.status, 401);
      assert.equal((await r.json()).code, 'ERR_CLIENT_KEY_INVALID');
    });
  });
});
