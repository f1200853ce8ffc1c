import { setTimeout as sleep } from 'node:timers/promises';
import { SmsDeliveryError } from './transport.js';

/** Retry and time-out settings shared by the HTTP transports. */
export interface RetryOptions {
  /** Further attempts after the first one. */
  retries: number;
  /** Wait before the first retry; it doubles before each next one. */
  retryDelayMs: number;
  /** Limit on each attempt, from sending the request to reading the answer. */
  timeoutMs: number;
}

export interface HttpDelivery extends RetryOptions {
  /** The provider as error messages name it: 'SMS webhook', 'Twilio'. */
  provider: string;
  /** Makes one attempt. Called again for each retry, so time-bound headers can be fresh. */
  request(signal: AbortSignal): Promise<Response>;
  /** Whether this status means the provider accepted the message. */
  accepted(status: number): boolean;
  /**
   * Words from a refusal to add to the error message (e.g. the provider's error code). The
   * answer is the provider's: keep anything that could echo the SMS text out of it.
   */
  explain?(response: Response): Promise<string | undefined>;
}

/** Checks the retry settings once, when the transport is created. */
export function checkRetryOptions(options: RetryOptions): void {
  if (!Number.isInteger(options.retries) || options.retries < 0) throw new RangeError('SMS retries must be a non-negative integer.');
  if (!(options.retryDelayMs >= 0)) throw new RangeError('The SMS retry delay must be 0 ms or more.');
  if (!(options.timeoutMs > 0)) throw new RangeError('The SMS time-out must be above 0 ms.');
}

/** 5xx and 429 may pass later; any other refusal will not. */
const isRetryableStatus = (status: number) => status >= 500 || status === 429;

/** The system error code under fetch's generic "fetch failed" (ECONNREFUSED…), never free text. */
function networkReason(error: unknown): string {
  const code = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return typeof code === 'string' && /^[A-Z0-9_]+$/.test(code) ? code : 'network error';
}

async function discard(response: Response): Promise<void> {
  await response.body?.cancel().catch(() => {});
}

/**
 * Sends with retries: 5xx, 429, network errors and time-outs are tried again up to `retries`
 * times, waiting retryDelayMs, then twice as long each time; any other status is final.
 * Resolves once a status is accepted; otherwise rejects with an SmsDeliveryError that names
 * the provider and the last status or failure, never the message.
 */
export async function deliverWithRetry(delivery: HttpDelivery): Promise<void> {
  const { provider, retries, retryDelayMs, timeoutMs } = delivery;
  let last: SmsDeliveryError | undefined;
  for (let attempt = 0; attempt <= retries; attempt++) {
    if (attempt > 0) await sleep(retryDelayMs * 2 ** (attempt - 1));
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    try {
      let response: Response;
      try {
        response = await delivery.request(controller.signal);
      } catch (cause) {
        const reason = controller.signal.aborted
          ? `did not answer within ${timeoutMs} ms`
          : `could not be reached (${networkReason(cause)})`;
        last = new SmsDeliveryError(`${provider} ${reason}`, true, { cause });
        continue;
      }
      const { status } = response;
      if (delivery.accepted(status)) {
        await discard(response);
        return;
      }
      const detail = delivery.explain ? await delivery.explain(response).catch(() => undefined) : undefined;
      await discard(response);
      const retryable = isRetryableStatus(status);
      last = new SmsDeliveryError(`${provider} answered HTTP ${status}${detail ? ` (${detail})` : ''}`, retryable, { status });
      if (!retryable) throw last;
    } finally {
      clearTimeout(timer);
    }
  }
  const attempts = retries + 1;
  throw new SmsDeliveryError(`${last!.message}; gave up after ${attempts} attempt${attempts === 1 ? '' : 's'}`, true, {
    cause: last!.cause,
    ...(last!.status === undefined ? {} : { status: last!.status }),
  });
}
