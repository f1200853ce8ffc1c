/**
 * storage/compiled.ts: a query compiled once runs with each call's own values, on SQLite and
 * (with SERVICE_TEST_DATABASE_URL) PostgreSQL, and a builder that would bake a value into the
 * compiled SQL is refused on its first call rather than run with a stale value.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { compiledQuery } from '../../src/storage/compiled.js';
import { migrate } from '../../src/storage/migrations.js';
import type { Db } from '../../src/storage/schema.js';
import { openTestDatabase, TEST_DATABASE_URL } from '../support/helpers.js';

let db: Db;
let drop: () => Promise<void>;
before(async () => {
  ({ db, drop } = await openTestDatabase());
  await migrate(db);
  const now = Date.now();
  await db
    .insertInto('users')
    .values([
      { id: 'u1', email: 'one@example.com', created_at: now, disabled_at: null },
      { id: 'u2', email: 'two@example.com', created_at: now, disabled_at: null },
    ])
    .execute();
});
after(async () => {
  await db.destroy();
  await drop();
});

const userById = compiledQuery((d: Db, a: { id: string }) => d.selectFrom('users').select(['id', 'email']).where('id', '=', a.id));

test('each call binds its own values to the SQL compiled on the first', async () => {
  assert.deepEqual(await userById(db, { id: 'u1' }), [{ id: 'u1', email: 'one@example.com' }]);
  assert.deepEqual(await userById(db, { id: 'u2' }), [{ id: 'u2', email: 'two@example.com' }]);
  assert.deepEqual(await userById(db, { id: 'nobody' }), []);
});

test('constants written in the builder stay bound beside the placeholders', async () => {
  const enabledByEmail = compiledQuery((d: Db, a: { email: string }) =>
    d.selectFrom('users').select('id').where('email', '=', a.email).where('disabled_at', 'is', null).where('id', '!=', 'u9'),
  );
  assert.deepEqual(await enabledByEmail(db, { email: 'two@example.com' }), [{ id: 'u2' }]);
  await db.updateTable('users').set({ disabled_at: Date.now() }).where('id', '=', 'u2').execute();
  assert.deepEqual(await enabledByEmail(db, { email: 'two@example.com' }), []);
  await db.updateTable('users').set({ disabled_at: null }).where('id', '=', 'u2').execute();
});

test('each shape is compiled on its own', async () => {
  const byShape = compiledQuery((d: Db, a: { value: string }, shape: 'id' | 'email') =>
    d
      .selectFrom('users')
      .select('id')
      .where(shape === 'id' ? 'id' : 'email', '=', a.value),
  );
  assert.deepEqual(await byShape(db, { value: 'u1' }, 'id'), [{ id: 'u1' }]);
  assert.deepEqual(await byShape(db, { value: 'two@example.com' }, 'email'), [{ id: 'u2' }]);
  assert.deepEqual(await byShape(db, { value: 'two@example.com' }, 'id'), []);
});

test('stale value: a placeholder changed by the builder is refused, not baked into the query', async () => {
  const changed = compiledQuery((d: Db, a: { email: string }) =>
    d.selectFrom('users').select('id').where('email', '=', a.email.toLowerCase()),
  );
  await assert.rejects(changed(db, { email: 'one@example.com' }), /placeholder was changed/);
  const inText = compiledQuery((d: Db, a: { email: string }) =>
    d
      .selectFrom('users')
      .select('id')
      .where(sql.raw(`email = '${a.email}'`)),
  );
  await assert.rejects(inText(db, { email: 'one@example.com' }), /reached the SQL text/);
});

const POSTGRES_ONLY = { skip: TEST_DATABASE_URL ? false : 'PostgreSQL only: SQLite prepares every statement once already' };

test('PostgreSQL: a compiled query runs as a named prepared statement, prepared once per connection', POSTGRES_ONLY, async () => {
  const byEmail = compiledQuery((d: Db, a: { email: string }) =>
    d.selectFrom('users').select(['id', 'created_at']).where('email', '=', a.email),
  );
  await db.connection().execute(async (connection) => {
    assert.equal((await byEmail(connection, { email: 'one@example.com' }))[0]?.id, 'u1');
    assert.equal((await byEmail(connection, { email: 'two@example.com' }))[0]?.id, 'u2');
    const prepared = await sql<{
      name: string;
    }>`select name from pg_prepared_statements where statement like ${'%"created_at" from "users" where "email" = $1%'}`.execute(
      connection,
    );
    assert.equal(prepared.rows.length, 1, 'one named statement for two calls');
    assert.match(prepared.rows[0]?.name ?? '', /^svc_\d+_\d+$/);
  });
});

test(
  'PostgreSQL: a table changed under a prepared select * (a migration elsewhere) is prepared again, and the query answers',
  POSTGRES_ONLY,
  async () => {
    const wholeUser = compiledQuery((d: Db, a: { id: string }) => d.selectFrom('users').selectAll().where('id', '=', a.id));
    await db.connection().execute(async (connection) => {
      assert.equal((await wholeUser(connection, { id: 'u1' }))[0]?.id, 'u1');
      await sql`alter table users add column added_meanwhile text`.execute(connection);
      try {
        // Without the re-prepare, PostgreSQL refuses: "cached plan must not change result type".
        const [row] = await wholeUser(connection, { id: 'u1' });
        assert.equal(row?.id, 'u1');
        assert.ok(row && 'added_meanwhile' in row);
      } finally {
        await sql`alter table users drop column added_meanwhile`.execute(connection);
      }
    });
  },
);
