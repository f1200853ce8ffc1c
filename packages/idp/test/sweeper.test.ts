/** Expired rows are deleted by the sweep, and only expired ones. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AUTH_CODE_TTL_SECONDS, OTP_TTL_SECONDS } from '../src/defaults.js';
import { startTestService, type TestService, uniqueEmail } from './helpers.js';

describe('sweeping expired rows', () => {
  let service: TestService;
  const clock = Date.now();
  before(async () => {
    service = await startTestService({ testMode: true, now: () => clock });
  });
  after(() => service.close());

  const count = async (table: 'registrations' | 'auth_codes' | 'device_challenges' | 'rate_counters') =>
    Number(
      (
        await service.ctx.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('deletes registrations, codes, challenges and counters past their expiry', async () => {
    const email = uniqueEmail();
    const a = await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1' });
    await service.post('/v1/email-otp/verify', { userid: email, deviceToken: a.body.deviceToken, otp: a.body.code });
    await service.post('/v1/devices', { userid: email, deviceToken: a.body.deviceToken });
    // Challenges are stateless until a device proof spends one; record a spent one directly.
    await service.ctx.devices.spendChallenge('spent-challenge', service.clientId, clock + 60_000, clock);
    for (const table of ['registrations', 'auth_codes', 'device_challenges', 'rate_counters'] as const)
      assert.ok((await count(table)) > 0, table);

    await service.ctx.sweepExpired(clock + AUTH_CODE_TTL_SECONDS * 1000 - 1000);
    assert.equal(await count('auth_codes'), 1, 'a live code survives');

    await service.ctx.sweepExpired(clock + 2 * 60 * 60 * 1000 + OTP_TTL_SECONDS * 1000);
    for (const table of ['registrations', 'auth_codes', 'device_challenges', 'rate_counters'] as const)
      assert.equal(await count(table), 0, table);
  });
});
