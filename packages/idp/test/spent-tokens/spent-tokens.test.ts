/**
 * The one replay table (spent-tokens/, `spent_tokens`): a token spent by many requests at once
 * is spent exactly once, on SQLite and PostgreSQL; purposes never meet; and the migration that
 * brought the four old replay tables into it keeps every token spent before it spent after it,
 * a "this wasn't me" link mailed before it still works once, and one spent before it stays used.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createSecretHasher, randomToken } from '../../src/crypto/secrets.js';
import { loadServerSecret } from '../../src/crypto/server-secret.js';
import { DEVICE_NOTICE_LINK_TTL_SECONDS } from '../../src/defaults.js';
import { loadConfig, openContext } from '../../src/index.js';
import { KNOWN_MIGRATIONS, migrate } from '../../src/storage/migrations.js';
import { openTestDatabase, startTestService, TEST_DATABASE_URL, type TestService } from '../support/helpers.js';

const DATABASE = TEST_DATABASE_URL ? 'PostgreSQL' : 'SQLite';

describe(`spent tokens (${DATABASE})`, () => {
  let service: TestService;
  before(async () => {
    service = await startTestService();
  });
  after(() => service.close());

  it('spends a token once when 20 requests spend it at the same time', async () => {
    const token = { purpose: 'device-challenge', idHash: randomToken('', 32), expiresAt: Date.now() + 60_000 } as const;
    const results = await Promise.all(Array.from({ length: 20 }, () => service.ctx.spentTokens.spend(token, Date.now())));
    assert.equal(results.filter(Boolean).length, 1);
    assert.equal(await service.ctx.spentTokens.spend(token, Date.now()), false, 'and refuses it afterwards');
  });

  it('keeps purposes apart: the same hash spent under two purposes is two tokens', async () => {
    const idHash = randomToken('', 32);
    const expiresAt = Date.now() + 60_000;
    for (const purpose of ['device-challenge', 'device-notice', 'passkey-challenge', 'delegation-request'] as const)
      assert.equal(await service.ctx.spentTokens.spend({ purpose, idHash, expiresAt }, Date.now()), true, purpose);
  });
});

describe(`the migration to one replay table (${DATABASE})`, () => {
  const TARGET = '0015_spent_tokens';
  const BEFORE = KNOWN_MIGRATIONS[KNOWN_MIGRATIONS.indexOf(TARGET) - 1] as string;
  let data: string;
  before(() => {
    data = mkdtempSync(join(tmpdir(), 'service-idp-spent-'));
  });
  after(() => rmSync(data, { recursive: true, force: true }));

  it('keeps what was spent before it spent after it, and a link mailed before it working once', async () => {
    const t = await openTestDatabase();
    const now = Date.now();
    const hash = createSecretHasher(loadServerSecret(data));
    try {
      assert.deepEqual(await migrate(t.db, BEFORE), KNOWN_MIGRATIONS.slice(0, KNOWN_MIGRATIONS.indexOf(TARGET)));
      const old = t.db as unknown as Parameters<typeof migrate>[0];
      const live = now + 120_000;
      const noticeNonces = { spent: randomToken('', 16), fresh: randomToken('', 16) };
      await sql`insert into device_challenges (id, client_id, expires_at, consumed_at) values
        ('dc-spent', 'cli_x', ${live}, ${now}), ('dc-issued', 'cli_x', ${live}, null)`.execute(old);
      await sql`insert into device_notice_spent (id, expires_at, consumed_at) values (${hash('device-notice-spent', noticeNonces.spent)}, ${live}, ${now})`.execute(
        old,
      );
      await sql`insert into passkey_challenges_spent (id, expires_at, consumed_at) values ('pk-spent', ${live}, ${now})`.execute(old);
      await sql`insert into delegation_replay (id, expires_at) values ('jti-spent', ${live})`.execute(old);

      const ctx = await openContext(loadConfig({ data }, {}), { db: t.db });
      try {
        const spent = ctx.spentTokens;
        assert.equal(await spent.spend({ purpose: 'device-challenge', idHash: 'dc-spent', expiresAt: live }, now), false);
        assert.equal(await spent.spend({ purpose: 'passkey-challenge', idHash: 'pk-spent', expiresAt: live }, now), false);
        assert.equal(await spent.spend({ purpose: 'delegation-request', idHash: 'jti-spent', expiresAt: live }, now), false);
        assert.equal(
          await spent.spend({ purpose: 'device-challenge', idHash: 'dc-issued', expiresAt: live }, now),
          true,
          'a challenge stored at issue and never spent was not copied as spent',
        );
        const rows = await ctx.db.selectFrom('spent_tokens').select(['purpose']).execute();
        assert.deepEqual(rows.map((r) => r.purpose).sort(), [
          'delegation-request',
          'device-challenge',
          'device-challenge',
          'device-notice',
          'passkey-challenge',
        ]);
        for (const table of ['device_challenges', 'device_notice_spent', 'passkey_challenges_spent', 'delegation_replay'])
          await assert.rejects(sql`select 1 from ${sql.table(table)}`.execute(ctx.db), `${table} is gone`);

        // Two links as the release before the codec made them: `deviceId.expiry.nonce.mac`.
        const client = await ctx.clients.create({ name: 'Spent', origins: ['https://spent.example'] });
        const user = await ctx.enabledUsers.findOrCreate('spent@example.com', now);
        assert.ok(user);
        const deviceId = randomToken('dev_', 16);
        await ctx.devices.insert(
          { id: deviceId, userId: user.id, clientId: client.clientId, publicJwk: {}, cryptoVersion: 'v1', browser: null, os: null },
          now,
        );
        const expiry = (now + DEVICE_NOTICE_LINK_TTL_SECONDS * 1000).toString(36);
        const legacy = (nonce: string) =>
          `${deviceId}.${expiry}.${nonce}.${hash('device-notice', `${user.id}.${deviceId}.${expiry}.${nonce}`)}`;
        assert.equal(await ctx.notices.revoke(legacy(noticeNonces.spent)), 'used', 'a link used before the upgrade stays used');
        assert.equal((await ctx.devices.find(deviceId))?.removedAt, null);
        assert.equal(await ctx.notices.revoke(legacy(noticeNonces.fresh)), 'revoked', 'a link mailed before the upgrade still works');
        assert.equal(await ctx.notices.revoke(legacy(noticeNonces.fresh)), 'used', 'once');
      } finally {
        await ctx.close();
      }
    } finally {
      await t.drop();
    }
  });
});
