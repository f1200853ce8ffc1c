/**
 * Passing someone else's passkey MFA step. The attacker knows the victim's address and first
 * factor (a stolen remembered device), so holds the victim's MFA session, but not the victim's
 * authenticator: they answer with their own valid passkey, with a passkey whose user
 * verification was skipped, with a revoked passkey, or with 6-digit codes; or they keep trying.
 * Each answer is refused, each passkey answer spends one of the session's MFA_MAX_ATTEMPTS
 * before it is checked (a code is refused before counting: it can never be right), and past
 * the cap even the right passkey is refused. Runs on SQLite and, with SERVICE_TEST_DATABASE_URL,
 * on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Paths } from 'service-protocol';
import { MFA_MAX_ATTEMPTS } from '../../../src/defaults.js';
import { APP_ORIGIN, loginWithDevice, startTestService, type TestService } from '../../support/helpers.js';
import { getAssertion } from '../../support/webauthn-authenticator.js';
import { passkeyMfaOptions, passkeyMfaStep, userWithPasskey, userWithPasskeyMfa } from '../../support/webauthn-helpers.js';

describe("passkey MFA: answering with a passkey that is not the user's", () => {
  let service: TestService;
  before(async () => {
    service = await startTestService({ testMode: true });
  });
  after(() => service.close());

  const refusedPasskey = (r: { status: number; body: any }, remaining: number) => {
    assert.equal(r.status, 401, JSON.stringify(r.body));
    assert.equal(r.body.code, 'ERR_PASSKEY_INVALID');
    assert.equal(r.body.attemptsRemaining, remaining);
  };
  const refusals = async (userId: string, reason: string) =>
    (await service.ctx.events.list({ type: 'passkey.refused', userId, limit: 100 })).events.filter(
      (e) => (e.detail as { reason: string; step?: string }).reason === reason && (e.detail as { step?: string }).step === 'mfa',
    ).length;

  it("another user's valid passkey is refused and counted; the victim's still passes after", async () => {
    const victim = await userWithPasskeyMfa(service);
    const attacker = await userWithPasskey(service);
    const step = await loginWithDevice(service, victim.device, victim.email);
    const options = await passkeyMfaOptions(service, victim.email, step.sessionId);
    // The attacker's authenticator signs the victim's challenge (allowCredentials is only a hint to the browser).
    const forged = getAssertion(options, attacker.credential, { origin: APP_ORIGIN });
    refusedPasskey(
      await service.post(Paths.passkeyMfaVerify, { userid: victim.email, sessionId: step.sessionId, credential: forged }),
      MFA_MAX_ATTEMPTS - 1,
    );
    const victimId = (await service.ctx.enabledUsers.findByEmail(victim.email))?.id as string;
    assert.equal(await refusals(victimId, 'user'), 1, 'recorded against the victim, as an MFA step');
    const ok = await passkeyMfaStep(service, victim.email, step.sessionId, victim.credential);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
  });

  it('an assertion without user verification, and a revoked passkey, are refused and counted', async () => {
    const { email, credential, device } = await userWithPasskeyMfa(service);
    const userId = (await service.ctx.enabledUsers.findByEmail(email))?.id as string;
    const spare = await userWithPasskey(service, { email, device: device as Parameters<typeof userWithPasskey>[1]['device'] & object });
    await service.ctx.deviceService.revoke(service.clientId, userId, spare.passkeyId);
    const step = await loginWithDevice(service, device, email);
    const noUv = await passkeyMfaStep(service, email, step.sessionId, credential, { ceremony: { uv: false } });
    refusedPasskey(noUv, MFA_MAX_ATTEMPTS - 1);
    const revoked = await passkeyMfaStep(service, email, step.sessionId, spare.credential);
    refusedPasskey(revoked, MFA_MAX_ATTEMPTS - 2);
    assert.equal(await refusals(userId, 'verification'), 1);
    assert.equal(await refusals(userId, 'unknown'), 1);
  });

  it(`a 6-digit code is refused before counting; after ${MFA_MAX_ATTEMPTS} refused passkeys even the right one is refused`, async () => {
    const victim = await userWithPasskeyMfa(service);
    const attacker = await userWithPasskey(service);
    const step = await loginWithDevice(service, victim.device, victim.email);
    for (let i = 0; i < 3; i++) {
      const code = await service.post(Paths.mfaVerify, { userid: victim.email, sessionId: step.sessionId, otp: `00000${i}` });
      assert.equal(code.status, 400);
      assert.equal(code.body.code, 'ERR_REQUEST_INVALID');
    }
    for (let i = 0; i < MFA_MAX_ATTEMPTS; i++) {
      refusedPasskey(await passkeyMfaStep(service, victim.email, step.sessionId, attacker.credential), MFA_MAX_ATTEMPTS - 1 - i);
    }
    const late = await passkeyMfaStep(service, victim.email, step.sessionId, victim.credential);
    assert.equal(late.status, 400, JSON.stringify(late.body));
    assert.equal(late.body.code, 'ERR_SESSION_INVALID');
  });

  it(`${MFA_MAX_ATTEMPTS * 3} forged assertions at once: at most ${MFA_MAX_ATTEMPTS} are checked`, async () => {
    const victim = await userWithPasskeyMfa(service);
    const attacker = await userWithPasskey(service);
    const step = await loginWithDevice(service, victim.device, victim.email);
    const forged = await Promise.all(
      Array.from({ length: MFA_MAX_ATTEMPTS * 3 }, async () => {
        const options = await passkeyMfaOptions(service, victim.email, step.sessionId);
        return getAssertion(options, attacker.credential, { origin: APP_ORIGIN });
      }),
    );
    const answers = await Promise.all(
      forged.map((credential) => service.post(Paths.passkeyMfaVerify, { userid: victim.email, sessionId: step.sessionId, credential })),
    );
    assert.equal(answers.filter((a) => a.body.code === 'ERR_PASSKEY_INVALID').length, MFA_MAX_ATTEMPTS);
    assert.equal(answers.filter((a) => a.body.code === 'ERR_SESSION_INVALID').length, MFA_MAX_ATTEMPTS * 2);
  });
});
