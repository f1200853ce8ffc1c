/**
 * Event webhooks (webhooks/): an outbox row per (event, subscribed endpoint) written with the
 * event, delivered to a receiver on 127.0.0.1 as Standard Webhooks messages (verified here with
 * `standardwebhooks` as a receiver would), retried with back-off, in order per user, given up
 * after the retry window, and a failing endpoint disabled. The clock is the test's: back-off
 * and thresholds pass by moving it. On SQLite, and on PostgreSQL when SERVICE_TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { openContext } from '../../src/context.js';
import {
  WEBHOOK_DISABLE_AFTER_FAILING_HOURS,
  WEBHOOK_LEASE_MS,
  WEBHOOK_REQUEST_TIMEOUT_MS,
  WEBHOOK_RETRY_FIRST_DELAY_SECONDS,
  WEBHOOK_RETRY_MAX_DELAY_SECONDS,
  WEBHOOK_RETRY_WINDOW_HOURS,
} from '../../src/defaults.js';
import { loadConfig } from '../../src/index.js';
import type { Database } from '../../src/storage/schema.js';
import { retryDelayMs } from '../../src/webhooks/worker.js';
import { loginWithDevice, registerRawDevice, startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import { type Answer, type ReceivedDelivery, startReceiver, waitFor } from '../support/webhook-receiver.js';

const HOUR_MS = 60 * 60 * 1000;

describe('event webhooks', () => {
  let service: TestService;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const clock = { at: Date.now(), now: () => clock.at };
  /** How the receiver answers the current test's deliveries. */
  let answer: (delivery: ReceivedDelivery, index: number) => Answer = () => 204;

  beforeEach(async () => {
    clock.at = Date.now();
    answer = () => 204;
    receiver = await startReceiver((delivery, index) => answer(delivery, index));
    service = await startTestService({ now: clock.now, webhookTimings: { pollIntervalMs: 25, requestTimeoutMs: 500 } });
  });
  afterEach(async () => {
    await service.close();
    await receiver.close();
  });

  const deliveries = () => service.ctx.webhookOutbox.list();
  const endpoint = async (id: string) => (await service.ctx.webhooks.list()).find((w) => w.id === id);
  const record = (type: 'user.disabled' | 'user.enabled' | 'user.created', userId: string) => service.ctx.events.record({ type, userId });

  it('signs each delivery as Standard Webhooks and sends only the subscribed types', async () => {
    const hook = await service.ctx.webhooks.create({ url: receiver.url, events: ['user.disabled', 'user.enabled'] }, 'test');
    assert.match(hook.secret, /^whsec_[A-Za-z0-9+/]{32}$/);
    const disabled = await record('user.disabled', 'usr_one');
    const created = await record('user.created', 'usr_one');
    const enabled = await record('user.enabled', 'usr_one');
    await waitFor('two deliveries', () => receiver.received.length === 2);

    const verified = receiver.verifyAll(hook.secret) as { type: string; timestamp: string; data: Record<string, unknown> }[];
    assert.deepEqual(
      verified.map((p) => p.type),
      ['user.disabled', 'user.enabled'],
    );
    assert.deepEqual(verified[0], {
      type: 'user.disabled',
      timestamp: new Date(disabled.at).toISOString(),
      data: {
        id: disabled.id,
        type: 'user.disabled',
        at: disabled.at,
        userId: 'usr_one',
        clientId: null,
        deviceId: null,
        actor: null,
        detail: null,
      },
    });
    const [first, second] = receiver.received;
    assert.match(String(first?.headers['webhook-id']), /^msg_/);
    assert.notEqual(first?.headers['webhook-id'], second?.headers['webhook-id']);
    assert.equal(first?.headers['webhook-timestamp'], String(Math.floor(clock.at / 1000)));
    assert.equal(first?.headers['content-type'], 'application/json');

    // The receiver has answered; the outcome is written right after.
    await waitFor(
      'both recorded as delivered',
      async () => (await deliveries()).every((r) => r.delivered) && (await endpoint(hook.id))?.lastDeliveredAt !== null,
    );
    const rows = await deliveries();
    assert.deepEqual(
      rows.map((r) => [r.eventId, r.delivered, r.attempts]),
      [
        [disabled.id, true, 1],
        [enabled.id, true, 1],
      ],
    );
    assert.ok(!rows.some((r) => r.eventId === created.id), 'no outbox row for a type nobody takes');
    const health = await endpoint(hook.id);
    assert.equal(health?.lastDeliveredAt, clock.at);
    assert.equal(health?.failureCount, 0);
  });

  it('backs off exponentially from the first delay up to the cap', () => {
    const steps = [1, 2, 3, 4, 5, 6, 7, 8, 100].map((n) => retryDelayMs(n) / 1000);
    const first = WEBHOOK_RETRY_FIRST_DELAY_SECONDS;
    assert.deepEqual(steps, [
      first,
      first * 2,
      first * 4,
      first * 8,
      first * 16,
      first * 32,
      Math.min(first * 64, WEBHOOK_RETRY_MAX_DELAY_SECONDS),
      WEBHOOK_RETRY_MAX_DELAY_SECONDS,
      WEBHOOK_RETRY_MAX_DELAY_SECONDS,
    ]);
  });

  it('retries a receiver that answers 500 once the back-off has passed, with the same webhook-id', async () => {
    answer = (_, index) => (index === 0 ? 500 : 200);
    const hook = await service.ctx.webhooks.create({ url: receiver.url, events: ['user.disabled'] }, 'test');
    const event = await record('user.disabled', 'usr_retry');
    await waitFor('the first attempt', () => receiver.received.length === 1);
    await waitFor('the failure recorded', async () => (await endpoint(hook.id))?.failureCount === 1);
    assert.equal((await endpoint(hook.id))?.lastError, 'HTTP 500 (attempt 1)');
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(receiver.received.length, 1, 'no retry before the back-off');

    clock.at += retryDelayMs(1);
    await waitFor('the retry', () => receiver.received.length === 2);
    assert.equal(receiver.received[1]?.headers['webhook-id'], receiver.received[0]?.headers['webhook-id']);
    assert.equal(receiver.received[1]?.json.data.id, event.id);
    receiver.verifyAll(hook.secret);
    await waitFor('the delivery recorded', async () => (await endpoint(hook.id))?.lastDeliveredAt !== null);
    assert.equal((await deliveries())[0]?.attempts, 2);
    const health = await endpoint(hook.id);
    assert.equal(health?.failureCount, 0, 'a 2xx ends the failure streak');
    assert.equal(health?.failingSince, null);
  });

  it('sends again once on a new connection when a kept-alive one was closed by the receiver (ECONNRESET on reuse): no failed attempt', async () => {
    const hook = await service.ctx.webhooks.create({ url: receiver.url, events: ['user.disabled'] }, 'test');
    await record('user.disabled', 'usr_keepalive');
    await waitFor('the first delivery', async () => (await deliveries()).every((d) => d.delivered));
    // The second request comes on the kept-alive connection: the receiver closes it unanswered.
    answer = (_delivery, index) => (index === 1 ? 'reset' : 204);
    const second = await record('user.disabled', 'usr_keepalive');
    await waitFor('the repeat', () => receiver.received.length === 3);
    await waitFor('delivered', async () => (await deliveries()).every((d) => d.delivered));
    const row = (await deliveries()).find((d) => d.eventId === second.id);
    assert.equal(row?.attempts, 1, 'one attempt, not a failure and a retry');
    assert.equal(row?.lastError, null);
    assert.equal(receiver.connections, 2, 'the repeat went on a new connection');
    assert.equal(receiver.received[2]?.headers['webhook-id'], receiver.received[1]?.headers['webhook-id']);
    assert.equal((await endpoint(hook.id))?.failureCount, 0, 'no failure counted against the receiver');
  });

  it('times out a slow receiver and retries it', async () => {
    answer = (_, index) => (index === 0 ? { status: 204, delayMs: 2000 } : 204);
    const hook = await service.ctx.webhooks.create({ url: receiver.url, events: ['user.disabled'] }, 'test');
    await record('user.disabled', 'usr_slow');
    await waitFor('the time-out recorded', async () => (await endpoint(hook.id))?.lastError === 'timed out (attempt 1)');
    assert.equal((await deliveries())[0]?.delivered, false);
    clock.at += retryDelayMs(1);
    await waitFor('the retry delivered', async () => (await deliveries())[0]?.delivered === true);
    assert.equal(receiver.received.length, 2);
  });

  it("holds a user's later events until the earlier one is delivered, while other users' go", async () => {
    let failedOnce = false;
    answer = (delivery) => {
      if (delivery.json.data.type === 'user.disabled' && delivery.json.data.userId === 'usr_a' && !failedOnce) {
        failedOnce = true;
        return 503;
      }
      return 204;
    };
    await service.ctx.webhooks.create({ url: receiver.url, events: ['all'] }, 'test');
    const a1 = await record('user.disabled', 'usr_a');
    const a2 = await record('user.enabled', 'usr_a');
    const a3 = await record('user.created', 'usr_a');
    const b1 = await record('user.disabled', 'usr_b');
    /** What usr_a's endpoint got so far (the 'all' endpoint also gets its own webhook.created). */
    const ofA = () => receiver.received.filter((d) => d.json.data.userId === 'usr_a').map((d) => d.json.data.id);
    await waitFor("the other user's event", () => receiver.eventIds().includes(b1.id));
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.deepEqual(ofA(), [a1.id], 'nothing after the failed event');

    clock.at += retryDelayMs(1);
    await waitFor("the user's events", () => ofA().length === 4);
    assert.deepEqual(ofA(), [a1.id, a1.id, a2.id, a3.id]);
  });

  it('gives a delivery up after the retry window and disables an endpoint failing past the threshold; enabling resumes', async () => {
    answer = () => 503;
    const hook = await service.ctx.webhooks.create({ url: receiver.url, events: ['user.disabled', 'user.enabled'] }, 'test');
    const failingFrom = clock.at;
    await record('user.disabled', 'usr_gone');
    await waitFor('the first attempt', async () => (await endpoint(hook.id))?.failureCount === 1);

    clock.at += WEBHOOK_RETRY_WINDOW_HOURS * HOUR_MS;
    await waitFor('the give-up', async () => (await deliveries())[0]?.done === true);
    assert.equal((await deliveries())[0]?.delivered, false);
    assert.equal((await endpoint(hook.id))?.disabledAt, null, 'still enabled inside the threshold');

    await record('user.enabled', 'usr_gone');
    await waitFor('the next event tried', async () => (await endpoint(hook.id))?.failureCount === 3);
    clock.at = failingFrom + WEBHOOK_DISABLE_AFTER_FAILING_HOURS * HOUR_MS;
    await waitFor('the endpoint disabled', async () => (await endpoint(hook.id))?.disabledAt !== null);
    const disabled = await endpoint(hook.id);
    assert.equal(disabled?.disabledAt, clock.at);
    assert.equal(disabled?.disabledReason, 'failing');
    assert.equal(disabled?.failureCount, 4);
    assert.equal(disabled?.failingSince, failingFrom);
    assert.equal(disabled?.lastError, 'HTTP 503 (attempt 2)');
    const notices = async () => (await service.ctx.events.list({ type: 'webhook.disabled', limit: 1 })).events;
    await waitFor('the webhook.disabled event', async () => (await notices()).length === 1);
    const [notice] = await notices();
    assert.deepEqual(notice?.detail, { webhookId: hook.id, reason: 'failing' });

    const received = receiver.received.length;
    const unsent = await record('user.disabled', 'usr_gone');
    assert.ok(!(await deliveries()).some((r) => r.eventId === unsent.id), 'a disabled endpoint gets no new rows');

    answer = () => 204;
    const enabled = await service.ctx.webhooks.enable(hook.id, 'test');
    assert.equal(enabled.disabledAt, null);
    assert.equal(enabled.failureCount, 0);
    const resumed = await record('user.enabled', 'usr_gone');
    await waitFor('the delivery after enabling', () => receiver.eventIds().includes(resumed.id));
    assert.equal(receiver.received.length, received + 1);
  });

  it("deletes a user's pending deliveries in the deleting transaction", async () => {
    answer = () => 500;
    await service.ctx.webhooks.create({ url: receiver.url, events: ['all'] }, 'test');
    const email = uniqueEmail('webhook');
    const user = await service.ctx.enabledUsers.findOrCreate(email, clock.at);
    assert.ok(user);
    await service.ctx.users.disable(user.id, 'test');
    await waitFor('an attempt', () => receiver.received.length >= 2);
    const before = await service.ctx.db.selectFrom('webhook_deliveries').select(['user_id', 'payload', 'done_at']).execute();
    assert.ok(before.some((r) => r.user_id === user.id && r.done_at === null));

    await service.ctx.users.delete(user.id, 'test');
    const after = await service.ctx.db.selectFrom('webhook_deliveries').select(['user_id', 'payload']).execute();
    assert.ok(after.length > 0, 'the deletion itself is sent');
    for (const row of after) {
      assert.notEqual(row.user_id, user.id);
      assert.ok(!row.payload.includes(user.id) && !row.payload.includes(email), 'no personal data left in the outbox');
    }
    assert.ok(after.some((r) => JSON.parse(r.payload).type === 'user.deleted'));
  });
});

describe('webhook timings from the configuration', () => {
  it("takes the defaults, or the operator's timeout and lease when the lease is the longer", () => {
    const defaults = loadConfig({}, {});
    assert.deepEqual([defaults.webhookRequestTimeoutMs, defaults.webhookLeaseMs], [WEBHOOK_REQUEST_TIMEOUT_MS, WEBHOOK_LEASE_MS]);
    const set = loadConfig({}, { SERVICE_IDP_WEBHOOK_TIMEOUT_MS: '3000', SERVICE_IDP_WEBHOOK_LEASE_MS: '4000' });
    assert.deepEqual([set.webhookRequestTimeoutMs, set.webhookLeaseMs], [3000, 4000]);
    // A lease that can end while its request is still allowed to run would hand a live node's delivery to another node.
    assert.throws(
      () => loadConfig({}, { SERVICE_IDP_WEBHOOK_LEASE_MS: String(WEBHOOK_REQUEST_TIMEOUT_MS) }),
      /SERVICE_IDP_WEBHOOK_LEASE_MS \(10000\) must be longer than the webhook timeout \(10000 ms\)/,
    );
  });
});

describe('event webhooks and a slow receiver', () => {
  it("holds only the slow endpoint's deliveries: other endpoints get later events meanwhile", async () => {
    const slow = await startReceiver(() => 'hang');
    const fast = await startReceiver(() => 204);
    const service = await startTestService({ webhookTimings: { pollIntervalMs: 25, requestTimeoutMs: 10_000 } });
    try {
      const slowHook = await service.ctx.webhooks.create({ url: slow.url, events: ['user.disabled'] }, 'test');
      await service.ctx.webhooks.create({ url: fast.url, events: ['user.disabled'] }, 'test');
      await service.ctx.events.record({ type: 'user.disabled', userId: 'usr_first' });
      await waitFor('the slow request in flight', () => slow.received.length === 1);
      const later = await service.ctx.events.record({ type: 'user.disabled', userId: 'usr_later' });
      await waitFor('the later event at the fast endpoint', () => fast.eventIds().includes(later.id), 5000);
      const stuck = (await service.ctx.webhooks.list()).find((w) => w.id === slowHook.id);
      assert.equal(stuck?.failureCount, 0, 'the slow request is still in flight');
      assert.equal(stuck?.lastDeliveredAt, null);
    } finally {
      await service.close();
      await slow.close();
      await fast.close();
    }
  });
});

describe("event webhooks and the trusted-device login's own statement", () => {
  it('delivers every sign-in, the one the login writes with its code (factors/device-key/sign-in-store.ts) included', async () => {
    const receiver = await startReceiver(() => 204);
    const service = await startTestService({ testMode: true, webhookTimings: { pollIntervalMs: 25, requestTimeoutMs: 500 } });
    try {
      const hook = await service.ctx.webhooks.create({ url: receiver.url, events: ['sign_in.succeeded'] }, 'test');
      const email = uniqueEmail('hooked');
      const device = await registerRawDevice(service, email);
      const trusted = await loginWithDevice(service, device, email);
      assert.equal(trusted.status, 'SUCCESS');
      const user = await service.ctx.users.find(email);
      const { events } = await service.ctx.events.list({ userId: user.id, type: 'sign_in.succeeded', limit: 10 });
      assert.ok(events.length >= 2, 'the registration and the trusted login each record a sign-in');
      await waitFor('every sign-in delivered', () => receiver.received.length === events.length);
      const delivered = (receiver.verifyAll(hook.secret) as { data: { id: string; deviceId: string } }[]).map((p) => p.data);
      assert.deepEqual(delivered.map((d) => d.id).sort(), events.map((e) => e.id).sort());
      assert.ok(delivered.every((d) => d.deviceId === device.deviceId));
    } finally {
      await service.close();
      await receiver.close();
    }
  });
});

describe('event webhooks on the hot path', () => {
  it('adds no statement to an event nobody subscribes to, and writes the outbox row in the same transaction', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'service-idp-webhooks-'));
    const statements: string[] = [];
    const db = new Kysely<Database>({
      dialect: new SqliteDialect({ database: new SQLite(':memory:') }),
      log: (event) => statements.push(event.query.sql),
    });
    const ctx = await openContext(loadConfig({ data: dataDir }, {}), { db });
    try {
      await ctx.webhooks.create({ url: 'http://127.0.0.1:9/hooks', events: ['user.disabled'] }, 'test');
      statements.length = 0;
      await ctx.events.record({ type: 'user.created', userId: 'usr_hot' });
      assert.deepEqual(statements, [
        'insert into "events" ("id", "type", "at", "user_id", "client_id", "device_id", "ip", "user_agent", "actor", "detail") values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      ]);

      statements.length = 0;
      const event = await ctx.events.record({ type: 'user.disabled', userId: 'usr_hot' });
      assert.deepEqual(
        statements.map((text) => text.split(' (')[0]),
        ['begin', 'insert into "events"', 'insert into "webhook_deliveries"', 'commit'],
      );
      const rows = await ctx.webhookOutbox.list();
      assert.deepEqual(
        rows.map((r) => r.eventId),
        [event.id],
      );
      // The outbox insert fails (its table is gone): the event's insert is rolled back with it.
      await sql`drop table webhook_deliveries`.execute(db);
      await assert.rejects(ctx.events.record({ type: 'user.disabled', userId: 'usr_rolled_back' }));
      assert.deepEqual(await db.selectFrom('events').select('id').where('user_id', '=', 'usr_rolled_back').execute(), []);
    } finally {
      await ctx.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
