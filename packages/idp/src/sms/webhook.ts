import { Webhook } from 'standardwebhooks';
import { randomToken } from '../crypto/secrets.js';
import { checkRetryOptions, deliverWithRetry } from './http-retry.js';
import { assertSendable, type SmsTransport } from './transport.js';

/** Shortest webhook key accepted, in bytes (a `whsec_` secret) or characters (any other): a short one could be guessed from a captured signature. */
export const WEBHOOK_SECRET_MIN_LENGTH = 16;

const WHSEC = /^whsec_([A-Za-z0-9+/]+={0,2})$/;

/**
 * The signing key of an SMS_WEBHOOK_SECRET: a Standard Webhooks secret (`whsec_` and the
 * base64 of the key, as the event webhooks hand out) is that key; any other value (a secret
 * from before the SMS webhook used Standard Webhooks) is its UTF-8 bytes, the very key its HMAC
 * had, so a receiver verifies with {@link standardWebhookSecret} of it. Undefined when too
 * short, or when it starts with `whsec_` but is not base64.
 */
export function smsWebhookKey(secret: string): Uint8Array | undefined {
  if (secret.startsWith('whsec_')) {
    const base64 = WHSEC.exec(secret)?.[1];
    if (!base64 || base64.length % 4 !== 0) return undefined;
    const key = Buffer.from(base64, 'base64');
    return key.length >= WEBHOOK_SECRET_MIN_LENGTH ? new Uint8Array(key) : undefined;
  }
  return secret.length >= WEBHOOK_SECRET_MIN_LENGTH ? new Uint8Array(Buffer.from(secret, 'utf8')) : undefined;
}

/**
 * The `whsec_…` form of an SMS_WEBHOOK_SECRET, for the receiver's `new Webhook(…)`: the
 * secret itself when it has that form, `whsec_` and the base64 of its UTF-8 bytes otherwise.
 */
export function standardWebhookSecret(secret: string): string {
  const key = smsWebhookKey(secret);
  if (!key) throw new TypeError(`The SMS webhook secret must be a whsec_ secret or have at least ${WEBHOOK_SECRET_MIN_LENGTH} characters.`);
  return `whsec_${Buffer.from(key).toString('base64')}`;
}

export interface WebhookTransportOptions {
  /** http(s) URL that receives a POST per message. */
  url: string;
  /** `whsec_…`, or a secret of 16 characters or more ({@link smsWebhookKey}); the receiver verifies with the `standardwebhooks` library. */
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

/** The JSON body of a webhook request. `id` (also `webhook-id`) stays the same across retries, so receivers can drop duplicates. */
export interface WebhookPayload {
  to: string;
  body: string;
  id: string;
  sentAt: string;
}

/**
 * Hands each SMS to your own HTTP endpoint: a JSON POST signed as a Standard Webhooks message
 * (`webhook-id`, `webhook-timestamp`, `webhook-signature`), the scheme of the event webhooks,
 * so a receiver verifies it with the same library. 2xx means delivered; 5xx, 429, network
 * errors and time-outs are retried, each attempt signed afresh under the same `webhook-id`.
 *
 * @example
 * const sms = createWebhookTransport({ url: 'https://sms-gateway.internal/send', secret: process.env.SMS_WEBHOOK_SECRET! });
 * await sms.send({ to: '+14155550100', body: 'Your sign-in code is 123456' });
 */
export function createWebhookTransport(options: WebhookTransportOptions): SmsTransport {
  const { url, secret, fetch: fetchImpl = fetch, retries = 2, retryDelayMs = 200, timeoutMs = 5000, now = Date.now } = options;
  const target = new URL(url);
  if (target.protocol !== 'https:' && target.protocol !== 'http:') throw new TypeError('The SMS webhook URL must be http or https.');
  const key = typeof secret === 'string' ? smsWebhookKey(secret) : undefined;
  if (!key)
    throw new TypeError(
      `The SMS webhook secret must be a whsec_ secret (base64 of ${WEBHOOK_SECRET_MIN_LENGTH} bytes or more) or have at least ${WEBHOOK_SECRET_MIN_LENGTH} characters.`,
    );
  const signer = new Webhook(key, { format: 'raw' });
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
        request: (signal) => {
          const at = new Date(now());
          return fetchImpl(target.href, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              'user-agent': 'service-idp',
              'webhook-id': payload.id,
              'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
              'webhook-signature': signer.sign(payload.id, at, rawBody),
            },
            body: rawBody,
            redirect: 'manual',
            signal,
          });
        },
      });
    },
    // The origin only: a path or query may carry a token.
    describe: () => `SMS webhook ${target.origin}`,
  };
}
