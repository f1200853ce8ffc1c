/**
 * Replaying a passkey MFA step. An attacker who saw one assertion (a proxy, a log, a shared
 * machine's memory) sends it again, alone or many times at once, or carries a challenge issued
 * for one ceremony to another: a sign-in's challenge to an MFA step, one MFA session's challenge
 * to another session of the same user, an MFA step's challenge to an enrollment. Each challenge
 * is bound by its MAC to its ceremony, its MFA session and its user, and spent once before
 * anything else is checked. Runs on SQLite and, with SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Paths } from 'service-protocol';
import { APP_ORIGIN, loginWithDevice, startTestService, type TestService } from '../../support/helpers.js';
import { createCredential, getAssertion } from '../../support/webauthn-authenticator.js';
import { passkeyMfaOptions, passkeyMfaStep, userWithPasskeyMfa } from '../../support/webauthn-helpers.js';

describe('passkey MFA: replayed and transplanted assertions', () => {
  let service: TestService;
  before(async () => {
    service = await startTestService({ testMode: true });
  });
  after(() => service.close());

  const refused = (r: { status: number; body: any }, code: string, status: number) => {
    assert.equal(r.status, status, JSON.stringify(r.body));
    assert.equal(r.body.code, code);
  };

  it("a replayed MFA assertion is refused: on its own (complete) session, and on a fresh session of the same user (its challenge is not that one's)", async () => {
    const { email, credential, device } = await userWithPasskeyMfa(service);
    const first = await loginWithDevice(service, device, email);
    const ok = await passkeyMfaStep(service, email, first.sessionId, credential);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    const replay = await service.post(Paths.passkeyMfaVerify, { userid: email, sessionId: first.sessionId, credential: ok.assertion });
    refused(replay, 'ERR_SESSION_STEP', 409); // the session is complete

    const second = await loginWithDevice(service, device, email);
    await passkeyMfaOptions(service, email, second.sessionId); // armed, so only the challenge can refuse it
    const moved = await service.post(Paths.passkeyMfaVerify, { userid: email, sessionId: second.sessionId, credential: ok.assertion });
    refused(moved, 'ERR_SESSION_INVALID', 400);
  });

  it('the same assertion sent 10 times at once passes once', async () => {
    const { email, credential, device } = await userWithPasskeyMfa(service);
    const step = await loginWithDevice(service, device, email);
    const options = await passkeyMfaOptions(service, email, step.sessionId);
    const assertion = getAssertion(options, credential, { origin: APP_ORIGIN });
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        service.post(Paths.passkeyMfaVerify, { userid: email, sessionId: step.sessionId, credential: assertion }),
      ),
    );
    assert.equal(answers.filter((a) => a.status === 200).length, 1, JSON.stringify(answers.map((a) => a.body)));
    // The others meet the spent challenge (ERR_SESSION_INVALID) or the completed session (ERR_SESSION_STEP).
    for (const a of answers.filter((x) => x.status !== 200)) assert.ok(['ERR_SESSION_INVALID', 'ERR_SESSION_STEP'].includes(a.body.code));
  });

  it("a sign-in's challenge cannot serve an MFA step, nor one session's challenge another session", async () => {
    const { email, credential, device } = await userWithPasskeyMfa(service);
    const step = await loginWithDevice(service, device, email);
    await passkeyMfaOptions(service, email, step.sessionId);
    const signInOptions = (await service.post(Paths.passkeyAuthenticationOptions, {})).body.options;
    const withSignIn = getAssertion(signInOptions, credential, { origin: APP_ORIGIN });
    refused(
      await service.post(Paths.passkeyMfaVerify, { userid: email, sessionId: step.sessionId, credential: withSignIn }),
      'ERR_SESSION_INVALID',
      400,
    );
    const other = await loginWithDevice(service, device, email);
    const otherOptions = await passkeyMfaOptions(service, email, other.sessionId);
    const withOther = getAssertion(otherOptions, credential, { origin: APP_ORIGIN });
    refused(
      await service.post(Paths.passkeyMfaVerify, { userid: email, sessionId: step.sessionId, credential: withOther }),
      'ERR_SESSION_INVALID',
      400,
    );
    // Neither spent an attempt nor the step itself: the right ceremony still passes.
    const ok = await passkeyMfaStep(service, email, step.sessionId, credential);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
  });

  it("an MFA step's challenge cannot enroll a passkey, and an MFA assertion is not an MFA sign-in's answer elsewhere", async () => {
    const { email, credential, device } = await userWithPasskeyMfa(service);
    const step = await loginWithDevice(service, device, email);
    const options = await passkeyMfaOptions(service, email, step.sessionId);
    // An attestation made over the MFA step's challenge, sent to the enrollment route of that session.
    const forged = createCredential(
      { ...options, rp: { id: options.rpId, name: 'x' }, user: { id: 'AAAA', name: email, displayName: email } },
      { origin: APP_ORIGIN },
    );
    const enrolled = await service.post(Paths.passkeyMfaEnrollment, { userid: email, sessionId: step.sessionId, credential: forged.json });
    refused(enrolled, 'ERR_SESSION_STEP', 409);
    // An MFA assertion sent as a sign-in: its challenge is not a sign-in's.
    const assertion = getAssertion(options, credential, { origin: APP_ORIGIN });
    refused(await service.post(Paths.passkeyAuthentication, { credential: assertion }), 'ERR_SESSION_INVALID', 400);
  });
});
