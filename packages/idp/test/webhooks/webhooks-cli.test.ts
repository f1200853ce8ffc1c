/**
 * `service-idp webhooks …` (the CLI on a data folder, SQLite), and a node (the built CLI's `start`) killed with
 * SIGKILL while a delivery is in flight: another node started on the same data takes the
 * delivery over once the lease ends, so the event still arrives (same webhook-id, valid signature).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { WEBHOOK_POLL_INTERVAL_MS } from '../../src/defaults.js';
import { WebhookEndpointSchema } from '../../src/webhooks/routes.js';
import { freePort, runCli, SQLITE_SUITE_ONLY } from '../support/helpers.js';
import { startReceiver, waitFor } from '../support/webhook-receiver.js';

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

describe('service-idp webhooks', SQLITE_SUITE_ONLY, () => {
  let data: string;
  before(() => {
    data = mkdtempSync(join(tmpdir(), 'service-idp-webhooks-cli-'));
  });
  after(() => rmSync(data, { recursive: true, force: true }));
  const cli = (...args: string[]) => runCli([...args, '--data', data]);

  it('creates, lists, disables, enables and deletes endpoints; prints the secret once', async () => {
    const made = await cli('webhooks', 'create', '--url', 'http://127.0.0.1:9/hooks', '--events', 'user.deleted,user.disabled', '--json');
    assert.equal(made.code, 0, made.stderr);
    const endpoint = JSON.parse(made.stdout);
    assert.match(endpoint.secret, /^whsec_/);
    assert.deepEqual(endpoint.events, ['user.deleted', 'user.disabled']);

    const listed = await cli('webhooks', 'list', '--json');
    const [shown] = JSON.parse(listed.stdout).webhooks;
    assert.deepEqual(Object.keys(shown).sort(), Object.keys(WebhookEndpointSchema.properties).sort(), 'the admin API shape');
    assert.ok(!listed.stdout.includes(endpoint.secret.slice(6)), 'no secret in a listing');
    assert.match(
      (await cli('webhooks', 'list')).stdout,
      new RegExp(`${endpoint.id}\\s+http://127\\.0\\.0\\.1:9/hooks\\s+user\\.deleted,user\\.disabled\\s+enabled`),
    );

    assert.match((await cli('webhooks', 'disable', endpoint.id)).stdout, /disabled/);
    assert.match((await cli('webhooks', 'list')).stdout, /disabled \(operator\)/);
    const paused = JSON.parse((await cli('events', '--type', 'webhook.disabled', '--json')).stdout).events;
    assert.deepEqual(paused[0].detail, { webhookId: endpoint.id, reason: 'operator' });
    assert.match((await cli('webhooks', 'enable', endpoint.id)).stdout, /enabled/);
    const events = JSON.parse((await cli('events', '--type', 'webhook.created', '--json')).stdout).events;
    assert.deepEqual(events[0].detail, { webhookId: endpoint.id, events: 'user.deleted,user.disabled' });
    assert.equal(events[0].actor, 'cli');

    assert.equal((await cli('webhooks', 'delete', endpoint.id)).code, 0);
    const again = await cli('webhooks', 'delete', endpoint.id);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /No webhook endpoint/);
    assert.deepEqual(JSON.parse((await cli('webhooks', 'list', '--json')).stdout), { webhooks: [], nextCursor: null });
  });

  it('refuses a bad URL, an unknown event type or a missing flag with exit status 2, creating nothing', async () => {
    for (const [args, message] of [
      [['--url', 'ftp://127.0.0.1/x', '--events', 'all'], /must be http\(s\)/],
      [['--url', 'http://127.0.0.1/x', '--events', 'user.created,user.exploded'], /Unknown event type "user\.exploded"/],
      [['--url', 'http://127.0.0.1/x'], /usage: service-idp webhooks create/],
    ] as const) {
      const refused = await cli('webhooks', 'create', ...args);
      assert.equal(refused.code, 2, refused.stderr);
      assert.match(refused.stderr, message);
    }
    assert.deepEqual(JSON.parse((await cli('webhooks', 'list', '--json')).stdout), { webhooks: [], nextCursor: null });
  });
});

describe('a node killed mid-delivery', SQLITE_SUITE_ONLY, () => {
  // The nodes run with a short lease (and a timeout below it, as configuration requires) so the
  // takeover is not a 30 s wait (WEBHOOK_LEASE_MS stays the default); the hanging delivery
  // still outlives the kill, so the second node can only deliver by taking the lease over.
  const TIMEOUT_MS = 3000;
  const LEASE_MS = 4000;
  let data: string;
  const nodes: ChildProcess[] = [];
  before(() => {
    data = mkdtempSync(join(tmpdir(), 'service-idp-webhooks-kill-'));
  });
  after(() => {
    for (const node of nodes) node.kill('SIGKILL');
    rmSync(data, { recursive: true, force: true });
  });

  async function startNode(): Promise<ChildProcess> {
    const port = await freePort();
    const node = spawn(process.execPath, [CLI, 'start', '--data', data, '--port', String(port)], {
      env: {
        PATH: process.env.PATH ?? '',
        SERVICE_IDP_LOG_LEVEL: 'error',
        SERVICE_IDP_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
        SERVICE_IDP_WEBHOOK_LEASE_MS: String(LEASE_MS),
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    nodes.push(node);
    await waitFor(
      'the node to be ready',
      async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200,
      // An upper bound, not a wait: generous, for a machine busy with other test files (--test-concurrency).
      60_000,
    );
    return node;
  }

  it('loses no event: another node delivers it once the dead node’s lease ends', { timeout: LEASE_MS + 180_000 }, async () => {
    const receiver = await startReceiver((_, index) => (index === 0 ? 'hang' : 204));
    try {
      const first = await startNode();
      const made = await runCli(['webhooks', 'create', '--data', data, '--url', receiver.url, '--events', 'admin_key.created', '--json']);
      assert.equal(made.code, 0, made.stderr);
      const { secret } = JSON.parse(made.stdout);
      // Recorded by the CLI process, with its outbox row; the running node delivers it.
      assert.equal((await runCli(['admin-keys', 'create', '--data', data, '--name', 'crash test'])).code, 0);
      await waitFor('the delivery in flight', () => receiver.received.length === 1, 5 * WEBHOOK_POLL_INTERVAL_MS + 10_000);
      first.kill('SIGKILL');
      await new Promise((resolve) => first.once('exit', resolve));

      await startNode();
      // Timed from the second node's readiness, not the kill: its start-up time (long on a busy
      // machine) is not the lease's; the lease bounds the wait from there.
      const readyAt = Date.now();
      await waitFor('the delivery by the second node', () => receiver.received.length === 2, LEASE_MS + 30_000);
      assert.ok(Date.now() - readyAt < LEASE_MS + 10_000, `delivered ${Date.now() - readyAt} ms after the second node was ready`);
      const [inFlight, delivered] = receiver.received;
      assert.equal(delivered?.headers['webhook-id'], inFlight?.headers['webhook-id'], 'the same message, so the receiver can dedupe');
      const payload = new Webhook(secret).verify(delivered?.body ?? '', delivered?.headers as Record<string, string>) as { type: string };
      assert.equal(payload.type, 'admin_key.created');
      await waitFor('the success recorded', async () => {
        const [endpoint] = JSON.parse((await runCli(['webhooks', 'list', '--data', data, '--json'])).stdout).webhooks;
        return endpoint.lastDeliveredAt !== null && endpoint.failureCount === 0;
      });
    } finally {
      await receiver.close();
    }
  });
});
