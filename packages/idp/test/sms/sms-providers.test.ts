/**
 * SMS through real HTTP providers run locally: the signed webhook and the Twilio-compatible
 * API, configured as an operator would (environment variables). The receivers check what they
 * got; a failing provider gives the user a clear status, leaves no usable code, and no code
 * reaches a response or a log line.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { standardWebhookSecret } from '../../src/sms/webhook.js';
import { startTestService, type TestService, uniqueEmail, verifiedRegistration } from '../support/helpers.js';

interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A local provider answering each request with the next status of `statuses` (the last one repeats). */
async function provider(statuses: number[]): Promise<{ url: string; received: Received[]; server: Server }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body });
      const status = statuses[Math.min(received.length - 1, statuses.length - 1)] as number;
      res
        .writeHead(status, { 'content-type': 'application/json' })
        .end(status < 300 ? '{"sid":"SM1"}' : '{"code":30003,"message":"Unreachable"}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received, server };
}

const SECRET = 'webhook-secret-for-tests';
/**
 * A paying transport sends SMS only to the countries the operator lists (otp/send-rules.ts:
 * none by default), so each provider here is configured with the test number's.
 */
const COUNTRIES = { SERVICE_IDP_SMS_COUNTRIES: 'US' };

/** A verified registration that chooses SMS as its second factor, which sends the first code. */
const enrollBySms = async (service: TestService, email: string) =>
  service.post('/v1/devices', {
    userid: email,
    deviceToken: await verifiedRegistration(service, email),
    mfaMethod: 'sms',
    phoneNumber: PHONE,
  });
const PHONE = '+14155550188';

describe('SMS webhook provider', () => {
  let hook: Awaited<ReturnType<typeof provider>>;
  let service: TestService;
  before(async () => {
    hook = await provider([503, 200]); // the first attempt fails: the transport retries
    service = await startTestService({
      testMode: true,
      env: { SMS_TRANSPORT: 'webhook', SMS_WEBHOOK_URL: `${hook.url}/sms`, SMS_WEBHOOK_SECRET: SECRET, ...COUNTRIES },
    });
  });
  after(async () => {
    await service.close();
    hook.server.close();
  });

  it('delivers a signed JSON message after a retry, and the received code confirms the enrollment', async () => {
    const email = uniqueEmail('hook');
    const r = await enrollBySms(service, email);
    assert.equal(r.body.status, 'FINALIZE_REGISTRATION_NEEDED');
    assert.equal(hook.received.length, 2, 'one failed attempt, one retry');
    const delivered = hook.received[1] as Received;
    assert.equal(delivered.path, '/sms');
    // Signed as Standard Webhooks; SECRET is a plain one from before, so the receiver uses its whsec_ form.
    const headers = Object.fromEntries(Object.entries(delivered.headers).filter((e): e is [string, string] => typeof e[1] === 'string'));
    assert.ok(new Webhook(standardWebhookSecret(SECRET)).verify(delivered.body, headers), 'signed with the shared secret');
    assert.throws(
      () => new Webhook(standardWebhookSecret('another-secret-xxxx')).verify(delivered.body, headers),
      WebhookVerificationError,
    );
    const message = JSON.parse(delivered.body);
    assert.equal(message.to, PHONE);
    assert.equal(message.id, JSON.parse((hook.received[0] as Received).body).id, 'the same id on retry, so receivers can drop duplicates');
    const otp = message.body.match(/\b(\d{6})\b/)[1];
    assert.equal((await service.post('/v1/mfa/verify', { userid: email, sessionId: r.body.sessionId, otp })).body.status, 'SUCCESS');
  });
});

describe('Twilio-compatible provider', () => {
  let twilio: Awaited<ReturnType<typeof provider>>;
  let service: TestService;
  before(async () => {
    twilio = await provider([201]);
    service = await startTestService({
      testMode: true,
      env: {
        SMS_TRANSPORT: 'twilio',
        ...COUNTRIES,
        TWILIO_ACCOUNT_SID: 'AC123',
        TWILIO_AUTH_TOKEN: 'token-xyz',
        TWILIO_FROM: '+15005550006',
        TWILIO_BASE_URL: twilio.url,
      },
    });
  });
  after(async () => {
    await service.close();
    twilio.server.close();
  });

  it('posts To, From and Body with Basic auth to the Messages resource', async () => {
    const email = uniqueEmail('twilio');
    const r = await enrollBySms(service, email);
    assert.equal(r.body.status, 'FINALIZE_REGISTRATION_NEEDED');
    const request = twilio.received[0] as Received;
    assert.equal(request.path, '/2010-04-01/Accounts/AC123/Messages.json');
    assert.equal(request.headers.authorization, `Basic ${Buffer.from('AC123:token-xyz').toString('base64')}`);
    const form = new URLSearchParams(request.body);
    assert.equal(form.get('To'), PHONE);
    assert.equal(form.get('From'), '+15005550006');
    const otp = form.get('Body')?.match(/\b(\d{6})\b/)?.[1] as string;
    assert.equal((await service.post('/v1/mfa/verify', { userid: email, sessionId: r.body.sessionId, otp })).body.status, 'SUCCESS');
  });
});

describe('a failing SMS provider', () => {
  let down: Awaited<ReturnType<typeof provider>>;
  let service: TestService;
  const log = new PassThrough();
  let logText = '';
  log.on('data', (c) => {
    logText += c;
  });
  before(async () => {
    down = await provider([500]);
    service = await startTestService({
      testMode: true,
      logStream: log,
      env: { SMS_TRANSPORT: 'webhook', SMS_WEBHOOK_URL: `${down.url}/sms`, SMS_WEBHOOK_SECRET: SECRET, ...COUNTRIES },
    });
  });
  after(async () => {
    await service.close();
    down.server.close();
  });

  it('answers ERR_DELIVERY_FAILED (SERVICE_ERROR in the browser), leaves no usable code, and logs no code', async () => {
    const email = uniqueEmail('down');
    const r = await enrollBySms(service, email);
    assert.equal(r.status, 503);
    assert.equal(r.body.code, 'ERR_DELIVERY_FAILED');
    assert.equal(down.received.length, 3, 'the first attempt and two retries');
    const sent = down.received.map((q) => JSON.parse(q.body).body.match(/\b(\d{6})\b/)[1] as string);
    const code = sent[0] as string;
    assert.ok(sent.every((c) => c === code));
    assert.doesNotMatch(JSON.stringify(r.body), new RegExp(code));
    assert.ok(logText.includes('ERR_DELIVERY_FAILED') || logText.includes('could not be sent'), 'the failure is logged');
    assert.doesNotMatch(logText, new RegExp(code), 'the undelivered code is in no log line');
    const sessions = await service.ctx.db.selectFrom('mfa_sessions').select(['otp_hash']).execute();
    assert.ok(
      sessions.every((s) => s.otp_hash === null),
      'the undelivered code cannot be used',
    );
  });
});
