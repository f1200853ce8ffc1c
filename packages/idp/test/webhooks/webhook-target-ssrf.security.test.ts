/**
 * Server-side request forgery through a webhook target. Whoever holds an admin key (a leaked
 * one, say) chooses where the service POSTs, from inside the operator's network. In production
 * the service must not be pointed at that network: not by spelling `localhost` so the check
 * misses it (trailing dot, upper case, IDN), not by a public-looking name that resolves to an
 * internal address, not by DNS rebinding (a name that answers public to the check and internal
 * to the connection), not by a receiver that redirects inward. An operator who wants an
 * internal receiver says so: SERVICE_IDP_WEBHOOK_ALLOW_INTERNAL=1.
 *
 * Names resolve through a resolver the test controls; the receiver on 127.0.0.1 counts TCP
 * connections, so "never reached" means no connection at all, not just no request.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ADMIN_PREFIX } from '../../src/admin/prefix.js';
import { loadConfig } from '../../src/config.js';
import type { HostResolver, ResolvedAddress } from '../../src/webhooks/target.js';
import { runCli, SQLITE_SUITE_ONLY, startTestService, type TestService } from '../support/helpers.js';
import { startReceiver, waitFor } from '../support/webhook-receiver.js';

// The issuer must be https in production; its :0 becomes the bound port, reached over plain HTTP (adminClient).
const PRODUCTION = { NODE_ENV: 'production', SMTP_URL: 'smtp://127.0.0.1:1', SERVICE_IDP_ISSUER: 'https://id.example:0' };
/** TEST-NET-3 (RFC 5737): public as far as the policy knows, and nobody answers there. */
const PUBLIC = { address: '203.0.113.7', family: 4 };

const LOCALHOST_SPELLINGS = [
  'https://localhost./h',
  'https://LOCALHOST./h',
  'https://api.localhost./h',
  'https://Api.LocalHost../h',
  'https://ｌｏｃａｌｈｏｓｔ./h', // full-width letters: IDN mapping makes them localhost
  'https://localhost。/h', // ideographic full stop: a dot after IDN mapping
];

/** Answers per name, chosen by the how-many-th lookup of that name it is; counts lookups. */
function controlledResolver() {
  const answers = new Map<string, (call: number) => ResolvedAddress[]>();
  const calls = new Map<string, number>();
  const resolve: HostResolver = async (hostname) => {
    const call = (calls.get(hostname) ?? 0) + 1;
    calls.set(hostname, call);
    const answer = answers.get(hostname);
    if (!answer) throw Object.assign(new Error(`no test answer for ${hostname}`), { code: 'ENOTFOUND' });
    return answer(call);
  };
  return { answers, calls, resolve };
}

function adminClient(service: TestService, key: () => string) {
  return async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`http://127.0.0.1:${new URL(service.url).port}${ADMIN_PREFIX}${path}`, {
      method,
      headers: { authorization: `Bearer ${key()}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
}

const endpointsById = async (service: TestService) => new Map((await service.ctx.webhooks.list()).map((w) => [w.id, w]));

describe('webhook targets in production', () => {
  const resolver = controlledResolver();
  let service: TestService;
  let adminKey = '';
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const admin = () => adminClient(service, () => adminKey);
  before(async () => {
    service = await startTestService({
      env: PRODUCTION,
      webhookResolve: resolver.resolve,
      webhookTimings: { pollIntervalMs: 25, requestTimeoutMs: 1000 },
    });
    adminKey = (await service.ctx.adminKeys.create('ssrf test', 'test')).key;
    receiver = await startReceiver(() => 204);
  });
  after(async () => {
    await receiver.close();
    await service.close();
  });

  it('refuses localhost spelt with trailing dots, in upper case or in IDN, and internal addresses in any IP notation', async () => {
    for (const url of [
      ...LOCALHOST_SPELLINGS,
      'https://127.0.0.1./h',
      'https://0x7f.1/h',
      'https://2130706433/h',
      'https://[::ffff:127.0.0.1]/h',
      'https://[::ffff:a9fe:a9fe]/h', // 169.254.169.254, IPv4-mapped
      'https://[64:ff9b::a00:1]/h', // 10.0.0.1 through NAT64
      'https://100.64.0.1/h',
      'https://224.0.0.1/h',
      'https://255.255.255.255/h',
      'https://[ff02::1]/h',
      'https://[::]/h',
    ]) {
      const answer = await admin()('POST', '/webhooks', { url, events: ['user.disabled'] });
      assert.equal(answer.status, 400, url);
      assert.match(answer.body.message, /must not name a loopback/, url);
    }
    assert.deepEqual((await admin()('GET', '/webhooks')).body, { webhooks: [], nextCursor: null });
    // A public name keeps its trailing dot (a fully qualified name), and is accepted.
    const fqdn = await admin()('POST', '/webhooks', { url: 'https://hooks.example.com./h', events: ['user.disabled'] });
    assert.equal(fqdn.status, 201);
    assert.equal((await admin()('DELETE', `/webhooks/${fqdn.body.id}`)).status, 204);
  });

  it('refuses at delivery a name that resolves to an internal address of any class: no connection is made', async () => {
    const classes: [string, ResolvedAddress[]][] = [
      ['loopback', [{ address: '127.0.0.1', family: 4 }]],
      ['loopback-v6', [{ address: '::1', family: 6 }]],
      ['unspecified', [{ address: '0.0.0.0', family: 4 }]], // connecting to it reaches this machine
      ['unspecified-v6', [{ address: '::', family: 6 }]],
      ['private-10', [{ address: '10.1.2.3', family: 4 }]],
      ['private-172', [{ address: '172.16.0.1', family: 4 }]],
      ['private-192', [{ address: '192.168.1.1', family: 4 }]],
      ['link-local', [{ address: '169.254.169.254', family: 4 }]],
      ['link-local-v6', [{ address: 'fe80::1', family: 6 }]],
      ['unique-local', [{ address: 'fd12:3456::1', family: 6 }]],
      ['cgnat', [{ address: '100.64.0.1', family: 4 }]],
      ['multicast', [{ address: '224.0.0.1', family: 4 }]],
      ['multicast-v6', [{ address: 'ff02::1', family: 6 }]],
      ['broadcast', [{ address: '255.255.255.255', family: 4 }]],
      ['v4-mapped', [{ address: '::ffff:127.0.0.1', family: 6 }]], // reaches the IPv4 receiver
      ['nat64', [{ address: '64:ff9b::7f00:1', family: 6 }]],
      ['public-and-internal', [PUBLIC, { address: '127.0.0.1', family: 4 }]],
    ];
    const ids = new Map<string, string>();
    for (const [label, addresses] of classes) {
      resolver.answers.set(`${label}.hooks.test`, () => addresses);
      // The name passes the create-time check: only its resolution tells.
      const made = await admin()('POST', '/webhooks', {
        url: `https://${label}.hooks.test:${receiver.port}/hooks`,
        events: ['user.disabled'],
      });
      assert.equal(made.status, 201, label);
      ids.set(label, made.body.id);
    }
    await service.ctx.events.record({ type: 'user.disabled', userId: 'usr_ssrf' });
    await waitFor('an attempt per endpoint', async () => [...(await endpointsById(service)).values()].every((w) => w.failureCount >= 1));
    const endpoints = await endpointsById(service);
    assert.deepEqual(
      Object.fromEntries(classes.map(([label]) => [label, endpoints.get(ids.get(label) ?? '')?.lastError])),
      Object.fromEntries(classes.map(([label]) => [label, 'refused address (attempt 1)'])),
    );
    assert.equal(receiver.connections, 0);
    for (const id of ids.values()) await service.ctx.webhooks.delete(id, 'test');
  });

  it('DNS rebinding: one lookup per connection, and the connection goes to the address that was checked', async () => {
    // Public for the first lookup, loopback afterwards: a second lookup between check and connect would reach the receiver.
    resolver.answers.set('rebind.hooks.test', (call) => (call === 1 ? [PUBLIC] : [{ address: '127.0.0.1', family: 4 }]));
    const { id } = await service.ctx.webhooks.create(
      { url: `https://rebind.hooks.test:${receiver.port}/hooks`, events: ['user.enabled'] },
      'test',
    );
    await service.ctx.events.record({ type: 'user.enabled', userId: 'usr_rebind' });
    await waitFor('the first attempt', async () => (await endpointsById(service)).get(id)?.failureCount === 1);
    assert.equal(resolver.calls.get('rebind.hooks.test'), 1);
    // It went to the public address (nobody there) and failed as a network failure, not a refusal.
    assert.doesNotMatch((await endpointsById(service)).get(id)?.lastError ?? '', /refused/);
    assert.equal(receiver.connections, 0);
    // The retry (5 s later) is a new connection: resolved again, and now refused.
    await waitFor('the retry', async () => (await endpointsById(service)).get(id)?.failureCount === 2, 20_000);
    assert.equal((await endpointsById(service)).get(id)?.lastError, 'refused address (attempt 2)');
    assert.equal(resolver.calls.get('rebind.hooks.test'), 2);
    assert.equal(receiver.connections, 0);
    await service.ctx.webhooks.delete(id, 'test');
  });
});

describe('SERVICE_IDP_WEBHOOK_ALLOW_INTERNAL=1 in production', () => {
  const resolver = controlledResolver();
  let service: TestService;
  let adminKey = '';
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  before(async () => {
    service = await startTestService({
      env: { ...PRODUCTION, SERVICE_IDP_WEBHOOK_ALLOW_INTERNAL: '1' },
      webhookResolve: resolver.resolve,
      webhookTimings: { pollIntervalMs: 25, requestTimeoutMs: 1000 },
    });
    adminKey = (await service.ctx.adminKeys.create('allow test', 'test')).key;
    receiver = await startReceiver(() => 204);
  });
  after(async () => {
    await receiver.close();
    await service.close();
  });

  it('lets internal receivers be named and reached', async () => {
    const admin = adminClient(service, () => adminKey);
    resolver.answers.set('inside.hooks.test', () => [{ address: '127.0.0.1', family: 4 }]);
    const ids: string[] = [];
    for (const url of [`https://inside.hooks.test:${receiver.port}/hooks`, `https://127.0.0.1:${receiver.port}/hooks`]) {
      const made = await admin('POST', '/webhooks', { url, events: ['user.disabled'] });
      assert.equal(made.status, 201, url);
      ids.push(made.body.id);
    }
    assert.equal((await admin('POST', '/webhooks', { url: 'https://localhost./h', events: ['user.disabled'] })).status, 201);
    await service.ctx.events.record({ type: 'user.disabled', userId: 'usr_inside' });
    await waitFor('an attempt per endpoint', async () => [...(await endpointsById(service)).values()].every((w) => w.failureCount >= 1));
    // The receiver speaks plain HTTP, so the TLS handshake fails, but only after the connection was made.
    assert.ok(receiver.connections >= 2, `${receiver.connections} connections`);
    const endpoints = await endpointsById(service);
    for (const id of ids) assert.doesNotMatch(endpoints.get(id)?.lastError ?? '', /refused/);
  });

  it('is 1 or 0, nothing else', () => {
    assert.equal(loadConfig({}, { SERVICE_IDP_WEBHOOK_ALLOW_INTERNAL: '1' }).webhookAllowInternal, true);
    assert.equal(loadConfig({}, {}).webhookAllowInternal, false);
    assert.throws(() => loadConfig({}, { SERVICE_IDP_WEBHOOK_ALLOW_INTERNAL: 'yes' }), /must be 1 or 0/);
  });
});

describe('redirects from a receiver', () => {
  // Development, so a loopback receiver may be the target; the redirect's target is internal too.
  let service: TestService;
  before(async () => {
    service = await startTestService({ webhookTimings: { pollIntervalMs: 25, requestTimeoutMs: 1000 } });
  });
  after(() => service.close());

  it('are never followed: a 3xx is a failed attempt and the address it names gets no connection', async () => {
    const inward = await startReceiver(() => 204);
    const statuses = [301, 302, 303, 307, 308];
    const bouncers = await Promise.all(statuses.map((status) => startReceiver(() => ({ status, headers: { location: inward.url } }))));
    try {
      const ids: string[] = [];
      for (const bouncer of bouncers)
        ids.push((await service.ctx.webhooks.create({ url: bouncer.url, events: ['user.disabled'] }, 'test')).id);
      await service.ctx.events.record({ type: 'user.disabled', userId: 'usr_bounce' });
      await waitFor('an attempt per endpoint', async () => [...(await endpointsById(service)).values()].every((w) => w.failureCount >= 1));
      const endpoints = await endpointsById(service);
      assert.deepEqual(
        ids.map((id) => endpoints.get(id)?.lastError),
        statuses.map((status) => `HTTP ${status} (attempt 1)`),
      );
      assert.deepEqual(
        bouncers.map((b) => b.received.length),
        statuses.map(() => 1),
      );
      assert.equal(inward.connections, 0);
    } finally {
      await Promise.all([inward, ...bouncers].map((r) => r.close()));
    }
  });
});

describe('service-idp webhooks create in production', SQLITE_SUITE_ONLY, () => {
  let data: string;
  before(() => {
    data = mkdtempSync(join(tmpdir(), 'service-idp-webhook-target-'));
  });
  after(() => rmSync(data, { recursive: true, force: true }));
  const cli = (env: Record<string, string>, ...args: string[]) => runCli([...args, '--data', data], { ...PRODUCTION, ...env });

  it('refuses localhost spelt with a trailing dot, in upper case or in IDN, unless internal receivers are allowed', async () => {
    for (const url of LOCALHOST_SPELLINGS.slice(0, 4)) {
      const refused = await cli({}, 'webhooks', 'create', '--url', url, '--events', 'all');
      assert.equal(refused.code, 2, `${url}: ${refused.stderr}`);
      assert.match(refused.stderr, /must not name a loopback/);
    }
    assert.deepEqual(JSON.parse((await cli({}, 'webhooks', 'list', '--json')).stdout), { webhooks: [], nextCursor: null });
    const allowed = await cli(
      { SERVICE_IDP_WEBHOOK_ALLOW_INTERNAL: '1' },
      'webhooks',
      'create',
      '--url',
      'https://localhost./h',
      '--events',
      'all',
    );
    assert.equal(allowed.code, 0, allowed.stderr);
  });
});
