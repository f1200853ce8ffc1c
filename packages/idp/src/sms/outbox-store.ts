import { randomToken } from '../crypto/secrets.js';
import type { Db } from '../storage/schema.js';

export interface OutboxMessage {
  id: string;
  to: string;
  body: string;
  createdAt: number;
}

/** The development SMS outbox, shown beside the mailbox (`service-idp mail`, /dev/mail). */
export function createSmsOutboxStore(db: Db) {
  return {
    async insert(message: { to: string; body: string; createdAt: number }): Promise<void> {
      await db
        .insertInto('sms_outbox')
        .values({ id: randomToken('sms_', 12), recipient: message.to, body: message.body, created_at: message.createdAt })
        .execute();
    },

    /** Newest first. */
    async list(limit: number, recipient?: string): Promise<OutboxMessage[]> {
      let query = db.selectFrom('sms_outbox').selectAll().orderBy('created_at', 'desc').orderBy('id').limit(limit);
      if (recipient) query = query.where('recipient', '=', recipient);
      const rows = await query.execute();
      return rows.map((r) => ({ id: r.id, to: r.recipient, body: r.body, createdAt: Number(r.created_at) }));
    },
  };
}

export type SmsOutboxStore = ReturnType<typeof createSmsOutboxStore>;
