import { defineWing } from '../composition/wing.js';
import type { Locales } from '../i18n/locales.js';
import type { SmsOutboxStore } from '../sms/outbox-store.js';
import type { Db } from '../storage/schema.js';
import { createMailboxStore } from './mailbox-store.js';
import { createMailboxMailer, createSmtpMailer, type Mailer } from './mailer.js';
import { devMailRoutes } from './routes.js';
import { loadMailTemplates } from './templates.js';

/**
 * How mail leaves the service: SMTP when configured, otherwise the development mailbox (tests:
 * their own transport); the templates; and, on a development machine only, the page that shows
 * what the mailbox and the SMS outbox hold (docs/operations.md, "Development inbox"). The
 * branded, localized mailer every wing sends through is made over this transport (branding/wing.ts).
 */
export const mailWing = defineWing(
  'mail',
  ({
    db,
    now,
    config,
    locales,
    smsOutbox,
    overrides,
  }: {
    db: Db;
    now: () => number;
    config: {
      smtpUrl?: string | undefined;
      mailFrom: string;
      devInbox: boolean;
      production: boolean;
      issuer: string;
      mailTemplatesDir?: string | undefined;
      sms: { transport: string };
    };
    locales: Locales;
    smsOutbox: SmsOutboxStore;
    overrides: { mailer?: Mailer };
  }) => {
    const mailbox = createMailboxStore(db);
    const mailTransport =
      overrides.mailer ??
      (config.smtpUrl
        ? createSmtpMailer(config.smtpUrl, config.mailFrom)
        : createMailboxMailer(
            mailbox,
            now,
            `development mailbox (service-idp mail${config.devInbox ? `, ${config.issuer}/dev/mail` : ''})`,
          ));
    const devInbox = config.devInbox && !config.production && (!config.smtpUrl || config.sms.transport === 'outbox');
    return {
      services: { mailbox, mailTransport, templates: loadMailTemplates(config.mailTemplatesDir, locales) },
      ...(devInbox
        ? {
            routes: {
              root: () => async (app) => {
                await app.register(devMailRoutes, { mailbox, smsOutbox });
              },
            },
          }
        : {}),
      close: () => mailTransport.close(),
    };
  },
);
