import type { Command } from './command.js';

/** The development mailboxes: mail and SMS kept in the database when no transport is configured. */
const mail: Command = {
  name: 'mail',
  usage: `  service-idp mail [--json] [--limit 20]
      The development mailbox (used when SMTP_URL is not set), newest first.
`,
  flags: ['json', 'limit'],
  async run({ values, limit, config }, io) {
    const [{ withData }, { createMailboxStore }] = await Promise.all([import('./open.js'), import('../mail/mailbox-store.js')]);
    const messages = await withData(config, async ({ db }) => createMailboxStore(db).list(limit));
    if (values.json) io.out(`${JSON.stringify(messages)}\n`);
    else if (messages.length === 0) io.out('The development mailbox is empty.\n');
    else for (const m of messages) io.out(`--- ${new Date(m.createdAt).toISOString()}  to ${m.to}\nSubject: ${m.subject}\n\n${m.text}\n\n`);
    return 0;
  },
};

const sms: Command = {
  name: 'sms',
  usage: `  service-idp sms [--json] [--limit 20]
      The development SMS outbox (SMS_TRANSPORT=outbox), newest first.
`,
  flags: ['json', 'limit'],
  async run({ values, limit, config }, io) {
    const [{ withData }, { createSmsOutboxStore }] = await Promise.all([import('./open.js'), import('../sms/outbox-store.js')]);
    const messages = await withData(config, async ({ db }) => createSmsOutboxStore(db).list(limit));
    if (values.json) io.out(`${JSON.stringify(messages)}\n`);
    else if (messages.length === 0) io.out('The development SMS outbox is empty.\n');
    else for (const m of messages) io.out(`--- ${new Date(m.createdAt).toISOString()}  to ${m.to}\n${m.body}\n\n`);
    return 0;
  },
};

export const mailboxes: Command[] = [mail, sms];
