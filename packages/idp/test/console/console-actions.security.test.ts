/**
 * Attacks on the admin routes the console added for its actions (webhook deliveries and their
 * retry): a viewer operator forges an admin's call, a caller without an admin key probes, and
 * bad input is sent. Each is refused (403, 401, 400/404) and changes nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { consoleCall, operatorSession } from '../support/console-helpers.js';
import { startTestService, type TestService } from '../support/helpers.js';
import { startReceiver, waitFor } from '../support/webhook-receiver.js';

describe('console actions: forged, unauthenticated and malformed calls', () => {
  let service: TestService;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let hookId: string;
  let deliveryId: string;
  before(async () => {
    receiver = await startReceiver(() => 500);
    service = await startTestService({ testMode: true, webhookTimings: { pollIntervalMs: 25, requestTimeoutMs: 500 } });
    hookId = (await service.ctx.webhooks.create({ url: receiver.url, events: ['user.disabled'] }, 'test')).id;
    await service.ctx.events.record({ type: 'user.disabled', userId: 'usr_victim' });
    await waitFor('a failed attempt', async () => (await service.ctx.webhookOutbox.list())[0]?.lastError != null);
    deliveryId = (await service.ctx.webhookOutbox.list())[0]?.id ?? '';
    // Keep it from being due again during the test: the failures below must not be mistaken for retries.
    await service.ctx.webhooks.disable(hookId, 'test');
  });
  after(async () => {
    await service.close();
    await receiver.close();
  });

  const retried = async () => (await service.ctx.events.list({ type: 'webhook.delivery_retried', limit: 5 })).events.length;
  const nextAttempt = async () => {
    const rows = await service.ctx.webhookOutbox.listForEndpoint(hookId, 10);
    return rows[0]?.nextAttemptAt;
  };

  it('a viewer may list deliveries but not retry one', async () => {
    const viewer = await operatorSession(service, 'viewer');
    const before = await nextAttempt();
    assert.equal((await consoleCall(service, viewer, 'GET', `/webhooks/${hookId}/deliveries`)).status, 200);
    const forged = await consoleCall(service, viewer, 'POST', `/webhook-deliveries/${deliveryId}/retry`);
    assert.equal(forged.status, 403);
    assert.equal(forged.body.code, 'ERR_FORBIDDEN');
    assert.equal(await nextAttempt(), before);
    assert.equal(await retried(), 0);
  });

  it('no admin key, or a bad one: 401 and nothing listed or retried', async () => {
    for (const headers of [{}, { authorization: 'Bearer adm_nope' }, { authorization: `Bearer ${service.secretKey}` }] as Record<
      string,
      string
    >[]) {
      const list = await fetch(`${service.url}/admin/v1/webhooks/${hookId}/deliveries`, { headers });
      assert.equal(list.status, 401);
      assert.doesNotMatch(await list.text(), new RegExp(deliveryId));
      const retry = await fetch(`${service.url}/admin/v1/webhook-deliveries/${deliveryId}/retry`, { method: 'POST', headers });
      assert.equal(retry.status, 401);
    }
    assert.equal(await retried(), 0);
  });

  it('bad input: a malformed or unknown id is refused and changes nothing', async () => {
    const admin = await operatorSession(service, 'admin');
    const before = await nextAttempt();
    for (const id of ['a%20b', 'x'.repeat(101), "msg_'--", 'msg_unknown']) {
      const answer = await consoleCall(service, admin, 'POST', `/webhook-deliveries/${id}/retry`);
      assert.equal(answer.status, 400, id);
    }
    assert.equal((await consoleCall(service, admin, 'GET', '/webhooks/whk_unknown/deliveries')).status, 404);
    assert.equal((await consoleCall(service, admin, 'GET', '/webhooks/a%20b/deliveries')).status, 400);
    assert.equal(await nextAttempt(), before);
    assert.equal(await retried(), 0);
  });
});
