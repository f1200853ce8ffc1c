/**
 * storage/compiled.ts: a query compiled once runs with each call's own values, on SQLite and
 * (with SERVICE_TEST_DATABASE_URL) PostgreSQL, and a builder that would bake a value into the
 * compiled SQL is refused on its first call rather than run with a stale value.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { compiledQuery } from '../src/storage/compiled.js';
import type { Db } from '../src/storage/database.js';
import { migrate } from '../src/storage/migrations.js';
import { openTestDatabase } from './helpers.js';

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
