/**
 * Recovery codes (issue 15): a set of RECOVERY_CODE_COUNT is shown once when an MFA enrollment
 * is confirmed; one code passes one MFA step in place of the factor; a used code is refused;
 * regeneration (by the user with the factor's code, by an operator) replaces the set; a lost
 * factor is replaced through a recovery code; export and delete cover the rows; the user is
 * mailed (over the real local SMTP harness) on every use and regeneration.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ServiceClient } from 'service-web';
import { RECOVERY_CODE_COUNT } from '../../../src/defaults.js';
import { base32Decode, timeStep, totpAt } from '../../../src/factors/totp/totp.js';
import {
  claimsOf,
  delegationFor,
  registerWithMfa,
  startSmtp,
  startTestService,
  type TestService,
  uniqueEmail,
} from '../../support/helpers.js';

const CODE_SHAPE = /^[0-9A-HJKMNP-TV-Z]{5}-[0-9A-HJKMNP-TV-Z]{5}$/;

describe('recovery codes', () => {
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let service: TestService;
  before(async () => {
    smtp = await startSmtp();
    service = await startTestService({ testMode: true, env: { SMTP_URL: `smtp://127.0.0.1:${smtp.port}` } });
  });
  after(async () => {
    await service.close();
    await new Promise<void>((resolve) => smtp.server.close(() => resolve()));
  });

  const mailsTo = (email: string, subject: RegExp) => smtp.inbox.filter((m) => m.to.includes(email) && subject.test(m.raw));
  const userId = async (email: string) => (await service.ctx.enabledUsers.findByEmail(email))?.id as string;
  const eventsOf = async (email: string, type: string) =>
    (await service.ctx.events.forUser(await userId(email))).filter((e) => e.type === type);

  /** A user enrolled in email MFA through the browser library, with the codes its enrollment showed. */
  async function enrolled(): Promise<{ email: string; device: ServiceClient; codes: string[]; code: string }> {
    const email = uniqueEmail('rc');
    const device = await service.newDevice();
    const started = await device.authenticate(email, { rememberDevice: true });
    assert.equal(started.status, 'OTP_NEEDED');
    await device.verifyEmailOtp({ userid: email, otp: started.code as string });
    const done = await device.verifyDevice({ userid: email, mfaMethod: 'email' });
    assert.equal(done.status, 'SUCCESS');
    return { email, device, codes: (done as { recoveryCodes?: string[] }).recoveryCodes ?? [], code: (done as { code: string }).code };
  }

  /** The MFA step of a sign-in on the user's remembered device (a recovery code needs nothing sent, so no send spacing applies). */
  async function mfaStep(device: ServiceClient, email: string): Promise<string> {
    const r = await device.authenticate(email);
    assert.equal(r.status, 'MFA_REQUIRED');
    return r.sessionId as string;
  }

  /** The factor's own code: initiateMfa, then the code from the mail received over SMTP. */
  async function factorCode(device: ServiceClient, email: string, sessionId: string): Promise<string> {
    assert.equal((await device.initiateMfa({ userid: email, sessionId })).status, 'MFA_INITIATED');
    const mail = mailsTo(email, /verification code for Test App is: \d{6}/).at(-1);
    return mail?.raw.match(/verification code for Test App is: (\d{6})/)?.[1] as string;
  }

  it(`shows ${RECOVERY_CODE_COUNT} distinct codes once, at an email enrollment, and stores only their keyed hashes`, async () => {
    const { email, codes } = await enrolled();
    assert.equal(codes.length, RECOVERY_CODE_COUNT);
    assert.equal(new Set(codes).size, RECOVERY_CODE_COUNT);
    for (const code of codes) assert.match(code, CODE_SHAPE);
    const rows = await service.ctx.db
      .selectFrom('recovery_codes')
      .selectAll()
      .where('user_id', '=', await userId(email))
      .execute();
    assert.equal(rows.length, RECOVERY_CODE_COUNT);
    const stored = JSON.stringify(rows);
    for (const code of codes) {
      assert.ok(!stored.includes(code) && !stored.includes(code.replace('-', '')), 'no code in the table');
    }
    assert.deepEqual(
      (await eventsOf(email, 'recovery_codes.generated')).map((e) => e.detail),
      [{ count: RECOVERY_CODE_COUNT }],
    );
  });

  it('shows the codes when a TOTP enrollment is confirmed through verifyMfa', async () => {
    const email = uniqueEmail('rc-totp');
    const started = await registerWithMfa(service, email, 'totp');
    assert.equal(started.body.status, 'FINALIZE_REGISTRATION_NEEDED');
    const otp = totpAt(base32Decode(started.body.secret), timeStep(Date.now()));
    const confirmed = await service.post('/v1/mfa/verify', { userid: email, sessionId: started.body.sessionId, otp });
    assert.equal(confirmed.status, 200);
    assert.equal(confirmed.body.recoveryCodes.length, RECOVERY_CODE_COUNT);
  });

  it('passes the MFA step with one code, once, without initiateMfa; tells the user by mail; refuses the code again', async () => {
    const { email, device, codes } = await enrolled();
    const sessionId = await mfaStep(device, email);
    const passed = await device.verifyMfa({ userid: email, otp: codes[0] as string, sessionId, remember_me: true });
    assert.equal(passed.status, 'SUCCESS');
    assert.ok(!('recoveryCodes' in passed), 'a use shows no codes');
    const claims = await claimsOf(service, (passed as { code: string }).code);
    assert.deepEqual(claims.amr, ['swk', 'mfa', 'recovery_code']);
    assert.deepEqual(
      (await eventsOf(email, 'recovery_codes.used')).map((e) => e.detail),
      [{ remaining: RECOVERY_CODE_COUNT - 1 }],
    );
    const notice = mailsTo(email, /recovery code was used/);
    assert.equal(notice.length, 1);
    // Quoted-printable soft line breaks joined: the count reads as a plural ("9 codes left").
    assert.match((notice[0]?.raw ?? '').replace(/=\r\n/g, ''), new RegExp(`you have ${RECOVERY_CODE_COUNT - 1} codes left`));

    // remember_me is not granted by a recovery code: the next sign-in asks for MFA again.
    const again = await mfaStep(device, email);
    const reused = await device.verifyMfa({ userid: email, otp: codes[0] as string, sessionId: again });
    assert.equal(reused.status, 'INVALID_OTP');
    // Typed loosely (lower case, a space for the hyphen): the same code.
    const loose = (codes[1] as string).toLowerCase().replace('-', ' ');
    assert.equal((await device.verifyMfa({ userid: email, otp: loose, sessionId: again })).status, 'SUCCESS');
  });

  it("regenerates with the factor's own code: the new set is shown once, the old set stops working, the user is mailed", async () => {
    const { email, device, codes } = await enrolled();
    const sessionId = await mfaStep(device, email);
    const otp = await factorCode(device, email, sessionId);
    const r = await device.verifyMfa({ userid: email, otp, sessionId, regenerateRecoveryCodes: true });
    assert.equal(r.status, 'SUCCESS');
    const fresh = (r as { recoveryCodes?: string[] }).recoveryCodes ?? [];
    assert.equal(fresh.length, RECOVERY_CODE_COUNT);
    assert.ok(fresh.every((code) => !codes.includes(code)));
    assert.equal(mailsTo(email, /New recovery codes/).length, 1);
    assert.equal((await eventsOf(email, 'recovery_codes.regenerated')).length, 1);

    const next = await mfaStep(device, email);
    assert.equal((await device.verifyMfa({ userid: email, otp: codes[2] as string, sessionId: next })).status, 'INVALID_OTP');
    assert.equal((await device.verifyMfa({ userid: email, otp: fresh[0] as string, sessionId: next })).status, 'SUCCESS');
  });

  it('replaces a lost factor: a recovery code passes the change’s current-factor step, then the new method is confirmed', async () => {
    const { email, codes, code } = await enrolled();
    await claimsOf(service, code); // the user has signed in to the application: delegation may act for them
    const { client } = await delegationFor(service, service.clientId);
    const started = await client.initiateMfaChange({ userid: email, mfaMethod: 'totp' });
    assert.equal(started.status, 'current_factor_needed', started.message);
    const opened = await client.verifyMfaChange({ userid: email, sessionId: started.session_id, otp: codes[0] as string });
    assert.equal(opened.status, 'totp_pending');
    const secret = (opened as { secret?: string }).secret as string;
    // The new method is confirmed with its own code only.
    const refused = await client.verifyMfaChange({ userid: email, sessionId: started.session_id, otp: codes[1] as string });
    assert.equal(refused.status, 'failed');
    const done = await client.verifyMfaChange({
      userid: email,
      sessionId: started.session_id,
      otp: totpAt(base32Decode(secret), timeStep(Date.now())),
    });
    assert.equal(done.status, 'success');
    assert.equal((await service.ctx.mfa.methodOf(await userId(email)))?.method, 'totp');
    assert.equal(mailsTo(email, /recovery code was used/).length, 1);
    assert.equal(mailsTo(email, /verification method changed/).length, 1);
    assert.equal((await service.ctx.users.export(email)).recoveryCodes?.remaining, RECOVERY_CODE_COUNT - 1, 'codes[1] was not spent');
  });

  it('lets an operator regenerate (the user is mailed, the actor recorded) and removes the set on reset-mfa', async () => {
    const { email, device, codes } = await enrolled();
    const issued = await service.ctx.users.regenerateRecoveryCodes(email, 'cli');
    assert.equal(issued.length, RECOVERY_CODE_COUNT);
    assert.equal((await eventsOf(email, 'recovery_codes.regenerated'))[0]?.actor, 'cli');
    assert.equal(mailsTo(email, /New recovery codes/).length, 1);
    const sessionId = await mfaStep(device, email);
    assert.equal((await device.verifyMfa({ userid: email, otp: codes[0] as string, sessionId })).status, 'INVALID_OTP');

    // The admin API does the same for an admin key.
    const key = await service.ctx.adminKeys.create('ops', 'cli');
    const viaApi = await fetch(`${service.url}/admin/v1/users/${await userId(email)}/recovery-codes`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}` },
    });
    assert.equal(viaApi.status, 200);
    assert.equal(((await viaApi.json()) as { recoveryCodes: string[] }).recoveryCodes.length, RECOVERY_CODE_COUNT);

    await service.ctx.mfa.resetByOperator(email, 'cli');
    assert.equal((await service.ctx.users.export(email)).recoveryCodes, null);
    await assert.rejects(service.ctx.users.regenerateRecoveryCodes(email, 'cli'), { code: 'ERR_REQUEST_INVALID' });
  });

  it('exports the count and times of the set (never a code or hash) and deletes its rows with the user', async () => {
    const { email, device, codes } = await enrolled();
    const sessionId = await mfaStep(device, email);
    assert.equal((await device.verifyMfa({ userid: email, otp: codes[3] as string, sessionId })).status, 'SUCCESS');
    const exported = await service.ctx.users.export(email);
    assert.deepEqual(exported.recoveryCodes, {
      total: RECOVERY_CODE_COUNT,
      remaining: RECOVERY_CODE_COUNT - 1,
      createdAt: exported.recoveryCodes?.createdAt,
      usedAt: exported.recoveryCodes?.usedAt,
    });
    assert.equal(exported.recoveryCodes?.usedAt.length, 1);
    assert.ok(Math.abs((exported.recoveryCodes?.usedAt[0] ?? 0) - Date.now()) < 60_000);
    const id = await userId(email);
    const hashes = await service.ctx.db.selectFrom('recovery_codes').select('code_hash').where('user_id', '=', id).execute();
    const text = JSON.stringify(exported);
    for (const code of codes) assert.ok(!text.includes(code) && !text.includes(code.replace('-', '')));
    for (const { code_hash } of hashes) assert.ok(!text.includes(code_hash));

    await service.ctx.users.delete(email, 'cli');
    const left = await service.ctx.db.selectFrom('recovery_codes').select('id').where('user_id', '=', id).execute();
    assert.deepEqual(left, []);
  });
});
