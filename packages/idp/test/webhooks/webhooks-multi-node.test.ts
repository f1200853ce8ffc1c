/**
 * Two service nodes on one PostgreSQL schema (one data folder, so one server secret), each
 * with its own connection pool and delivery loop, as nodes behind a load balancer run: every
 * event recorded on either node reaches the receiver exactly once between them, in order per
 * user, and a node learns of an endpoint created on the other within the subscription cache's
 * bound. PostgreSQL only: skipped without SERVICE_TEST_DATABASE_URL.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DB_POOL_SIZE, DB_STATEMENT_TIMEOUT_MS, WEBHOOK_SUBSCRIPTION_CACHE_MS } from '../../src/defaults.js';
import { loadConfig, startService } from '../../src/index.js';
import { openPostgres } from '../../src/storage/database.js';
import { openTestDatabase, TEST_DATABASE_URL } from '../support/helpers.js';
import { startReceiver, waitFor } from '../support/webhook-receiver.js';

const EVENTS = 60;
const USERS = 6;

describe('webhooks on two nodes sharing PostgreSQL', { skip: !TEST_DATABASE_URL && 'needs SERVICE_TEST_DATABASE_URL' }, () => {
  it('delivers each event exactly once between the nodes, in order per user', { timeout: 60_000 }, async () => {
    const data = mkdtempSync(join(tmpdir(), 'service-idp-webhooks-pg-'));
    const database = await openTestDatabase();
    const receiver = await startReceiver(() => ({ status: 204, delayMs: Math.floor(Math.random() * 20) }));
    const config = loadConfig({ port: '0', data }, {});
    const timings = { webhookTimings: { pollIntervalMs: 10 } };
    const nodeA = await startService(config, { db: database.db, ...timings });
    const nodeB = await startService(config, {
      db: openPostgres(
        { dataDir: data, databaseUrl: TEST_DATABASE_URL, dbPoolSize: DB_POOL_SIZE, dbStatementTimeoutMs: DB_STATEMENT_TIMEOUT_MS },
        { searchPath: database.schema as string },
      ),
      ...timings,
    });
    try {
      const { secret } = await nodeA.ctx.webhooks.create({ url: receiver.url, events: ['user.disabled', 'user.enabled'] }, 'test');
      // Node B reloads its subscriptions within the cache's bound.
      await new Promise((resolve) => setTimeout(resolve, WEBHOOK_SUBSCRIPTION_CACHE_MS + 500));

      const recorded = new Map<string, string[]>();
      for (let i = 0; i < EVENTS; i++) {
        const node = i % 2 === 0 ? nodeA : nodeB;
        const userId = `usr_${i % USERS}`;
        const event = await node.ctx.events.record({ type: i % 4 < 2 ? 'user.disabled' : 'user.enabled', userId });
        recorded.set(userId, [...(recorded.get(userId) ?? []), event.id]);
      }
      await waitFor('every delivery', () => receiver.received.length >= EVENTS, 30_000);
      await new Promise((resolve) => setTimeout(resolve, 500));

      assert.equal(receiver.received.length, EVENTS, 'no event delivered twice');
      assert.equal(new Set(receiver.received.map((d) => d.headers['webhook-id'])).size, EVENTS);
      receiver.verifyAll(secret);
      for (const [userId, ids] of recorded)
        assert.deepEqual(
          receiver.received.filter((d) => d.json.data.userId === userId).map((d) => d.json.data.id),
          ids,
          `${userId}'s events in order`,
        );
      const rows = await nodeA.ctx.webhookOutbox.list();
      assert.equal(rows.length, EVENTS);
      assert.ok(rows.every((r) => r.delivered && r.attempts === 1));
    } finally {
      await nodeA.close();
      await nodeB.close();
      await receiver.close();
      await database.drop();
      rmSync(data, { recursive: true, force: true });
    }
  });
});
