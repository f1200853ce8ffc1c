/**
 * An endpoint's deliveries through the admin API, as the console lists them (state, attempts,
 * last error, next attempt), and an operator's retry of a failed one: attempted again at once,
 * recorded with the operator as the actor; a delivered one cannot be retried. On SQLite, and on
 * PostgreSQL when SERVICE_TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { WEBHOOK_RETRY_FIRST_DELAY_SECONDS } from '../../src/defaults.js';
import { consoleCall, operatorSession } from '../support/console-helpers.js';
import { startTestService, type TestService } from '../support/helpers.js';
import { type Answer, startReceiver, waitFor } from '../support/webhook-receiver.js';

describe('webhook deliveries: list and retry', () => {
  let service: TestService;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const clock = { at: Date.now(), now: () => clock.at };
  let answer: () => Answer = () => 500;

  beforeEach(async () => {
    clock.at = Date.now();
    answer = () => 500;
    receiver = await startReceiver(() => answer());
    service = await startTestService({ testMode: true, now: clock.now, webhookTimings: { pollIntervalMs: 25, requestTimeoutMs: 500 } });
  });
  afterEach(async () => {
    await service.close();
    await receiver.close();
  });

  it('lists a failing delivery with its attempts, error and next attempt; a retry sends it again now and names the operator', async () => {
    const admin = await operatorSession(service, 'admin');
    const hook = await service.ctx.webhooks.create({ url: receiver.url, events: ['user.disabled'] }, 'test');
    const event = await service.ctx.events.record({ type: 'user.disabled', userId: 'usr_one' });
    await waitFor('a failed attempt', async () => (await service.ctx.webhookOutbox.list())[0]?.lastError != null);

    const listed = await consoleCall(service, admin, 'GET', `/webhooks/${hook.id}/deliveries`);
    assert.equal(listed.status, 200);
    const [delivery] = listed.body.deliveries;
    assert.equal(listed.body.deliveries.length, 1);
    assert.equal(delivery.eventId, event.id);
    assert.equal(delivery.eventType, 'user.disabled');
    assert.equal(delivery.state, 'retrying');
    assert.equal(delivery.attempts, 1);
    assert.match(delivery.lastError, /500/);
    assert.equal(delivery.nextAttemptAt, clock.at + WEBHOOK_RETRY_FIRST_DELAY_SECONDS * 1000, 'the back-off, not now');

    answer = () => 204;
    const retried = await consoleCall(service, admin, 'POST', `/webhook-deliveries/${delivery.id}/retry`);
    assert.equal(retried.status, 204);
    // The clock has not moved: only the retry makes it due.
    await waitFor('delivered', async () => (await service.ctx.webhookOutbox.list())[0]?.delivered === true);
    assert.equal(receiver.received.length, 2);
    const after = await consoleCall(service, admin, 'GET', `/webhooks/${hook.id}/deliveries`);
    assert.equal(after.body.deliveries[0].state, 'delivered');
    assert.equal(after.body.deliveries[0].nextAttemptAt, null);
    const { events } = await service.ctx.events.list({ type: 'webhook.delivery_retried', limit: 5 });
    assert.equal(events.length, 1);
    assert.equal(events[0]?.actor, `operator:${admin.email}`);
    assert.deepEqual(events[0]?.detail, { webhookId: hook.id, deliveryId: delivery.id });

    const again = await consoleCall(service, admin, 'POST', `/webhook-deliveries/${delivery.id}/retry`);
    assert.equal(again.status, 400, 'a delivered message is not sent twice');
    assert.equal(receiver.received.length, 2);
  });

  it('a given-up delivery comes back to the queue on retry', async () => {
    const key = (await service.ctx.adminKeys.create('ops', 'test')).key;
    const call = (method: string, path: string) =>
      fetch(`${service.url}/admin/v1${path}`, { method, headers: { authorization: `Bearer ${key}` } });
    const hook = await service.ctx.webhooks.create({ url: receiver.url, events: ['user.disabled'] }, 'test');
    await service.ctx.events.record({ type: 'user.disabled', userId: 'usr_two' });
    await waitFor('a failed attempt', async () => (await service.ctx.webhookOutbox.list())[0]?.lastError != null);
    // Past the retry window: the next failure gives up.
    clock.at += 25 * 60 * 60 * 1000;
    await waitFor('given up', async () => (await service.ctx.webhookOutbox.list())[0]?.done === true);
    const [failed] = (await (await call('GET', `/webhooks/${hook.id}/deliveries`)).json()).deliveries;
    assert.equal(failed.state, 'failed');
    answer = () => 204;
    assert.equal((await call('POST', `/webhook-deliveries/${failed.id}/retry`)).status, 204);
    await waitFor('delivered', async () => (await service.ctx.webhookOutbox.list())[0]?.delivered === true);
  });
});
