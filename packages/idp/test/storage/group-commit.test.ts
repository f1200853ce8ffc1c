/**
 * SQLite group commit (storage/group-commit.ts): writes of one event-loop turn share a COMMIT,
 * yet each behaves as a transaction of its own: a throw undoes only its own writes, and a write
 * never joins a Kysely transaction that is open on the same connection.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { openSqlite } from '../../src/storage/database.js';
import { groupCommitOf } from '../../src/storage/group-commit.js';

async function scratch() {
  const db = openSqlite(':memory:');
  await sql`create table notes (id text primary key)`.execute(db);
  const group = groupCommitOf(db);
  assert.ok(group, 'a SQLite database opened by openSqlite has a group commit');
  const insert = (id: string) =>
    db
      .insertInto('notes' as never)
      .values({ id } as never)
      .compile();
  const ids = async () => (await sql<{ id: string }>`select id from notes order by id`.execute(db)).rows.map((r) => r.id);
  return { db, group, insert, ids };
}

describe('SQLite group commit', () => {
  it('a write that throws midway leaves none of its rows, and the others of its batch commit', async () => {
    const { db, group, insert, ids } = await scratch();
    try {
      const results = await Promise.allSettled([
        group.run((run) => run(insert('a'))),
        group.run((run) => {
          run(insert('b'));
          run(insert('a')); // the primary key refuses it: b must go too
        }),
        group.run((run) => run(insert('c'))),
      ]);
      assert.deepEqual(
        results.map((r) => r.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      assert.deepEqual(await ids(), ['a', 'c']);
    } finally {
      await db.destroy();
    }
  });

  it('waits for an open Kysely transaction instead of writing inside it', async () => {
    const { db, group, insert, ids } = await scratch();
    try {
      let release: () => void = () => undefined;
      const open = new Promise<void>((resolve) => {
        release = resolve;
      });
      const transaction = db.transaction().execute(async (tx) => {
        await sql`insert into notes (id) values ('in-tx')`.execute(tx);
        await open;
        throw new Error('rolled back');
      });
      await new Promise((resolve) => setTimeout(resolve, 20));
      const write = group.run((run) => run(insert('grouped')));
      await new Promise((resolve) => setTimeout(resolve, 20));
      release();
      await assert.rejects(transaction, /rolled back/);
      await write;
      // Had the grouped write joined the open transaction, the rollback would have taken it too.
      assert.deepEqual(await ids(), ['grouped']);
    } finally {
      await db.destroy();
    }
  });
});
