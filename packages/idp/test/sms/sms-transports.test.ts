/**
 * SMS transports against a real HTTP receiver on 127.0.0.1: what goes on the wire (signed
 * webhook JSON, Twilio form with Basic auth), which failures are retried, time-outs, and that
 * no error message ever carries the SMS text (it holds a one-time code).
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { isE164, normalizePhone } from 'service-protocol';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { createOutboxTransport } from '../../src/sms/outbox.js';
import { SmsDeliveryError } from '../../src/sms/transport.js';
import { createTwilioTransport } from '../../src/sms/twilio.js';
import { createWebhookTransport, smsWebhookKey, standardWebhookSecret } from '../../src/sms/webhook.js';

const CODE = '493817';
const MESSAGE = { to: '+14155550100', body: `Your Example sign-in code is ${CODE}` };
// A Standard Webhooks secret, as `webhooks create` hands out for the event webhooks.
const SECRET = `whsec_${Buffer.from('sms-webhook-key-for-tests-0123').toString('base64')}`;
const FAST = { retryDelayMs: 5, timeoutMs: 2000 };

interface Recorded {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}
type Responder = (request: Recorded, index: number, res: ServerResponse) => void;

/** A loopback HTTP receiver that records every request and answers through `respond`. */
class Receiver {
  server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
        at: Date.now(),
      };
      this.requests.push(recorded);
      this.respond(recorded, this.requests.length - 1, res);
    });
  });
  requests: Recorded[] = [];
  respond: Responder = (_r, _i, res) => res.writeHead(200).end();
  url = '';

  async start() {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  reset(respond: Responder) {
    this.requests = [];
    this.respond = respond;
  }
  async stop() {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

const answer =
  (...statuses: number[]): Responder =>
  (_r, index, res) => {
    const status = statuses[Math.min(index, statuses.length - 1)]!;
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ echo: MESSAGE.body }));
  };

/** Runs `send`, expects an SmsDeliveryError, and checks the SMS text is nowhere in its message. */
async function deliveryError(send: Promise<void>): Promise<SmsDeliveryError> {
  const error = await send.then(
    () => assert.fail('expected the send to fail'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof SmsDeliveryError, String(error));
  assert.ok(!error.message.includes(CODE), `the code leaked: ${error.message}`);
  assert.ok(!error.message.includes(MESSAGE.body));
  assert.ok(!error.message.includes(SECRET));
  return error;
}

describe('E.164 phone numbers', () => {
  it('accepts E.164 numbers only', () => {
    for (const good of ['+14155550100', '+447911123456', '+33612345678', '+1234567', '+123456789012345']) assert.ok(isE164(good), good);
    for (const bad of [
      '14155550100',
      '+04155550100',
      '+123456',
      '+1234567890123456',
      '+1 415 555 0100',
      '+1-415',
      '',
      '+',
      '++14155550100',
      '+1415555010a',
    ])
      assert.ok(!isE164(bad), bad);
  });

  it('normalises what people type, keeping the leading plus', () => {
    assert.equal(normalizePhone('+1 (415) 555-0100'), '+14155550100');
    assert.equal(normalizePhone(' +44 7911.123.456 '), '+447911123456');
    assert.equal(normalizePhone('+33\t6 12 34 56 78'), '+33612345678');
    assert.equal(normalizePhone('+14155550100'), '+14155550100');
  });

  it('returns undefined when the result is not E.164', () => {
    for (const bad of [
      '(415) 555-0100',
      '004155550100',
      '+0 415 555 0100',
      '1+4155550100',
      '+1 415 555 0100 ext 2',
      '+1/415/5550100',
      '',
      '+',
      '+12 345',
    ])
      assert.equal(normalizePhone(bad), undefined, bad);
  });
});

describe('SMS development outbox', () => {
  it('stores the message with the time, and describes itself', async () => {
    const rows: { to: string; body: string; createdAt: number }[] = [];
    const outbox = createOutboxTransport({ insert: async (m) => void rows.push(m) }, () => 1_700_000_000_000);
    await outbox.send(MESSAGE);
    assert.deepEqual(rows, [{ ...MESSAGE, createdAt: 1_700_000_000_000 }]);
    assert.match(outbox.describe(), /outbox/);
  });

  it('refuses a recipient that is not E.164 and wraps store failures', async () => {
    const outbox = createOutboxTransport(
      {
        insert: async () => {
          throw new Error('disk full');
        },
      },
      Date.now,
    );
    const notE164 = await deliveryError(outbox.send({ ...MESSAGE, to: '4155550100' }));
    assert.equal(notE164.retryable, false);
    const failed = await deliveryError(outbox.send(MESSAGE));
    assert.equal(failed.retryable, true);
    assert.equal((failed.cause as Error).message, 'disk full');
  });
});

/** The request's headers as the receiver hands them to `Webhook.verify`. */
function headersOf(headers: IncomingHttpHeaders): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

describe('SMS transports over HTTP', () => {
  const receiver = new Receiver();
  before(() => receiver.start());
  after(() => receiver.stop());
  beforeEach(() => receiver.reset(answer(200)));

  describe('webhook', () => {
    const webhook = (options: Partial<Parameters<typeof createWebhookTransport>[0]> = {}) =>
      createWebhookTransport({ url: `${receiver.url}/hooks/sms?token=abc`, secret: SECRET, ...FAST, ...options });

    it('POSTs signed JSON with the recipient, text, an id and the time', async () => {
      const now = Date.now();
      await webhook({ now: () => now }).send(MESSAGE);
      assert.equal(receiver.requests.length, 1);
      const [request] = receiver.requests;
      assert.equal(request!.method, 'POST');
      assert.equal(request!.url, '/hooks/sms?token=abc');
      assert.equal(request!.headers['content-type'], 'application/json');
      assert.equal(request!.headers['user-agent'], 'service-idp');
      const payload = JSON.parse(request!.body);
      assert.deepEqual(Object.keys(payload).sort(), ['body', 'id', 'sentAt', 'to']);
      assert.equal(payload.to, MESSAGE.to);
      assert.equal(payload.body, MESSAGE.body);
      assert.match(payload.id, /^sms_[A-Za-z0-9_-]{20,}$/);
      assert.equal(payload.sentAt, new Date(now).toISOString());

      // Standard Webhooks: the receiver verifies with the same library as for the event webhooks.
      assert.equal(request!.headers['webhook-id'], payload.id);
      assert.equal(request!.headers['webhook-timestamp'], String(Math.floor(now / 1000)));
      assert.match(request!.headers['webhook-signature'] as string, /^v1,[A-Za-z0-9+/]+={0,2}$/);
      assert.equal(request!.headers['x-service-signature'], undefined, 'one scheme: the old header is gone');
      assert.deepEqual(new Webhook(SECRET).verify(request!.body, headersOf(request!.headers)), payload);
    });

    it('signatures fail on a changed body, another secret, a stale or future time, another id, or a missing header', async () => {
      await webhook().send(MESSAGE);
      const { body, headers } = receiver.requests[0]!;
      const receiverSide = new Webhook(SECRET);
      const signed = headersOf(headers);
      const refused = (payload: string, h: Record<string, string>, webhook = receiverSide) =>
        assert.throws(() => webhook.verify(payload, h), WebhookVerificationError);
      refused(body.replace(CODE, '000000'), signed);
      refused(`${body} `, signed);
      refused(body, signed, new Webhook(standardWebhookSecret('another-secret-of-16+')));
      refused(body, { ...signed, 'webhook-id': 'sms_other' });
      const t = Number(signed['webhook-timestamp']);
      refused(body, { ...signed, 'webhook-timestamp': String(t - 301) });
      refused(body, { ...signed, 'webhook-timestamp': String(t + 301) });
      for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
        const { [name]: _dropped, ...rest } = signed;
        refused(body, rest);
      }
    });

    it('keeps a secret from before Standard Webhooks: its UTF-8 bytes are the key, verifiable as whsec_ and their base64', async () => {
      const legacy = 'an-old-shared-secret-é';
      await webhook({ secret: legacy }).send(MESSAGE);
      const { body, headers } = receiver.requests[0]!;
      const whsec = standardWebhookSecret(legacy);
      assert.equal(whsec, `whsec_${Buffer.from(legacy, 'utf8').toString('base64')}`);
      assert.ok(new Webhook(whsec).verify(body, headersOf(headers)));
      assert.equal(standardWebhookSecret(SECRET), SECRET, 'a whsec_ secret is used as it is');
      // Refused: too short, or whsec_ that is not base64 of 16 bytes.
      for (const bad of ['short', 'whsec_test_0123456789abcdef0123456789', `whsec_${Buffer.from('15-bytes-only!!').toString('base64')}`]) {
        assert.equal(smsWebhookKey(bad), undefined, bad);
        assert.throws(() => webhook({ secret: bad }), TypeError, bad);
      }
    });

    it('retries a 503 and succeeds, with the same id and a fresh signature', async () => {
      receiver.reset(answer(503, 200));
      await webhook().send(MESSAGE);
      assert.equal(receiver.requests.length, 2);
      const [first, second] = receiver.requests.map((r) => JSON.parse(r.body));
      assert.equal(first.id, second.id, 'receivers can drop duplicates by id');
      const [a, b] = receiver.requests.map((r) => headersOf(r.headers));
      assert.equal(a?.['webhook-id'], b?.['webhook-id']);
      for (const r of receiver.requests) assert.ok(new Webhook(SECRET).verify(r.body, headersOf(r.headers)));
    });

    it('retries a 429 and network errors', async () => {
      receiver.reset(answer(429, 429, 204));
      await webhook().send(MESSAGE);
      assert.equal(receiver.requests.length, 3);

      receiver.reset((_r, index, res) => (index === 0 ? res.socket?.destroy() : res.writeHead(200).end()));
      await webhook().send(MESSAGE);
      assert.equal(receiver.requests.length, 2);
    });

    it('does not retry a 400, and the error is not retryable', async () => {
      receiver.reset(answer(400));
      const error = await deliveryError(webhook().send(MESSAGE));
      assert.equal(receiver.requests.length, 1);
      assert.equal(error.retryable, false);
      assert.equal(error.status, 400);
      assert.match(error.message, /SMS webhook answered HTTP 400/);
    });

    it('does not follow redirects', async () => {
      receiver.reset((_r, _i, res) => res.writeHead(307, { location: '/elsewhere' }).end());
      const error = await deliveryError(webhook().send(MESSAGE));
      assert.equal(receiver.requests.length, 1);
      assert.equal(error.status, 307);
    });

    it('gives up after `retries` retries with exponential back-off, and the error is retryable', async () => {
      receiver.reset(answer(500));
      const error = await deliveryError(webhook({ retries: 3, retryDelayMs: 20 }).send(MESSAGE));
      assert.equal(receiver.requests.length, 4);
      assert.equal(error.retryable, true);
      assert.equal(error.status, 500);
      assert.match(error.message, /HTTP 500.*4 attempts/);
      const gaps = receiver.requests.slice(1).map((r, i) => r.at - receiver.requests[i]!.at);
      assert.ok(gaps[0]! >= 15 && gaps[1]! >= 35 && gaps[2]! >= 75, `gaps ${gaps}`);
    });

    it('with retries: 0, tries once', async () => {
      receiver.reset(answer(503));
      await deliveryError(webhook({ retries: 0 }).send(MESSAGE));
      assert.equal(receiver.requests.length, 1);
    });

    it('times out on a receiver that never answers, retries, then fails as retryable', async () => {
      receiver.reset(() => {}); // never answers
      const started = Date.now();
      const error = await deliveryError(webhook({ retries: 1, timeoutMs: 100 }).send(MESSAGE));
      assert.equal(receiver.requests.length, 2);
      assert.equal(error.retryable, true);
      assert.match(error.message, /did not answer within 100 ms.*2 attempts/);
      assert.ok(Date.now() - started < 1500);
    });

    it('reports an unreachable receiver by its error code', async () => {
      const closed = new Receiver();
      await closed.start();
      const url = closed.url;
      await closed.stop();
      const error = await deliveryError(createWebhookTransport({ url, secret: SECRET, retries: 1, retryDelayMs: 1 }).send(MESSAGE));
      assert.equal(error.retryable, true);
      assert.match(error.message, /could not be reached \(ECONNREFUSED\)/);
    });

    it('refuses bad configuration at creation and a non-E.164 recipient before sending', async () => {
      assert.throws(() => createWebhookTransport({ url: 'not a url', secret: SECRET }));
      assert.throws(() => createWebhookTransport({ url: 'ftp://example.com', secret: SECRET }), TypeError);
      assert.throws(() => createWebhookTransport({ url: receiver.url, secret: 'short' }), TypeError);
      assert.throws(() => createWebhookTransport({ url: receiver.url, secret: SECRET, retries: -1 }), RangeError);
      assert.throws(() => createWebhookTransport({ url: receiver.url, secret: SECRET, timeoutMs: 0 }), RangeError);
      const error = await deliveryError(webhook().send({ ...MESSAGE, to: '4155550100' }));
      assert.equal(error.retryable, false);
      assert.equal(receiver.requests.length, 0);
    });

    it('describes itself by origin only: no path, query or secret', () => {
      const described = webhook().describe();
      assert.equal(described, `SMS webhook ${receiver.url}`);
      assert.ok(!described.includes('token') && !described.includes(SECRET));
    });
  });

  describe('Twilio', () => {
    const twilio = (options: Partial<Parameters<typeof createTwilioTransport>[0]> = {}) =>
      createTwilioTransport({
        accountSid: 'AC0123456789abcdef',
        authToken: 'tok_secret_987',
        from: '+15005550006',
        baseUrl: receiver.url,
        ...FAST,
        ...options,
      });
    const twilioError =
      (status: number, code: number, message: string): Responder =>
      (_r, _i, res) =>
        res
          .writeHead(status, { 'content-type': 'application/json' })
          .end(JSON.stringify({ code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status }));

    it('POSTs the form to the Messages resource with Basic auth', async () => {
      receiver.reset((_r, _i, res) => res.writeHead(201, { 'content-type': 'application/json' }).end('{"sid":"SM1","status":"queued"}'));
      await twilio().send(MESSAGE);
      assert.equal(receiver.requests.length, 1);
      const [request] = receiver.requests;
      assert.equal(request!.method, 'POST');
      assert.equal(request!.url, '/2010-04-01/Accounts/AC0123456789abcdef/Messages.json');
      assert.equal(request!.headers['content-type'], 'application/x-www-form-urlencoded');
      assert.equal(request!.headers['user-agent'], 'service-idp');
      assert.equal(request!.headers.authorization, `Basic ${Buffer.from('AC0123456789abcdef:tok_secret_987').toString('base64')}`);
      const form = new URLSearchParams(request!.body);
      assert.deepEqual([...form.keys()].sort(), ['Body', 'From', 'To']);
      assert.equal(form.get('To'), MESSAGE.to);
      assert.equal(form.get('From'), '+15005550006');
      assert.equal(form.get('Body'), MESSAGE.body);
    });

    it('accepts 200 as well, and keeps a base URL path', async () => {
      await twilio({ baseUrl: `${receiver.url}/proxy/` }).send(MESSAGE);
      await twilio({ baseUrl: `${receiver.url}/proxy` }).send(MESSAGE);
      assert.deepEqual(
        receiver.requests.map((r) => r.url),
        ['/proxy/2010-04-01/Accounts/AC0123456789abcdef/Messages.json', '/proxy/2010-04-01/Accounts/AC0123456789abcdef/Messages.json'],
      );
    });

    it('retries a 503 then succeeds', async () => {
      receiver.reset(answer(503, 503, 201));
      await twilio().send(MESSAGE);
      assert.equal(receiver.requests.length, 3);
    });

    it("does not retry a 400, and names Twilio's code and message without the text or the numbers", async () => {
      receiver.reset(twilioError(400, 21211, `The 'To' number ${MESSAGE.to} is not valid. Body was: ${MESSAGE.body}`));
      const error = await deliveryError(twilio().send(MESSAGE));
      assert.equal(receiver.requests.length, 1);
      assert.equal(error.retryable, false);
      assert.equal(error.status, 400);
      assert.match(error.message, /^Twilio answered HTTP 400 \(code 21211: The 'To' number/);
      assert.ok(!error.message.includes('4155550100'), error.message);
    });

    it('names the auth failure (401) without the token', async () => {
      receiver.reset(twilioError(401, 20003, 'Authenticate'));
      const error = await deliveryError(twilio().send(MESSAGE));
      assert.equal(error.message, 'Twilio answered HTTP 401 (code 20003: Authenticate)');
      assert.ok(!error.message.includes('tok_secret_987'));
    });

    it('gives up after the retries on 429 with a retryable error', async () => {
      receiver.reset(twilioError(429, 20429, 'Too Many Requests'));
      const error = await deliveryError(twilio().send(MESSAGE));
      assert.equal(receiver.requests.length, 3);
      assert.equal(error.retryable, true);
      assert.match(error.message, /HTTP 429 \(code 20429: Too Many Requests\); gave up after 3 attempts/);
    });

    it('treats another 2xx as a refusal, and survives a non-JSON error body', async () => {
      receiver.reset(answer(202));
      assert.equal((await deliveryError(twilio().send(MESSAGE))).status, 202);
      receiver.reset((_r, _i, res) => res.writeHead(502, { 'content-type': 'application/json' }).end(`<html>${MESSAGE.body}`));
      const error = await deliveryError(twilio({ retries: 0 }).send(MESSAGE));
      assert.equal(error.message, 'Twilio answered HTTP 502; gave up after 1 attempt');
    });

    it('times out on an API that never answers', async () => {
      receiver.reset(() => {});
      const error = await deliveryError(twilio({ retries: 1, timeoutMs: 100 }).send(MESSAGE));
      assert.equal(receiver.requests.length, 2);
      assert.equal(error.retryable, true);
      assert.match(error.message, /Twilio did not answer within 100 ms/);
    });

    it('times out on an error body that never ends', async () => {
      receiver.reset((_r, _i, res) => {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.write('{"code": 21211, ');
      });
      const error = await deliveryError(twilio({ timeoutMs: 100 }).send(MESSAGE));
      assert.equal(error.message, 'Twilio answered HTTP 400');
    });

    it('describes itself without the account SID or token', () => {
      const described = twilio().describe();
      assert.equal(described, `Twilio API ${receiver.url}, from +15005550006`);
      assert.ok(!described.includes('AC0123') && !described.includes('tok_'));
    });
  });
});
