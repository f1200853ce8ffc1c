import { createRequire } from 'node:module';
import type nodemailer from 'nodemailer';
import { canonicalEmail } from 'service-protocol';
import type { MailboxStore } from './mailbox-store.js';

export interface OutgoingMail {
  /** The identity the mail is for: one canonical mailbox (packages/protocol email.ts), never a list. */
  to: string;
  subject: string;
  text: string;
  html: string;
  /** The name the From shows (an application's mail sender name, branding/); the address stays the configured one. */
  senderName?: string;
}

export interface Mailer {
  send(mail: OutgoingMail): Promise<void>;
  /** Where mail goes, for the start banner: an SMTP host (never its credentials) or the mailbox. */
  describe(): string;
  close(): void;
}

/**
 * The single mailbox a mail goes to. Anything but a canonical address is refused before a
 * byte is sent: a string the mail library could read as a list, a display name or a group
 * would take a code to a mailbox other than the identity it proves.
 */
export function recipientOf(mail: OutgoingMail): string {
  if (canonicalEmail(mail.to) !== mail.to) throw new Error('Refusing to send: the recipient is not one canonical mailbox.');
  return mail.to;
}

/**
 * Sends through SMTP (nodemailer) when a URL is configured. The recipient goes in as an
 * address object, which nodemailer uses as is (a string would go through its address-list
 * parser), and the envelope names that address alone.
 */
export function createSmtpMailer(smtpUrl: string, from: string): Mailer {
  // Loaded only when SMTP is configured: the development mailbox and the CLI never need it.
  const { createTransport } = createRequire(import.meta.url)('nodemailer') as typeof nodemailer;
  const transport = createTransport(smtpUrl);
  const target = new URL(smtpUrl);
  // The configured sender's address, for a From that shows an application's name instead of the configured one.
  const addressparser = createRequire(import.meta.url)('nodemailer/lib/addressparser') as (text: string) => Array<{ address?: string }>;
  const fromAddress = addressparser(from)[0]?.address ?? from;
  return {
    async send(mail) {
      const to = recipientOf(mail);
      // An address object: nodemailer encodes the name itself (checked at input, branding/validate.ts checkSenderName).
      const sender = mail.senderName ? { name: mail.senderName, address: fromAddress } : from;
      await transport.sendMail({ from: sender, subject: mail.subject, text: mail.text, html: mail.html, to: { name: '', address: to } });
    },
    describe: () => `SMTP ${target.protocol}//${target.hostname}:${target.port || 'default'}`,
    close: () => transport.close(),
  };
}

/** Keeps mail in the development mailbox, readable with `service-idp mail` and at /dev/mail. */
export function createMailboxMailer(store: MailboxStore, now: () => number, where: string): Mailer {
  return {
    async send(mail) {
      recipientOf(mail);
      await store.insert({ ...mail, createdAt: now() });
    },
    describe: () => where,
    close: () => {},
  };
}
