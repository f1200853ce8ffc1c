/**
 * Attack: guessing a 6-digit email OTP. Each challenge allows OTP_MAX_ATTEMPTS guesses,
 * counted atomically before the comparison, so neither sequential nor parallel guessing
 * gets more evaluations; after ACCOUNT_MAX_FAILURES consecutive failures across challenges,
 * the account is locked.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ACCOUNT_MAX_FAILURES, OTP_MAX_ATTEMPTS } from '../../src/defaults.js';
import { startTestService, type TestService, uniqueEmail } from '../support/helpers.js';

const wrongOf = (otp: string) => String((Number(otp) + 1) % 1_000_000).padStart(6, '0');

describe('OTP guessing', () => {
  let service: TestService;
  let clock = Date.now();
  before(async () => {
    service = await startTestService({ now: () => clock });
  });
  after(() => service.close());

  async function start(email: string) {
    const { body } = await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1' });
    assert.equal(body.status, 'OTP_NEEDED');
    return { deviceToken: body.deviceToken as string, otp: await service.latestOtp(email) };
  }

  it(`refuses the right code after ${OTP_MAX_ATTEMPTS} wrong ones`, async () => {
    const email = uniqueEmail();
    const { deviceToken, otp } = await start(email);
    for (let i = 1; i <= OTP_MAX_ATTEMPTS; i++) {
      const wrong = await service.post('/v1/email-otp/verify', { userid: email, deviceToken, otp: wrongOf(otp) });
      assert.equal(wrong.status, 400);
      assert.equal(wrong.body.code, 'ERR_OTP_INVALID');
      assert.equal(wrong.body.attemptsRemaining, OTP_MAX_ATTEMPTS - i);
    }
    const right = await service.post('/v1/email-otp/verify', { userid: email, deviceToken, otp });
    assert.equal(right.status, 400);
    assert.equal(right.body.code, 'ERR_OTP_EXPIRED');
  });

  it('evaluates at most the cap when 50 wrong guesses arrive in parallel', async () => {
    const email = uniqueEmail();
    const { deviceToken, otp } = await start(email);
    const results = await Promise.all(
      Array.from({ length: 50 }, () => service.post('/v1/email-otp/verify', { userid: email, deviceToken, otp: wrongOf(otp) })),
    );
    const evaluated = results.filter((r) => r.body.code === 'ERR_OTP_INVALID').length;
    assert.equal(evaluated, OTP_MAX_ATTEMPTS);
    assert.equal(results.filter((r) => r.body.code === 'ERR_OTP_EXPIRED').length, 50 - OTP_MAX_ATTEMPTS);
    assert.equal((await service.post('/v1/email-otp/verify', { userid: email, deviceToken, otp })).body.code, 'ERR_OTP_EXPIRED');
  });

  it('accepts the right code once when it is sent 20 times in parallel', async () => {
    const email = uniqueEmail();
    const { deviceToken, otp } = await start(email);
    const results = await Promise.all(
      Array.from({ length: 20 }, () => service.post('/v1/email-otp/verify', { userid: email, deviceToken, otp })),
    );
    assert.equal(results.filter((r) => r.status === 200).length, 1);
  });

  it("refuses a code with another registration's device token", async () => {
    const a = uniqueEmail();
    const b = uniqueEmail();
    const first = await start(a);
    const second = await start(b);
    const crossed = await service.post('/v1/email-otp/verify', { userid: a, deviceToken: second.deviceToken, otp: first.otp });
    assert.equal(crossed.body.code, 'ERR_SESSION_INVALID');
  });

  it(`locks the account after ${ACCOUNT_MAX_FAILURES} consecutive failures, and a new code does not reset the count`, async () => {
    const email = uniqueEmail();
    let failures = 0;
    let last: Awaited<ReturnType<typeof start>> | undefined;
    while (failures < ACCOUNT_MAX_FAILURES) {
      clock += 7 * 60 * 1000; // past every per-recipient send window
      last = await start(email);
      for (let i = 0; i < OTP_MAX_ATTEMPTS && failures < ACCOUNT_MAX_FAILURES; i++, failures++) {
        const r = await service.post('/v1/email-otp/verify', { userid: email, deviceToken: last.deviceToken, otp: wrongOf(last.otp) });
        assert.equal(r.body.code, 'ERR_OTP_INVALID');
      }
    }
    clock += 7 * 60 * 1000;
    const fresh = await start(email);
    const locked = await service.post('/v1/email-otp/verify', { userid: email, deviceToken: fresh.deviceToken, otp: fresh.otp });
    assert.equal(locked.status, 423);
    assert.equal(locked.body.code, 'ERR_ACCOUNT_LOCKED');
    assert.ok(Number(locked.headers.get('retry-after')) > 0);
  });
});
