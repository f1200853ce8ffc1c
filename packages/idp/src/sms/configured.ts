import { SMS_ATTEMPT_TIMEOUT_MS } from '../defaults.js';
import { createOutboxTransport } from './outbox.js';
import type { SmsOutboxStore } from './outbox-store.js';
import type { SmsTransport } from './transport.js';
import { createTwilioTransport } from './twilio.js';
import { createWebhookTransport } from './webhook.js';

/** How codes by SMS leave the service (config.ts reads it from the environment). */
export type SmsConfig =
  | { transport: 'outbox' }
  | { transport: 'webhook'; url: string; secret: string }
  | { transport: 'twilio'; accountSid: string; authToken: string; from: string; baseUrl?: string };

/** The SMS transport the configuration names (context.ts). */
export function smsTransport(
  config: { sms: SmsConfig; issuer: string; devInbox: boolean },
  outbox: SmsOutboxStore,
  now: () => number,
): SmsTransport {
  const sms = config.sms;
  switch (sms.transport) {
    case 'outbox':
      return createOutboxTransport(
        outbox,
        now,
        `development SMS outbox (service-idp sms${config.devInbox ? `, ${config.issuer}/dev/sms` : ''})`,
      );
    case 'webhook':
      return createWebhookTransport({ url: sms.url, secret: sms.secret, timeoutMs: SMS_ATTEMPT_TIMEOUT_MS });
    case 'twilio':
      return createTwilioTransport({ ...sms, timeoutMs: SMS_ATTEMPT_TIMEOUT_MS });
  }
}
