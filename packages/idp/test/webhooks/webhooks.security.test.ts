/**
 * Attacks on event webhooks. An attacker with a stolen or guessed admin key, or none, tries to
 * register endpoints or read their secrets; an attacker who can reach a receiver forges or
 * alters deliveries; an endpoint tries to bounce deliveries elsewhere with a redirect; a leaked
 * admin key points deliveries at the service's own network (production refuses internal
 * addresses). The signing secret is shown once and never again: not in a listing, an event, a
 * log line or the database in clear.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { ADMIN_PREFIX } from '../../src/admin/prefix.js';
import { WEBHOOK_URL_MAX_LENGTH } from '../../src/defaults.js';
import { checkWebhookUrl } from '../../src/webhooks/service.js';
import { startTestService, type TestService } from '../support/helpers.js';
import { startReceiver, waitFor } from '../support/webhook-receiver.js';

describe('webhooks: attacks', () => {
  let service: TestService;
  let adminKey: string;
  const logs: string[] = [];
  before(async () => {
    const logStream = new PassThrough();
    logStream.on('data', (chunk: Buffer) => logs.push(chunk.toString()));
    service = await startTestService({ logStream, webhookTimings: { pollIntervalMs: 25, requestTimeoutMs: 1000 } });
    adminKey = (await service.ctx.adminKeys.create('security test', 'test')).key;
  });
  after(() => service.close());

  const admin = async (method: string, path: string, body?: unknown, key: string | null = adminKey) => {
    const response = await fetch(`${service.url}${ADMIN_PREFIX}${path}`, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
  const webhookEvents = async () => (await service.ctx.events.list({ limit: 1000 })).events.filter((e) => e.type.startsWith('webhook.'));

  it('refuses every webhook route without a valid admin key, and changes nothing', async () => {
    const existing = await service.ctx.webhooks.create({ url: 'http://127.0.0.1:9/x', events: ['user.deleted'] }, 'test');
    const eventsBefore = (await webhookEvents()).length;
    const revoked = await service.ctx.adminKeys.create('revoked', 'test');
    await service.ctx.adminKeys.revoke(revoked.id, 'test');
    for (const key of [null, 'admin_not-a-key', revoked.key]) {
      for (const [method, path, body] of [
        ['GET', '/webhooks'],
        ['POST', '/webhooks', { url: 'http://127.0.0.1:9/y', events: ['all'] }],
        ['DELETE', `/webhooks/${existing.id}`],
        ['POST', `/webhooks/${existing.id}/disable`],
      ] as const) {
        const answer = await admin(method, path, body, key);
        assert.equal(answer.status, 401, `${method} ${path}`);
        assert.equal(answer.body.code, 'ERR_ADMIN_KEY_INVALID');
      }
    }
    assert.deepEqual(
      (await service.ctx.webhooks.list()).map((w) => [w.id, w.disabledAt]),
      [[existing.id, null]],
    );
    assert.equal((await webhookEvents()).length, eventsBefore);
    await service.ctx.webhooks.delete(existing.id, 'test');
  });

  it('refuses URLs that are not plain http(s) and unknown event types with ERR_REQUEST_INVALID, creating nothing', async () => {
    const eventsBefore = (await webhookEvents()).length;
    const bad: { url: string; events: unknown }[] = [
      { url: 'file:///etc/passwd', events: ['all'] },
      { url: 'javascript:alert(1)', events: ['all'] },
      { url: 'ftp://127.0.0.1/x', events: ['all'] },
      { url: 'gopher://127.0.0.1:6379/_FLUSHALL', events: ['all'] },
      { url: '/relative/path', events: ['all'] },
      { url: 'http://user:pass@127.0.0.1/x', events: ['all'] },
      { url: 'http://127.0.0.1/x#fragment', events: ['all'] },
      { url: `http://127.0.0.1/${'a'.repeat(WEBHOOK_URL_MAX_LENGTH)}`, events: ['all'] },
      { url: 'http://127.0.0.1/x', events: ['user.exploded'] },
      { url: 'http://127.0.0.1/x', events: ['all', 'user.created'] },
      { url: 'http://127.0.0.1/x', events: [] },
      { url: 'http://127.0.0.1/x', events: 'all' },
    ];
    for (const body of bad) {
      const answer = await admin('POST', '/webhooks', body);
      assert.equal(answer.status, 400, JSON.stringify(body).slice(0, 80));
      assert.equal(answer.body.code, 'ERR_REQUEST_INVALID');
    }
    const unknown = await admin('POST', '/webhooks', { url: 'http://127.0.0.1/x', events: ['user.created', 'user.exploded'] });
    assert.match(unknown.body.message, /Unknown event type "user\.exploded"/);
    assert.equal((await admin('POST', '/webhooks', { url: 'http://127.0.0.1/x', events: ['all'], secret: 'mine' })).status, 400);
    assert.deepEqual((await admin('GET', '/webhooks')).body, { webhooks: [], nextCursor: null });
    assert.equal((await webhookEvents()).length, eventsBefore, 'no admin action recorded for refused input');
  });

  it('refuses, in production, plain http and endpoints that name loopback, private or link-local addresses', () => {
    for (const url of [
      'http://hooks.example.com/x',
      'https://127.0.0.1/x',
      'https://127.1.2.3/x',
      'https://10.0.0.8/x',
      'https://172.16.5.5/x',
      'https://192.168.1.1/x',
      'https://169.254.169.254/latest/meta-data/',
      'https://0.0.0.0/x',
      'https://[::1]/x',
      'https://[fe80::1]/x',
      'https://[fd00::1]/x',
      'https://[::ffff:127.0.0.1]/x',
      'https://localhost/x',
      'https://api.localhost/x',
    ])
      assert.throws(() => checkWebhookUrl(url, true), { code: 'ERR_REQUEST_INVALID' }, url);
    assert.equal(checkWebhookUrl('https://hooks.example.com/x', true), 'https://hooks.example.com/x');
    assert.equal(checkWebhookUrl('http://127.0.0.1:8000/x', false), 'http://127.0.0.1:8000/x');
  });

  it('shows the signing secret once: never in a listing, a later answer, an event, a log line or the database in clear', async () => {
    const receiver = await startReceiver(() => 500);
    try {
      const created = await admin('POST', '/webhooks', { url: receiver.url, events: ['all'] });
      assert.equal(created.status, 201);
      const { secret, id } = created.body;
      assert.match(secret, /^whsec_/);
      await waitFor('a failed attempt', () => receiver.received.length > 0);
      const answers = [
        await admin('GET', '/webhooks'),
        await admin('POST', `/webhooks/${id}/disable`),
        await admin('POST', `/webhooks/${id}/enable`),
      ];
      for (const answer of answers) {
        assert.equal(answer.status, 200);
        assert.ok(!JSON.stringify(answer.body).includes(secret.slice(6)));
        assert.ok(!JSON.stringify(answer.body).includes('secret'));
      }
      const secretBytes = secret.slice('whsec_'.length);
      assert.ok(!JSON.stringify(await service.ctx.events.list({ limit: 1000 })).includes(secretBytes));
      assert.ok(!logs.join('').includes(secretBytes), 'never logged');
      const rows = await service.ctx.db.selectFrom('webhook_endpoints').selectAll().execute();
      assert.ok(!JSON.stringify(rows).includes(secretBytes), 'sealed at rest');
      assert.equal((await admin('DELETE', `/webhooks/${id}`)).status, 204);
      assert.equal((await admin('DELETE', `/webhooks/${id}`)).status, 404);
    } finally {
      await receiver.close();
    }
  });

  it('lets the receiver detect a forged, altered, replayed or stale delivery', async () => {
    const receiver = await startReceiver(() => 204);
    try {
      const { secret, id } = await service.ctx.webhooks.create({ url: receiver.url, events: ['user.disabled'] }, 'test');
      await service.ctx.events.record({ type: 'user.disabled', userId: 'usr_tamper' });
      await waitFor('the delivery', () => receiver.received.length === 1);
      const [delivery] = receiver.received;
      assert.ok(delivery);
      const headers = delivery.headers as Record<string, string>;
      const receiverCheck = new Webhook(secret);
      assert.equal((receiverCheck.verify(delivery.body, headers) as { type: string }).type, 'user.disabled');

      const altered = delivery.body.replace('usr_tamper', 'usr_victim');
      assert.throws(() => receiverCheck.verify(altered, headers), WebhookVerificationError);
      assert.throws(
        () => new Webhook(`whsec_${Buffer.alloc(24, 7).toString('base64')}`).verify(delivery.body, headers),
        WebhookVerificationError,
      );
      assert.throws(() => receiverCheck.verify(delivery.body, { ...headers, 'webhook-id': 'msg_other' }), WebhookVerificationError);
      const stale = String(Number(headers['webhook-timestamp']) - 10 * 60);
      assert.throws(() => receiverCheck.verify(delivery.body, { ...headers, 'webhook-timestamp': stale }), WebhookVerificationError);
      assert.throws(() => receiverCheck.verify(delivery.body, { ...headers, 'webhook-signature': 'v1,AAAA' }), WebhookVerificationError);
      await service.ctx.webhooks.delete(id, 'test');
    } finally {
      await receiver.close();
    }
  });

  it('does not follow a redirect: a 3xx is a failed attempt and the other address gets nothing', async () => {
    const elsewhere = await startReceiver(() => 204);
    const receiver = await startReceiver(() => ({ status: 307, headers: { location: elsewhere.url } }));
    try {
      const { id } = await service.ctx.webhooks.create({ url: receiver.url, events: ['user.enabled'] }, 'test');
      await service.ctx.events.record({ type: 'user.enabled', userId: 'usr_redirect' });
      await waitFor('the failure', async () => (await service.ctx.webhooks.list()).find((w) => w.id === id)?.failureCount === 1);
      assert.equal((await service.ctx.webhooks.list()).find((w) => w.id === id)?.lastError, 'HTTP 307 (attempt 1)');
      assert.equal(elsewhere.received.length, 0);
      await service.ctx.webhooks.delete(id, 'test');
    } finally {
      await receiver.close();
      await elsewhere.close();
    }
  });
});
