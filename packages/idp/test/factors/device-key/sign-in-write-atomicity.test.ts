/**
 * A trusted-device login's writes (factors/device-key/sign-in-store.ts `spendAndIssue`: the spent challenge, the
 * device's last use, the authorization code, its `sign_in.succeeded` event and that event's
 * webhook outbox rows) stand or fall together. Should one fail midway, a spent challenge
 * without its code would refuse the device's retry (the browser would drop its key), and an
 * event without a code would record a sign-in that never happened. PostgreSQL writes them in
 * one statement, SQLite in one transaction. The failure is forced with a real trigger that
 * refuses the code insert (the write after the spend), on both databases.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import {
  deviceProof,
  registerRawDevice,
  sendClock,
  startTestService,
  TEST_DATABASE_URL,
  type TestService,
  uniqueEmail,
} from '../../support/helpers.js';

const FAIL_CODE_INSERT = TEST_DATABASE_URL
  ? [
      sql`create function fail_code_insert() returns trigger language plpgsql as $$ begin raise exception 'forced failure'; end $$`,
      sql`create trigger fail_code_insert before insert on auth_codes for each row execute function fail_code_insert()`,
    ]
  : [sql`create trigger fail_code_insert before insert on auth_codes begin select raise(abort, 'forced failure'); end`];
const ALLOW_CODE_INSERT = TEST_DATABASE_URL
  ? [sql`drop trigger fail_code_insert on auth_codes`, sql`drop function fail_code_insert()`]
  : [sql`drop trigger fail_code_insert`];

describe(`a trusted login's writes are all or nothing (${TEST_DATABASE_URL ? 'PostgreSQL' : 'SQLite'})`, () => {
  let service: TestService;
  const clock = sendClock();
  before(async () => {
    service = await startTestService({ testMode: true, now: clock.now });
    // A subscriber, so the login's event brings outbox rows into the same write.
    await service.ctx.webhooks.create({ url: 'http://127.0.0.1:9/hook', events: ['sign_in.succeeded'] }, 'test');
  });
  after(() => service.close());

  const count = async (table: 'auth_codes' | 'events' | 'webhook_deliveries' | 'spent_tokens') =>
    Number(
      (
        await service.ctx.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const snapshot = async () => ({
    codes: await count('auth_codes'),
    events: await count('events'),
    deliveries: await count('webhook_deliveries'),
    spent: await count('spent_tokens'),
  });

  it('a failed code insert leaves the challenge unspent, the device untouched, and no event or outbox row; the same proof then signs in', async () => {
    const email = uniqueEmail();
    const device = await registerRawDevice(service, email);
    // Past the once-a-minute last-used stamp (DEVICE_LAST_USED_RESOLUTION_SECONDS): this login also writes it.
    clock.tick();
    clock.tick();
    const lastUsed = (await service.ctx.devices.find(device.deviceId))?.lastUsedAt;
    const proof = await deviceProof(service, device, email);
    const before = await snapshot();

    for (const statement of FAIL_CODE_INSERT) await statement.execute(service.ctx.db);
    let failed: Awaited<ReturnType<TestService['post']>>;
    try {
      failed = await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1', deviceProof: proof });
    } finally {
      for (const statement of ALLOW_CODE_INSERT) await statement.execute(service.ctx.db);
    }
    assert.equal(failed.status, 500);
    assert.equal(failed.body.code, 'ERR_INTERNAL');
    assert.deepEqual(await snapshot(), before, 'nothing of the login was written');
    assert.equal((await service.ctx.devices.find(device.deviceId))?.lastUsedAt, lastUsed, 'the device was not stamped used');

    const retried = await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1', deviceProof: proof });
    assert.equal(retried.body.status, 'SUCCESS', JSON.stringify(retried.body));
    const after = await snapshot();
    assert.deepEqual(
      [after.codes - before.codes, after.events - before.events, after.deliveries - before.deliveries, after.spent - before.spent],
      [1, 1, 1, 1],
    );
  });
});
