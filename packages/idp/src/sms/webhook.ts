import { createHmac } from 'node:crypto';
import { randomToken, safeEqual } from '../crypto/secrets.js';
import { checkRetryOptions, deliverWithRetry } from './http-retry.js';
import { assertSendable, type SmsTransport } from './transport.js';

/** Signature header on every webhook request: `t=<unix seconds>,v1=<hex HMAC-SHA256>`. */
export const WEBHOOK_SIGNATURE_HEADER = 'x-service-signature';
/** Receivers refuse signatures whose time is further than this from their clock (Stripe's default). */
export const WEBHOOK_TOLERANCE_SECONDS = 300;
/** Shortest webhook secret accepted: a short one could be guessed from a captured signature. */
export const WEBHOOK_SECRET_MIN_LENGTH = 16;

export interface WebhookTransportOptions {
  /** http(s) URL that receives a POST per message. */
  url: string;
  /** Shared HMAC key; the receiver checks each request with {@link verifyWebhookSignature}. */
  secret: string;
  fetch?: typeof fetch;
  /** Further attempts after a 5xx, 429, network error or time-out. Default 2. */
  retries?: number;
  /** Wait before the first retry, doubled before each next one. Default 200 ms. */
  retryDelayMs?: number;
  /** Limit on each attempt. Default 5000 ms. */
  timeoutMs?: number;
  /** Clock for `sentAt` and the signature time; default Date.now. */
  now?: () => number;
}

/** The JSON body of a webhook request. `id` stays the same across retries, so receivers can drop duplicates. */
export interface WebhookPayload {
  to: string;
  body: string;
  id: string;
  sentAt: string;
}

/** `t=<t>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`. */
export function signWebhook(rawBody: string | Buffer, secret: string, unixSeconds: number): string {
  return `t=${unixSeconds},v1=${hmacHex(secret, unixSeconds, rawBody)}`;
}

function hmacHex(secret: string, t: number | string, rawBody: string | Buffer): string {
  return createHmac('sha256', secret).update(`${t}.`).update(rawBody).digest('hex');
}

/**
 * Hands each SMS to your own HTTP endpoint: a JSON POST signed Stripe-style with a shared
 * secret. 2xx means delivered; 5xx, 429, network errors and time-outs are retried.
 *
 * @example
 * const sms = createWebhookTransport({ url: 'https://sms-gateway.internal/send', secret: process.env.SMS_WEBHOOK_SECRET! });
 * await sms.send({ to: '+14155550100', body: 'Your sign-in code is 123456' });
 */
export function createWebhookTransport(options: WebhookTransportOptions): SmsTransport {
  const { url, secret, fetch: fetchImpl = fetch, retries = 2, retryDelayMs = 200, timeoutMs = 5000, now = Date.now } = options;
  const target = new URL(url);
  if (target.protocol !== 'https:' && target.protocol !== 'http:') throw new TypeError('The SMS webhook URL must be http or https.');
  if (typeof secret !== 'string' || secret.length < WEBHOOK_SECRET_MIN_LENGTH)
    throw new TypeError(`The SMS webhook secret must have at least ${WEBHOOK_SECRET_MIN_LENGTH} characters.`);
  checkRetryOptions({ retries, retryDelayMs, timeoutMs });

  return {
    async send(message) {
      assertSendable(message);
      const payload: WebhookPayload = {
        to: message.to,
        body: message.body,
        id: randomToken('sms_', 16),
        sentAt: new Date(now()).toISOString(),
      };
      const rawBody = JSON.stringify(payload);
      await deliverWithRetry({
        provider: 'SMS webhook',
        retries,
        retryDelayMs,
        timeoutMs,
        accepted: (status) => status >= 200 && status < 300,
        request: (signal) =>
          fetchImpl(target.href, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'user-agent': 'service-idp',
              [WEBHOOK_SIGNATURE_HEADER]: signWebhook(rawBody, secret, Math.floor(now() / 1000)),
            },
            body: rawBody,
            redirect: 'manual',
            signal,
          }),
      });
    },
    // The origin only: a path or query may carry a token.
    describe: () => `SMS webhook ${target.origin}`,
  };
}

export interface VerifyWebhookOptions {
  /** Largest accepted distance between `t` and the receiver's clock. Default 300 s. */
  toleranceSeconds?: number;
  /** The receiver's clock; default Date.now(). */
  nowMs?: number;
}

/**
 * For receivers (and tests): whether `header` is a valid signature of `rawBody` (the exact
 * bytes received, before any JSON parsing) under `secret`, made within `toleranceSeconds` of
 * now. Any `v1` may match (several are allowed while a secret is being rotated); each is
 * compared in constant time. Keep the `id`s seen within the tolerance to refuse replays.
 *
 * @example
 * if (!verifyWebhookSignature(req.headers['x-service-signature'], rawBody, secret)) return res.writeHead(401).end();
 */
export function verifyWebhookSignature(
  header: string | undefined | null,
  rawBody: string | Buffer,
  secret: string,
  { toleranceSeconds = WEBHOOK_TOLERANCE_SECONDS, nowMs = Date.now() }: VerifyWebhookOptions = {},
): boolean {
  if (typeof header !== 'string' || !secret) return false;
  let t: string | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const at = part.indexOf('=');
    if (at < 0) return false;
    const key = part.slice(0, at).trim();
    const value = part.slice(at + 1).trim();
    if (key === 't') {
      if (t !== undefined) return false;
      t = value;
    } else if (key === 'v1') signatures.push(value);
  }
  if (t === undefined || !/^\d{1,12}$/.test(t) || signatures.length === 0) return false;
  if (Math.abs(nowMs / 1000 - Number(t)) > toleranceSeconds) return false;
  const expected = hmacHex(secret, t, rawBody);
  let valid = false;
  for (const signature of signatures) if (safeEqual(signature, expected)) valid = true;
  return valid;
}
