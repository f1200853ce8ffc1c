import nodemailer from 'nodemailer';
import type { MailboxStore } from './mailbox-store.js';

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface Mailer {
  send(mail: OutgoingMail): Promise<void>;
  /** Where mail goes, for the start banner: an SMTP host (never its credentials) or the mailbox. */
  describe(): string;
  close(): void;
}

/** Sends through SMTP (nodemailer) when a URL is configured. */
export function createSmtpMailer(smtpUrl: string, from: string): Mailer {
  const transport = nodemailer.createTransport(smtpUrl);
  const target = new URL(smtpUrl);
  return {
    async send(mail) {
      await transport.sendMail({ from, ...mail });
    },
    describe: () => `SMTP ${target.protocol}//${target.hostname}:${target.port || 'default'}`,
    close: () => transport.close(),
  };
}

/** Keeps mail in the development mailbox, readable with `service-idp mail` and at /dev/mail. */
export function createMailboxMailer(store: MailboxStore, now: () => number, where: string): Mailer {
  return {
    async send(mail) {
      await store.insert({ ...mail, createdAt: now() });
    },
    describe: () => where,
    close: () => {},
  };
}
