/**
 * Attack: a botnet with many addresses on many networks uses the sign-in to mail-bomb people
 * or run up the operator's bill. The per-address and per-recipient limits stop one sender; the
 * per-network limit (an IPv4 /24, an IPv6 /48) stops a bot spread over one network; the send
 * budgets bound what the whole service, and each application, sends, and tell the operator once
 * per window (issue 41). Client addresses come from X-Forwarded-For only through a trusted proxy.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SEND_PER_IP, SEND_PER_SUBNET } from '../../src/defaults.js';
import { parseBudget, subnetOf } from '../../src/otp/send-budgets.js';
import { APP_ORIGIN, startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import { startReceiver, waitFor } from '../support/webhook-receiver.js';

/** One sign-in code asked for `email` from `ip` (through the trusted proxy), by the app of `publishableKey`. */
async function ask(service: TestService, email: string, ip: string, app?: { origin: string; publishableKey: string }) {
  const answer = app
    ? await fetch(`${service.url}/v1/authenticate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: app.origin, 'x-service-key': app.publishableKey, 'x-forwarded-for': ip },
        body: JSON.stringify({ userid: email, cryptoVersion: 'v1' }),
      }).then(async (response) => ({ status: response.status, body: await response.json(), headers: response.headers }))
    : await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1' }, APP_ORIGIN, { 'x-forwarded-for': ip });
  return { status: answer.status, body: answer.body, retryAfter: answer.headers.get('retry-after') };
}

/** A value of the metrics page, e.g. `service_idp_codes_refused_total{reason="rate_limited",limit="subnet"}`; 0 when absent. */
async function metric(service: TestService, series: string): Promise<number> {
  const page = await service.ctx.metrics.render();
  const line = page.split('\n').find((row) => row.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

/** Distinct networks for distinct senders: 10.<n>.<m>.1 is in its own /24 for every (n, m). */
const networkAddress = (n: number) => `10.${Math.floor(n / 250) + 1}.${n % 250}.1`;

describe('the network a client address counts in', () => {
  it('is an IPv4 /24 and an IPv6 /48, an IPv4-mapped address counting as its IPv4 one', () => {
    assert.equal(subnetOf('203.0.113.77'), '203.0.113.0/24');
    assert.equal(subnetOf('::ffff:203.0.113.77'), '203.0.113.0/24');
    assert.equal(subnetOf('2001:db8:abcd:12::1'), '2001:0db8:abcd::/48');
    assert.equal(subnetOf('2001:db8:abcd::'), '2001:0db8:abcd::/48');
    assert.equal(subnetOf('2001:DB8:ABCD:ffff:1:2:3:4'), '2001:0db8:abcd::/48', 'one network however it is spelled');
    assert.equal(subnetOf('::1'), '0000:0000:0000::/48');
  });

  it('budget settings are N/minute, N/hour or N/day; anything else is refused', () => {
    assert.deepEqual(parseBudget('10/hour, 2/minute'), [
      { max: 2, windowSeconds: 60 },
      { max: 10, windowSeconds: 3600 },
    ]);
    for (const bad of ['10', '10/week', '0/hour', '-1/day', '5/hour,6/hour', '1e3/day']) assert.throws(() => parseBudget(bad), bad);
  });
});

describe('a botnet spread over one network', () => {
  let service: TestService;
  before(async () => {
    service = await startTestService({ env: { SERVICE_IDP_TRUST_PROXY: '127.0.0.1' } });
  });
  after(() => service.close());

  it(`is refused at the network's ${SEND_PER_SUBNET[0].max} codes an hour, however many of its addresses it uses; another network is not`, async () => {
    // Each address stays well under its own limit (SEND_PER_IP): only the network's count refuses.
    const perAddress = Math.floor(SEND_PER_IP[0].max / 2);
    for (let sent = 0; sent < SEND_PER_SUBNET[0].max; sent++) {
      const ip = `198.51.100.${1 + Math.floor(sent / perAddress)}`;
      const answer = await ask(service, uniqueEmail('bot'), ip);
      assert.equal(answer.status, 200, `send ${sent + 1} from ${ip}: ${JSON.stringify(answer.body)}`);
    }
    const refused = await ask(service, uniqueEmail('bot'), '198.51.100.250');
    assert.equal(refused.status, 429);
    assert.equal(refused.body.code, 'ERR_RATE_LIMITED');
    assert.ok(Number(refused.retryAfter) > 0, `retry-after ${refused.retryAfter}`);
    assert.equal(await metric(service, 'service_idp_codes_refused_total{reason="rate_limited",limit="subnet"}'), 1);
    assert.equal((await ask(service, uniqueEmail('neighbour'), '198.51.101.1')).status, 200, 'the next /24 is another network');
  });

  it('an X-Forwarded-For from an untrusted peer does not move a sender to another network', async () => {
    const direct = await startTestService();
    try {
      const forged = await ask(direct, uniqueEmail('forged'), '192.0.2.1');
      assert.equal(forged.status, 200);
      // Counted under the socket's address (127.0.0.1), never the forged one.
      const subject = `send:subnet:${subnetOf('127.0.0.1')}`;
      const rows = await direct.ctx.db.selectFrom('rate_counters').select('key').where('key', 'like', 'send:subnet:%').execute();
      assert.deepEqual(
        rows.map((row) => row.key.slice(0, subject.length)),
        [subject],
      );
    } finally {
      await direct.close();
    }
  });
});

describe('send budgets', () => {
  let service: TestService;
  let other: { origin: string; publishableKey: string; clientId: string };
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let hookSecret: string;
  before(async () => {
    service = await startTestService({
      env: { SERVICE_IDP_TRUST_PROXY: '127.0.0.1', SERVICE_IDP_MAIL_BUDGET: '6/hour', SERVICE_IDP_APP_MAIL_BUDGET: '4/hour' },
      webhookTimings: { pollIntervalMs: 25, requestTimeoutMs: 500 },
    });
    receiver = await startReceiver(() => 204);
    hookSecret = (await service.ctx.webhooks.create({ url: receiver.url, events: ['send_budget.exhausted'] }, 'test')).secret;
    const origin = 'http://other.test:3000';
    const keys = await service.ctx.clients.create({ name: 'Other App', origins: [origin] });
    other = { origin, publishableKey: keys.publishableKey, clientId: keys.clientId };
  });
  after(async () => {
    await service.close();
    await receiver.close();
  });

  it("one application's flood spends its own budget, not another's: its fifth code is refused, the other app still signs in", async () => {
    for (let n = 0; n < 4; n++) assert.equal((await ask(service, uniqueEmail('flood'), networkAddress(n), other)).status, 200);
    const refused = await ask(service, uniqueEmail('flood'), networkAddress(4), other);
    assert.equal(refused.status, 429);
    assert.equal(refused.body.code, 'ERR_RATE_LIMITED');
    assert.match(refused.body.message, /try again later/i);
    // The refused send spent nothing of the service's budget: the test app has its two left.
    assert.equal((await ask(service, uniqueEmail('user'), networkAddress(5))).status, 200);
  });

  it('the service budget bounds every application together; the operator hears once per window (event, webhook, metric)', async () => {
    assert.equal((await ask(service, uniqueEmail('user'), networkAddress(6))).status, 200, 'the sixth code of the hour');
    for (let n = 7; n < 9; n++) {
      const refused = await ask(service, uniqueEmail('late'), networkAddress(n));
      assert.equal(refused.status, 429, `send from ${networkAddress(n)}`);
      assert.equal(refused.body.code, 'ERR_RATE_LIMITED');
    }
    const { events } = await service.ctx.events.list({ type: 'send_budget.exhausted', limit: 10 });
    const scopes = events.map((event) => [event.detail?.scope, event.clientId ?? null, event.detail?.max, event.detail?.window_seconds]);
    assert.deepEqual(scopes.sort(), [
      ['application', other.clientId, 4, 3600],
      ['service', null, 6, 3600],
    ]);
    assert.equal(await metric(service, 'service_idp_codes_refused_total{reason="rate_limited",limit="service_budget"}'), 2);
    assert.equal(await metric(service, 'service_idp_codes_refused_total{reason="rate_limited",limit="application_budget"}'), 1);
    await waitFor('both alarms delivered', () => receiver.received.length === 2);
    const delivered = receiver.verifyAll(hookSecret) as { type: string; data: { detail: { scope: string } } }[];
    assert.deepEqual(delivered.map((message) => `${message.type} ${message.data.detail.scope}`).sort(), [
      'send_budget.exhausted application',
      'send_budget.exhausted service',
    ]);
  });
});
