import type { ClientService } from '../clients/service.js';
import { defineWing } from '../composition/wing.js';
import type { SecretHasher } from '../crypto/secrets.js';
import { deriveServerKey } from '../crypto/server-secret.js';
import type { EventLog } from '../events/service.js';
import type { Mailer } from '../mail/mailer.js';
import type { MailTemplates } from '../mail/templates.js';
import type { SmsTransport } from '../sms/transport.js';
import type { SpentTokenStore } from '../spent-tokens/store.js';
import type { Throttle } from '../throttle/service.js';
import type { EnabledUserStore } from '../users/enabled-store.js';
import type { SendBudgets } from './send-budgets.js';
import { type CaptchaConfig, createCaptchaChallenges } from './send-captcha.js';
import { type ChallengeThresholds, createSendChallenges } from './send-challenge.js';
import type { SendRules } from './send-rules.js';
import { createOtpService } from './service.js';

/**
 * The one code sender (mail and SMS) every factor's code goes through, with its spacing, limits
 * and budgets, and the challenge it asks past its thresholds: the proof of work (otp/send-challenge.ts)
 * or the operator's CAPTCHA (otp/send-captcha.ts).
 */
export const otpWing = defineWing(
  'otp',
  (deps: {
    now: () => number;
    hash: SecretHasher;
    serverSecret: Buffer;
    config: {
      sendSpacingSeconds: number;
      sendBudgets: SendBudgets;
      sendChallengeThresholds: ChallengeThresholds;
      sendCaptcha: CaptchaConfig | undefined;
      sendRules: SendRules;
    };
    clients: ClientService;
    spentTokens: SpentTokenStore;
    enabledUsers: EnabledUserStore;
    throttle: Throttle;
    mailer: Mailer;
    templates: MailTemplates;
    sms: SmsTransport;
    events: EventLog;
  }) => ({
    services: {
      otp: createOtpService({
        ...{ enabledUsers: deps.enabledUsers, throttle: deps.throttle, mailer: deps.mailer, templates: deps.templates, sms: deps.sms },
        ...{ hash: deps.hash, events: deps.events, now: deps.now },
        sendSpacingSeconds: deps.config.sendSpacingSeconds,
        budgets: deps.config.sendBudgets,
        challenges: deps.config.sendCaptcha
          ? createCaptchaChallenges({ captcha: deps.config.sendCaptcha, hash: deps.hash, spent: deps.spentTokens, now: deps.now })
          : createSendChallenges({
              ...{ hmacKey: deriveServerKey(deps.serverSecret, 'send-challenge'), hash: deps.hash, spent: deps.spentTokens, now: deps.now },
            }),
        challengeThresholds: deps.config.sendChallengeThresholds,
        sendRules: deps.config.sendRules,
        clientSendRules: async (clientId) => (await deps.clients.findById(clientId))?.sendRules,
      }),
    },
  }),
);
