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

  it("an application's origins and redirect URIs: an admin changes them (event names the operator); forged, unauthenticated or bad changes are refused", async () => {
    const made = await service.ctx.clients.create({
      name: 'Shop',
      origins: ['https://shop.example'],
      redirectUris: ['https://shop.example/cb'],
    });
    const addresses = async () => {
      const client = await service.ctx.clients.findById(made.clientId);
      return { origins: client?.origins, redirectUris: client?.redirectUris, postLogout: client?.postLogoutRedirectUris };
    };
    const original = await addresses();
    const viewer = await operatorSession(service, 'viewer');
    const admin = await operatorSession(service, 'admin');
    const path = `/clients/${made.clientId}`;
    assert.equal((await consoleCall(service, viewer, 'PATCH', path, {}, { origins: ['https://evil.example'] })).status, 403);
    const anonymous = await fetch(`${service.url}/admin/v1${path}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ origins: ['https://evil.example'] }),
    });
    assert.equal(anonymous.status, 401);
    for (const body of [
      { origins: ['javascript:alert(1)'] },
      { redirectUris: ['http://evil.example/cb#x'] },
      { origins: [], redirectUris: [] },
      { origins: 'https://evil.example' },
      { origins: ['https://ok.example'], nonsense: true },
      { origins: ['https://ok.example'], redirectUris: ['not a url'] },
      // Good addresses with a bad post-logout URI: refused whole (the origins are not stored first).
      { origins: ['https://ok.example'], postLogoutRedirectUris: ['data:,x'] },
      { redirectUris: ['https://ok.example/cb'], postLogoutRedirectUris: ['https://ok.example/bye#f'] },
      { origins: ['https://ok.example'], mfaPolicy: 'sometimes' },
    ]) {
      const answer = await consoleCall(service, admin, 'PATCH', path, {}, body);
      assert.equal(answer.status, 400, JSON.stringify(body));
    }
    assert.deepEqual(await addresses(), original, 'nothing changed');
    assert.equal(await updates(made.clientId), 0);

    const done = await consoleCall(service, admin, 'PATCH', path, {}, { origins: ['https://shop.example', 'https://m.shop.example/'] });
    assert.equal(done.status, 204);
    assert.deepEqual(await addresses(), {
      origins: ['https://shop.example', 'https://m.shop.example'],
      redirectUris: original.redirectUris,
      postLogout: original.postLogout,
    });
    assert.equal(await updates(made.clientId), 1);
    const { events } = await service.ctx.events.list({ type: 'client.updated', limit: 1 });
    assert.equal(events[0]?.actor, `operator:${admin.email}`);
    // The new origin is one the browser API now answers.
    const init = await fetch(`${service.url}/v1/init`, {
      method: 'POST',
      headers: { origin: 'https://m.shop.example', 'content-type': 'application/json', 'x-service-key': made.publishableKey },
      body: '{}',
    });
    assert.equal(init.headers.get('access-control-allow-origin'), 'https://m.shop.example');
  });

  const updates = async (clientId: string) =>
    (await service.ctx.events.list({ type: 'client.updated', limit: 50 })).events.filter((e) => e.clientId === clientId).length;
});
