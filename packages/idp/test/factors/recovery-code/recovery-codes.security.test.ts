/**
 * Attacks on recovery codes, which stand in for the second factor: guessing them (in
 * parallel, across sessions until the account locks), replaying a used one, racing one code
 * through several sessions at once, using one where a new factor must be confirmed or to mint
 * a new set, and reading them back from logs, events, exports or mail.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { ACCOUNT_MAX_FAILURES, MFA_MAX_ATTEMPTS, RECOVERY_CODE_COUNT } from '../../../src/defaults.js';
import { drawRecoveryCode } from '../../../src/factors/recovery-code/service.js';
import { deviceProof, type RawDevice, registerWithMfa, startTestService, type TestService, uniqueEmail } from '../../support/helpers.js';

describe('recovery code attacks', () => {
  let service: TestService;
  let logs = '';
  before(async () => {
    const logStream = new Writable({
      write(chunk, _encoding, done) {
        logs += chunk.toString();
        done();
      },
    });
    service = await startTestService({ testMode: true, logStream });
  });
  after(() => service.close());

  /** A user enrolled in email MFA on a remembered raw device, with the codes the enrollment showed. */
  async function enrolled(email = uniqueEmail('rc-attack')): Promise<{ email: string; device: RawDevice; codes: string[] }> {
    const { device, body } = await registerWithMfa(service, email, 'email');
    return { email, device, codes: body.recoveryCodes };
  }

  /** A fresh MFA sign-in step (not initiated: a recovery code needs nothing sent). */
  async function mfaSession(email: string, device: RawDevice): Promise<string> {
    const r = await service.post('/v1/authenticate', {
      userid: email,
      cryptoVersion: 'v1',
      deviceProof: await deviceProof(service, device, email),
    });
    assert.equal(r.body.status, 'MFA_REQUIRED');
    return r.body.sessionId;
  }

  const verify = (email: string, sessionId: string, otp: string, extra: Record<string, unknown> = {}) =>
    service.post('/v1/mfa/verify', { userid: email, sessionId, otp, ...extra });

  const unused = async (email: string) => (await service.ctx.users.export(email)).recoveryCodes?.remaining;

  it(`evaluates at most ${MFA_MAX_ATTEMPTS} of 30 parallel wrong recovery codes per session, then refuses even a right one`, async () => {
    const { email, device, codes } = await enrolled();
    const sessionId = await mfaSession(email, device);
    const results = await Promise.all(Array.from({ length: 30 }, () => verify(email, sessionId, drawRecoveryCode())));
    assert.equal(results.filter((r) => r.body.code === 'ERR_OTP_INVALID').length, MFA_MAX_ATTEMPTS);
    assert.equal(results.filter((r) => r.body.code === 'ERR_OTP_EXPIRED').length, 30 - MFA_MAX_ATTEMPTS);
    assert.equal((await verify(email, sessionId, codes[0] as string)).body.code, 'ERR_OTP_EXPIRED');
    assert.equal(await unused(email), RECOVERY_CODE_COUNT, 'the refused right code was not spent');
  });

  it(`locks the account after ${ACCOUNT_MAX_FAILURES} wrong recovery codes across sessions; a right one is then refused and not spent`, async () => {
    const { email, device, codes } = await enrolled();
    let failures = 0;
    while (failures < ACCOUNT_MAX_FAILURES) {
      const sessionId = await mfaSession(email, device);
      const batch = Math.min(MFA_MAX_ATTEMPTS, ACCOUNT_MAX_FAILURES - failures);
      const results = await Promise.all(Array.from({ length: batch }, () => verify(email, sessionId, drawRecoveryCode())));
      assert.ok(results.every((r) => r.body.code === 'ERR_OTP_INVALID'));
      failures += batch;
    }
    const locked = await verify(email, await mfaSession(email, device), codes[0] as string);
    assert.equal(locked.status, 423);
    assert.equal(locked.body.code, 'ERR_ACCOUNT_LOCKED');
    assert.equal(await unused(email), RECOVERY_CODE_COUNT);
  });

  it('refuses a used code in a later session and counts it as a wrong guess', async () => {
    const { email, device, codes } = await enrolled();
    assert.equal((await verify(email, await mfaSession(email, device), codes[0] as string)).status, 200);
    const replay = await verify(email, await mfaSession(email, device), codes[0] as string);
    assert.equal(replay.body.code, 'ERR_OTP_INVALID');
    assert.equal(replay.body.attemptsRemaining, MFA_MAX_ATTEMPTS - 1);
  });

  it('lets one code through exactly once when it races through several sessions, and through one session', async () => {
    const { email, device, codes } = await enrolled();
    const sessions: string[] = [];
    for (let i = 0; i < 6; i++) sessions.push(await mfaSession(email, device));
    const raced = await Promise.all(sessions.map((sessionId) => verify(email, sessionId, codes[0] as string)));
    assert.equal(raced.filter((r) => r.status === 200).length, 1);
    assert.equal(raced.filter((r) => r.body.code === 'ERR_OTP_INVALID').length, sessions.length - 1);

    const one = await mfaSession(email, device);
    const same = await Promise.all(Array.from({ length: 10 }, () => verify(email, one, codes[1] as string)));
    assert.equal(same.filter((r) => r.status === 200).length, 1);
    assert.equal(await unused(email), RECOVERY_CODE_COUNT - 2);
  });

  it('never confirms a new method nor mints a new set with a recovery code: 400 before anything is spent', async () => {
    const { email, device, codes } = await enrolled();
    // Minting a new set needs the factor's own code.
    const sessionId = await mfaSession(email, device);
    const mint = await verify(email, sessionId, codes[0] as string, { regenerateRecoveryCodes: true });
    assert.equal(mint.status, 400);
    assert.equal(mint.body.code, 'ERR_REQUEST_INVALID');
    // Confirming an enrollment (a TOTP secret the attacker chose) needs that method's code.
    const other = uniqueEmail('rc-enroll');
    const started = await registerWithMfa(service, other, 'totp');
    const confirm = await verify(other, started.body.sessionId, codes[1] as string);
    assert.equal(confirm.body.code, 'ERR_REQUEST_INVALID');
    // Malformed codes are refused by the route's schema.
    for (const otp of ['ABCDE-FGHI', 'ABCDE--FGHIJ', 'UUUUU-UUUUU', '12345', 'abcde_fghij', `${codes[2]}0`]) {
      const r = await verify(email, sessionId, otp);
      assert.equal(r.status, 400, otp);
      assert.equal(r.body.code, 'ERR_REQUEST_INVALID', otp);
    }
    assert.equal(await unused(email), RECOVERY_CODE_COUNT);
    // Nothing was spent on the session either: the right code still passes with every guess left.
    assert.equal((await verify(email, sessionId, codes[0] as string)).status, 200);
  });

  it('keeps every code out of the logs, the audit trail, the export and the mails', async () => {
    const { email, device, codes } = await enrolled();
    await verify(email, await mfaSession(email, device), codes[0] as string);
    await verify(email, await mfaSession(email, device), drawRecoveryCode());
    const regenerated = await service.ctx.users.regenerateRecoveryCodes(email, 'cli');
    const user = await service.ctx.enabledUsers.findByEmail(email);
    const trail = JSON.stringify(await service.ctx.events.forUser(user?.id as string));
    const exported = JSON.stringify(await service.ctx.users.export(email));
    const mails = JSON.stringify(await service.ctx.mailbox.list(50, email));
    for (const code of [...codes, ...regenerated]) {
      for (const form of [code, code.replace('-', ''), code.toLowerCase()]) {
        for (const [where, text] of Object.entries({ logs, trail, exported, mails }))
          assert.ok(!text.includes(form), `${form} in ${where}`);
      }
    }
    assert.match(trail, /recovery_codes\.used/);
  });
});
