import { defineWing } from '../composition/wing.js';
import type { Db } from '../storage/schema.js';
import { type SmsConfig, smsTransport } from './configured.js';
import { createSmsOutboxStore } from './outbox-store.js';
import type { SmsTransport } from './transport.js';

/** How codes by SMS leave the service: the configured transport, or the development outbox (tests: their own transport). */
export const smsWing = defineWing(
  'sms',
  ({
    db,
    now,
    config,
    overrides,
  }: {
    db: Db;
    now: () => number;
    config: { sms: SmsConfig; issuer: string; devInbox: boolean };
    overrides: { sms?: SmsTransport };
  }) => {
    const smsOutbox = createSmsOutboxStore(db);
    return { services: { smsOutbox, sms: overrides.sms ?? smsTransport(config, smsOutbox, now) } };
  },
);
