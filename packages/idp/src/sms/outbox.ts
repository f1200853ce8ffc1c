import { assertSendable, SmsDeliveryError, type SmsTransport } from './transport.js';

/** Where the development outbox keeps messages (the lead's `sms_outbox` table store). */
export interface SmsOutboxStore {
  insert(message: { to: string; body: string; createdAt: number }): Promise<void>;
}

/**
 * The development transport: keeps every SMS in the outbox instead of sending it, as the
 * development mailbox does for mail. Never for production.
 *
 * @example
 * const sms = createOutboxTransport(outboxStore, () => Date.now());
 * await sms.send({ to: '+14155550100', body: 'Your sign-in code is 123456' });
 */
export function createOutboxTransport(store: SmsOutboxStore, now: () => number, where = 'the development SMS outbox'): SmsTransport {
  return {
    async send(message) {
      assertSendable(message);
      try {
        await store.insert({ to: message.to, body: message.body, createdAt: now() });
      } catch (cause) {
        throw new SmsDeliveryError('The development SMS outbox could not store the message.', true, { cause });
      }
    },
    describe: () => where,
  };
}
