import { isE164 } from 'service-protocol';

/** One text message. `to` is an E.164 number, e.g. `+14155550100`. */
export interface SmsMessage {
  to: string;
  body: string;
}

/**
 * Where SMS go: the development outbox, a signed webhook, or a Twilio-compatible API.
 *
 * @example
 * await transport.send({ to: '+14155550100', body: 'Your sign-in code is 123456' });
 */
export interface SmsTransport {
  /** Resolves when the provider accepted the message; rejects with {@link SmsDeliveryError} otherwise. */
  send(message: SmsMessage): Promise<void>;
  /** Where messages go, for the start banner: never a secret, a token or a URL path. */
  describe(): string;
}

/**
 * The provider did not accept a message. The message names the provider and the HTTP status or
 * network failure, never the text of the SMS (it carries a one-time code). `retryable` says
 * whether trying again later may succeed (5xx, 429, network errors, time-outs).
 */
export class SmsDeliveryError extends Error {
  readonly retryable: boolean;
  /** The provider's last HTTP status, when it answered. */
  readonly status: number | undefined;

  constructor(message: string, retryable: boolean, options?: { cause?: unknown; status?: number }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'SmsDeliveryError';
    this.retryable = retryable;
    this.status = options?.status;
  }
}

/** Refuses, before any provider sees it, a message whose recipient is not E.164 (the number stays out of the error). */
export function assertSendable(message: SmsMessage): void {
  if (!isE164(message.to)) throw new SmsDeliveryError('The SMS recipient is not an E.164 phone number.', false);
}
