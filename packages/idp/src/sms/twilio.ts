import { checkRetryOptions, deliverWithRetry } from './http-retry.js';
import { assertSendable, type SmsTransport } from './transport.js';

export interface TwilioTransportOptions {
  accountSid: string;
  authToken: string;
  /** The sending number (E.164) or sender id. */
  from: string;
  /** Another Twilio-compatible API (or a local test receiver). Default https://api.twilio.com. */
  baseUrl?: string;
  fetch?: typeof fetch;
  /** Further attempts after a 5xx, 429, network error or time-out. Default 2. */
  retries?: number;
  /** Wait before the first retry, doubled before each next one. Default 200 ms. */
  retryDelayMs?: number;
  /** Limit on each attempt. Default 5000 ms. */
  timeoutMs?: number;
}

/** Longest provider text kept in an error message. */
const DETAIL_MAX_CHARS = 200;

/**
 * Twilio's error JSON (`{ code, message, more_info, status }`) as a short phrase. Runs of 4 or
 * more digits in its message are masked: they could be the phone number or the code itself.
 */
async function explainTwilioError(response: Response): Promise<string | undefined> {
  if (!response.headers.get('content-type')?.includes('json')) return undefined;
  const error = (await response.json()) as { code?: unknown; message?: unknown } | null;
  const parts: string[] = [];
  if (typeof error?.code === 'number' || (typeof error?.code === 'string' && /^\d{1,6}$/.test(error.code)))
    parts.push(`code ${error.code}`);
  if (typeof error?.message === 'string') {
    const text = error.message
      .replace(/[\p{Cc}\s]+/gu, ' ')
      .replace(/\d{4,}/g, '…')
      .trim();
    if (text) parts.push(text.length > DETAIL_MAX_CHARS ? `${text.slice(0, DETAIL_MAX_CHARS)}…` : text);
  }
  return parts.length ? parts.join(': ') : undefined;
}

/**
 * Sends through the Twilio Programmable Messaging REST API (or any API that copies it):
 * `POST {baseUrl}/2010-04-01/Accounts/{accountSid}/Messages.json`, a form with To, From and
 * Body, HTTP Basic auth. 200 or 201 means accepted; 5xx, 429, network errors and time-outs
 * are retried. Errors carry Twilio's code and message, never the SMS text.
 *
 * @example
 * const sms = createTwilioTransport({ accountSid: 'AC…', authToken: process.env.TWILIO_AUTH_TOKEN!, from: '+14155550100' });
 * await sms.send({ to: '+14155550199', body: 'Your sign-in code is 123456' });
 */
export function createTwilioTransport(options: TwilioTransportOptions): SmsTransport {
  const {
    accountSid,
    authToken,
    from,
    baseUrl = 'https://api.twilio.com',
    fetch: fetchImpl = fetch,
    retries = 2,
    retryDelayMs = 200,
    timeoutMs = 5000,
  } = options;
  if (!accountSid || !authToken || !from) throw new TypeError('Twilio needs an account SID, an auth token and a sender.');
  const base = new URL(baseUrl);
  if (base.protocol !== 'https:' && base.protocol !== 'http:') throw new TypeError('The Twilio base URL must be http or https.');
  checkRetryOptions({ retries, retryDelayMs, timeoutMs });
  const endpoint = new URL(
    `2010-04-01/Accounts/${encodeURIComponent(accountSid)}/Messages.json`,
    base.href.endsWith('/') ? base : `${base.href}/`,
  );
  const authorization = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`;

  return {
    async send(message) {
      assertSendable(message);
      const form = new URLSearchParams({ To: message.to, From: from, Body: message.body }).toString();
      await deliverWithRetry({
        provider: 'Twilio',
        retries,
        retryDelayMs,
        timeoutMs,
        accepted: (status) => status === 200 || status === 201,
        explain: explainTwilioError,
        request: (signal) =>
          fetchImpl(endpoint.href, {
            method: 'POST',
            headers: {
              authorization,
              accept: 'application/json',
              'content-type': 'application/x-www-form-urlencoded',
              'user-agent': 'service-idp',
            },
            body: form,
            redirect: 'manual',
            signal,
          }),
      });
    },
    describe: () => `Twilio API ${base.origin}, from ${from}`,
  };
}
