/**
 * The development mailbox lists newest first, and mails sent within one millisecond in the order
 * they were sent: "the latest code" (tests, `service-idp mail`, /dev/mail) is the last one sent,
 * never an older mail that happened to share its millisecond.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMailboxStore } from '../../src/mail/mailbox-store.js';
import { migrate } from '../../src/storage/migrations.js';
import { openTestDatabase } from '../support/helpers.js';

describe('the development mailbox order', () => {
  let database: Awaited<ReturnType<typeof openTestDatabase>>;
  before(async () => {
    database = await openTestDatabase();
    await migrate(database.db);
  });
  after(async () => {
    await database.db.destroy();
    await database.drop();
  });

  it('lists mails of one millisecond in the order they were sent, newest first', async () => {
    const mailbox = createMailboxStore(database.db);
    const at = Date.now();
    const subjects = Array.from({ length: 20 }, (_, i) => `mail ${i}`);
    for (const subject of subjects) await mailbox.insert({ to: 'ann@example.com', subject, text: subject, html: '', createdAt: at });
    await mailbox.insert({ to: 'ann@example.com', subject: 'older', text: '', html: '', createdAt: at - 1 });
    const listed = await mailbox.list(100, 'ann@example.com');
    assert.deepEqual(
      listed.map((m) => m.subject),
      [...subjects].reverse().concat('older'),
    );
    assert.equal((await mailbox.list(1, 'ann@example.com'))[0]?.subject, 'mail 19');
  });
});
