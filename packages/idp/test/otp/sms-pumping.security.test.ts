/**
 * Attack: SMS pumping (issue 41). A bot enrolls, or signs in with, phone numbers an accomplice
 * is paid for: premium-rate and shared-cost lines, unallocated ranges some carriers still bill,
 * numbers in expensive countries, or one block of numbers walked one by one. Each SMS bills the
 * operator. The send rules (otp/send-rules.ts) refuse the number before anything is counted or
 * stored; the number-block limit and the daily cost cap bound what passes them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import type { SmsMessage, SmsTransport } from '../../src/sms/transport.js';
import { adminApi } from '../support/admin-api.js';
import {
  loginWithDevice,
  newRawDevice,
  startTestService,
  type TestService,
  uniqueEmail,
  verifiedRegistration,
} from '../support/helpers.js';
import { startReceiver, waitFor } from '../support/webhook-receiver.js';

/** The SMS provider, as the operator's would see it: every message that reached it. */
function providerOf(): SmsTransport & { sent: SmsMessage[] } {
  const sent: SmsMessage[] = [];
  return {
    sent,
    async send(message) {
      sent.push(message);
    },
    describe: () => 'test provider',
  };
}

/** An application of the service with its own origin and key (the test app's are service.post's). */
interface App {
  origin: string;
  publishableKey: string;
  clientId: string;
}

async function addApp(service: TestService, name: string, origin: string): Promise<App> {
  const keys = await service.ctx.clients.create({ name, origins: [origin] });
  return { origin, publishableKey: keys.publishableKey, clientId: keys.clientId };
}

/** A browser request of `app` (the test app when none). */
async function post(service: TestService, path: string, body: unknown, app?: App) {
  if (!app) return service.post(path, body);
  const response = await fetch(service.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: app.origin, 'x-service-key': app.publishableKey },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

/** A new user of `app` at the device step with a verified email code (test mode): its email and device token. */
async function verifiedUser(service: TestService, app?: App) {
  const email = uniqueEmail('sms');
  if (!app) return { email, deviceToken: await verifiedRegistration(service, email) };
  const asked = await post(service, '/v1/authenticate', { userid: email, cryptoVersion: 'v1', rememberDevice: true }, app);
  const verified = await post(
    service,
    '/v1/email-otp/verify',
    { userid: email, deviceToken: asked.body.deviceToken, otp: asked.body.code },
    app,
  );
  assert.equal(verified.status, 200, JSON.stringify(verified.body));
  return { email, deviceToken: asked.body.deviceToken as string };
}

/** A new user of `app` enrolling in SMS at `phone`: the /v1/devices answer (an SMS is sent when it is FINALIZE_REGISTRATION_NEEDED). */
async function enrollSms(service: TestService, phone: string, app?: App) {
  const { email, deviceToken } = await verifiedUser(service, app);
  const device = await newRawDevice();
  const body = { userid: email, deviceToken, devicePublicKey: device.publicJwk, mfaMethod: 'sms', phoneNumber: phone };
  return {
    ...(await post(service, '/v1/devices', body, app)),
    email,
    device,
    retry: (other: string) => post(service, '/v1/devices', { ...body, phoneNumber: other }, app),
  };
}

/** The throttle counters of SMS (number blocks, cost): a refused number must have added none. */
const smsCounters = async (service: TestService) =>
  (await service.ctx.db.selectFrom('rate_counters').select(['key', 'count']).where('key', 'like', 'send:sms-%').execute()).map(
    (row) => `${row.key}=${row.count}`,
  );

/** A value of the metrics page; 0 when absent. */
async function metric(service: TestService, series: string): Promise<number> {
  const page = await service.ctx.metrics.render();
  const line = page.split('\n').find((row) => row.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

describe('SMS pumping: refused numbers', () => {
  let service: TestService;
  const provider = providerOf();
  let other: App;
  before(async () => {
    // The service-wide list allows the US only; the other app lists GB for itself.
    service = await startTestService({ testMode: true, sms: provider, env: { SERVICE_IDP_SMS_COUNTRIES: 'US' } });
    other = await addApp(service, 'Other App', 'http://other.test:3000');
    await service.ctx.clients.setSendRules(other.clientId, { smsCountries: ['GB'] });
  });
  after(() => service.close());

  const refusedWithoutTrace = async (answer: { status: number; body: any }, phone: string, reason: RegExp) => {
    assert.equal(answer.status, 400, JSON.stringify(answer.body));
    assert.equal(answer.body.code, 'ERR_REQUEST_INVALID');
    assert.match(answer.body.message, reason);
    assert.ok(!JSON.stringify(answer.body).includes(phone.slice(4)), 'the answer does not repeat the number');
    assert.equal(provider.sent.filter((message) => message.to === phone).length, 0, 'nothing reached the provider');
  };

  it('an SMS to a premium range is refused (US 900, UK 09 and 087), nothing sent or counted; the same sign-in then enrolls a mobile', async () => {
    const before = await smsCounters(service);
    const premium = await enrollSms(service, '+19005550100');
    await refusedWithoutTrace(premium, '+19005550100', /premium-rate/);
    assert.deepEqual(await smsCounters(service), before, 'no SMS counter moved');
    // No state change: the sign-in was not completed, so the same device token enrolls a valid number.
    const retried = await premium.retry('+14155550123');
    assert.equal(retried.status, 200, JSON.stringify(retried.body));
    assert.equal(retried.body.status, 'FINALIZE_REGISTRATION_NEEDED');
    assert.equal(provider.sent.at(-1)?.to, '+14155550123');
    for (const [phone, app] of [
      ['+449098790000', other],
      ['+448712345678', other],
    ] as const)
      await refusedWithoutTrace(await enrollSms(service, phone, app), phone, /premium-rate or shared-cost/);
  });

  it('an SMS to an unallocated or invalid range is refused (UK drama range, no NANP area code 555)', async () => {
    await refusedWithoutTrace(await enrollSms(service, '+447700900123', other), '+447700900123', /not a valid, allocated number/);
    await refusedWithoutTrace(await enrollSms(service, '+15550001111'), '+15550001111', /not a valid, allocated number/);
  });

  it('an SMS to a country not allowed for this app is refused', async () => {
    // The test app has no list of its own: the service's (US) applies.
    await refusedWithoutTrace(await enrollSms(service, '+447700123456'), '+447700123456', /not sent by SMS to this country/);
    // The other app lists GB only: a US number is refused there.
    await refusedWithoutTrace(await enrollSms(service, '+14155550188', other), '+14155550188', /not sent by SMS to this country/);
    const allowed = await enrollSms(service, '+447700123456', other);
    assert.equal(allowed.status, 200, JSON.stringify(allowed.body));
    assert.equal(provider.sent.at(-1)?.to, '+447700123456');
  });

  it("one app's allowlist does not open another's: GB, allowed for the other app, stays refused for the test app", async () => {
    await refusedWithoutTrace(await enrollSms(service, '+447400123456'), '+447400123456', /not sent by SMS to this country/);
    // Back to the service's list for the other app: GB is refused there too now.
    await service.ctx.clients.setSendRules(other.clientId, { smsCountries: null });
    await refusedWithoutTrace(await enrollSms(service, '+447400123457', other), '+447400123457', /not sent by SMS to this country/);
  });

  it('the rule is read at each send: a sign-in SMS to a number its app no longer allows is refused at the MFA step', async () => {
    const phone = '+14155550177';
    const enrolled = await enrollSms(service, phone);
    const code = provider.sent.at(-1)?.body.match(/\b(\d{6})\b/)?.[1];
    const confirmed = await service.post('/v1/mfa/verify', { userid: enrolled.email, sessionId: enrolled.body.sessionId, otp: code });
    assert.equal(confirmed.status, 200, JSON.stringify(confirmed.body));
    enrolled.device.deviceId = confirmed.body.deviceId;
    const challenged = await loginWithDevice(service, enrolled.device, enrolled.email);
    assert.deepEqual([challenged.status, challenged.method], ['MFA_REQUIRED', 'sms']);
    await service.ctx.clients.setSendRules(service.clientId, { smsCountries: ['GB'] });
    try {
      const sent = provider.sent.length;
      const initiated = await service.post('/v1/mfa/initiate', { userid: enrolled.email, sessionId: challenged.sessionId });
      assert.equal(initiated.status, 400, JSON.stringify(initiated.body));
      assert.match(initiated.body.message, /not sent by SMS to this country/);
      assert.equal(provider.sent.length, sent, 'nothing reached the provider');
    } finally {
      await service.ctx.clients.setSendRules(service.clientId, { smsCountries: null });
    }
  });
});

describe("SMS pumping: an application's countries through the admin API", () => {
  it('PATCH sets and removes them, a bad code is refused with no change, and GET shows them', async () => {
    const service = await startTestService();
    try {
      const { key } = await service.ctx.adminKeys.create('ops', 'cli');
      const admin = adminApi(service.url, key);
      const patched = await admin('PATCH', `/clients/${service.clientId}`, { smsCountries: ['fr', 'BE'], mailDomains: ['corp.test'] });
      assert.equal(patched.status, 204, JSON.stringify(patched.body));
      const shown = async () => (await admin('GET', `/clients/${service.clientId}`)).body.sendRules;
      assert.deepEqual(await shown(), { smsCountries: ['BE', 'FR'], mailDomains: ['corp.test'] });
      const refused = await admin('PATCH', `/clients/${service.clientId}`, { smsCountries: ['ZZ'] });
      assert.equal(refused.status, 400);
      assert.equal(refused.body.code, 'ERR_REQUEST_INVALID');
      assert.deepEqual(await shown(), { smsCountries: ['BE', 'FR'], mailDomains: ['corp.test'] });
      assert.equal((await admin('PATCH', `/clients/${service.clientId}`, { smsCountries: null, mailDomains: null })).status, 204);
      assert.deepEqual(await shown(), { smsCountries: null, mailDomains: null });
    } finally {
      await service.close();
    }
  });
});

describe('SMS pumping: the default country list', () => {
  it('with a real transport and no SERVICE_IDP_SMS_COUNTRIES, no SMS is sent; with the development outbox every country is', () => {
    const webhook = { SMS_TRANSPORT: 'webhook', SMS_WEBHOOK_URL: 'https://sms.example/hook', SMS_WEBHOOK_SECRET: 'x'.repeat(32) };
    assert.deepEqual(loadConfig({}, webhook).sendRules.sms.countries, []);
    assert.equal(loadConfig({}, {}).sendRules.sms.countries, 'any');
    assert.deepEqual(loadConfig({}, { ...webhook, SERVICE_IDP_SMS_COUNTRIES: 'us, gb' }).sendRules.sms.countries, ['GB', 'US']);
    for (const bad of ['USA', 'XX', 'U1'])
      assert.throws(() => loadConfig({}, { SERVICE_IDP_SMS_COUNTRIES: bad }), /SERVICE_IDP_SMS_COUNTRIES/, bad);
    assert.throws(() => loadConfig({}, { SERVICE_IDP_SMS_DAILY_COST_CAP: '5' }), /default=/, 'a cap needs a default price');
    assert.throws(() => loadConfig({}, { SERVICE_IDP_SMS_PRICES: 'default=0.05' }), /no SERVICE_IDP_SMS_DAILY_COST_CAP/);
  });

  it('a real transport without a country list refuses the SMS before the provider sees it', async () => {
    const provider = providerOf();
    const service = await startTestService({
      testMode: true,
      sms: provider,
      env: { SMS_TRANSPORT: 'webhook', SMS_WEBHOOK_URL: 'https://sms.example/hook', SMS_WEBHOOK_SECRET: 'x'.repeat(32) },
    });
    try {
      const refused = await enrollSms(service, '+14155550123');
      assert.equal(refused.status, 400, JSON.stringify(refused.body));
      assert.match(refused.body.message, /not sent by SMS to this country/);
      assert.equal(provider.sent.length, 0);
    } finally {
      await service.close();
    }
  });
});

describe('SMS pumping: number blocks and the cost cap', () => {
  let service: TestService;
  const provider = providerOf();
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let hookSecret: string;
  before(async () => {
    service = await startTestService({
      testMode: true,
      sms: provider,
      env: {
        SERVICE_IDP_SMS_PER_PREFIX: '3/hour',
        // Two US SMS (0.05 each) or five French ones (0.02) fit in 0.10 a day.
        SERVICE_IDP_SMS_DAILY_COST_CAP: '0.10',
        SERVICE_IDP_SMS_PRICES: 'default=0.05,FR=0.02',
      },
      webhookTimings: { pollIntervalMs: 25, requestTimeoutMs: 500 },
    });
    receiver = await startReceiver(() => 204);
    hookSecret = (await service.ctx.webhooks.create({ url: receiver.url, events: ['send_budget.exhausted'] }, 'test')).secret;
  });
  after(async () => {
    await service.close();
    await receiver.close();
  });

  it('a per-prefix flood is bounded: the fourth number of one block is refused, a number of another block is not', async () => {
    // One block: +33 6123 …, numbers walked one by one as a pumping run does.
    for (let n = 0; n < 3; n++) {
      const answer = await enrollSms(service, `+3361234560${n}`);
      assert.equal(answer.status, 200, `number ${n}: ${JSON.stringify(answer.body)}`);
    }
    const refused = await enrollSms(service, '+33612345609');
    assert.equal(refused.status, 429, JSON.stringify(refused.body));
    assert.equal(refused.body.code, 'ERR_RATE_LIMITED');
    assert.match(refused.body.message, /try again later/i);
    assert.equal(provider.sent.filter((message) => message.to === '+33612345609').length, 0);
    assert.equal(await metric(service, 'service_idp_codes_refused_total{reason="rate_limited",limit="sms_prefix"}'), 1);
    const elsewhere = await enrollSms(service, '+33698765432');
    assert.equal(elsewhere.status, 200, 'another block of the same country is not held back');
  });

  it('the cost cap spent refuses further SMS as a spent budget does, and emits the event, the webhook and the metric', async () => {
    // Spent so far: four French SMS (0.08). One US SMS (0.05) would pass 0.10: refused.
    const refused = await enrollSms(service, '+14155550142');
    assert.equal(refused.status, 429, JSON.stringify(refused.body));
    assert.equal(refused.body.code, 'ERR_RATE_LIMITED');
    assert.match(refused.body.message, /try again later/i);
    assert.ok(refused.body.retryAfter > 0);
    assert.equal(provider.sent.filter((message) => message.to === '+14155550142').length, 0);
    const again = await enrollSms(service, '+33655555555');
    assert.equal(again.status, 429, 'a cheaper SMS is refused as well once the cap is passed');
    const { events } = await service.ctx.events.list({ type: 'send_budget.exhausted', limit: 10 });
    assert.deepEqual(
      events.map((event) => [event.detail?.channel, event.detail?.scope, event.detail?.max, event.detail?.window_seconds]),
      [['sms', 'cost', 0.1, 86_400]],
      'one event per window',
    );
    assert.equal(await metric(service, 'service_idp_codes_refused_total{reason="rate_limited",limit="sms_cost"}'), 2);
    await waitFor('the alarm delivered', () => receiver.received.length === 1);
    const [delivered] = receiver.verifyAll(hookSecret) as { type: string; data: { detail: { scope: string } } }[];
    assert.equal(`${delivered?.type} ${delivered?.data.detail.scope}`, 'send_budget.exhausted cost');
  });
});
