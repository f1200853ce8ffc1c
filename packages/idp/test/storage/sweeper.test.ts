/** Expired rows are deleted by the sweep, and only expired ones. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AUTH_CODE_TTL_SECONDS, MAIL_BUDGET_SERVICE, OTP_TTL_SECONDS, SWEEP_BATCH_ROWS } from '../../src/defaults.js';
import { startTestService, type TestService, uniqueEmail } from '../support/helpers.js';

describe('sweeping expired rows', () => {
  let service: TestService;
  const clock = Date.now();
  before(async () => {
    service = await startTestService({ testMode: true, now: () => clock });
  });
  after(() => service.close());

  const count = async (table: 'registrations' | 'auth_codes' | 'spent_tokens' | 'rate_counters') =>
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
    await service.ctx.spentTokens.spend({ purpose: 'device-challenge', idHash: 'spent-challenge', expiresAt: clock + 60_000 }, clock);
    for (const table of ['registrations', 'auth_codes', 'spent_tokens', 'rate_counters'] as const)
      assert.ok((await count(table)) > 0, table);

    await service.ctx.sweepExpired(clock + AUTH_CODE_TTL_SECONDS * 1000 - 1000);
    assert.equal(await count('auth_codes'), 1, 'a live code survives');

    // Past every expiry: the longest counter is a day's send budget (MAIL_BUDGET_SERVICE).
    await service.ctx.sweepExpired(clock + MAIL_BUDGET_SERVICE.at(-1)!.windowSeconds * 1000 + OTP_TTL_SECONDS * 1000);
    for (const table of ['registrations', 'auth_codes', 'spent_tokens', 'rate_counters'] as const)
      assert.equal(await count(table), 0, table);
  });

  it('deletes in bounded batches, letting the event loop run between them, until every expired row is gone', async () => {
    const expired = Math.floor(2.5 * SWEEP_BATCH_ROWS);
    const rows = (from: number, n: number, expiresAt: number) =>
      Array.from({ length: n }, (_, i) => ({
        id: `device-challenge:batch-${from + i}`,
        purpose: 'device-challenge',
        expires_at: expiresAt,
        consumed_at: clock,
      }));
    for (let i = 0; i < expired; i += 500)
      await service.ctx.db
        .insertInto('spent_tokens')
        .values(rows(i, Math.min(500, expired - i), clock - 1))
        .execute();
    await service.ctx.db
      .insertInto('spent_tokens')
      .values(rows(expired, 10, clock + 60_000))
      .execute();

    // Turns of the event loop while the sweep runs: one unbounded statement would allow none on SQLite.
    let turns = 0;
    let sweeping = true;
    const spin = () => {
      turns += 1;
      if (sweeping) setImmediate(spin);
    };
    setImmediate(spin);
    await service.ctx.sweepExpired(clock);
    sweeping = false;

    assert.equal(await count('spent_tokens'), 10, 'only the live rows stay');
    assert.ok(turns >= Math.floor(expired / SWEEP_BATCH_ROWS), `the event loop ran ${turns} times during the sweep`);
  });
});
