import { randomToken } from '../crypto/secrets.js';
import type { Db } from '../storage/schema.js';

export interface MailMessage {
  id: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  createdAt: number;
}

/** The development mailbox: mail kept by the service when no SMTP server is configured. */
export function createMailboxStore(db: Db) {
  return {
    async insert(message: Omit<MailMessage, 'id'>): Promise<void> {
      await db
        .insertInto('mailbox')
        .values({
          // Increasing within a process, so two mails of one millisecond list in the order they were sent.
          id: `msg_${process.hrtime.bigint().toString().padStart(20, '0')}${randomToken('', 6)}`,
          recipient: message.to,
          subject: message.subject,
          text_body: message.text,
          html_body: message.html,
          created_at: message.createdAt,
        })
        .execute();
    },

    /** Newest first (within one millisecond, in the order this process sent them). */
    async list(limit: number, recipient?: string): Promise<MailMessage[]> {
      let query = db.selectFrom('mailbox').selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit);
      if (recipient) query = query.where('recipient', '=', recipient);
      const rows = await query.execute();
      return rows.map((r) => ({
        id: r.id,
        to: r.recipient,
        subject: r.subject,
        text: r.text_body,
        html: r.html_body,
        createdAt: Number(r.created_at),
      }));
    },
  };
}

export type MailboxStore = ReturnType<typeof createMailboxStore>;
