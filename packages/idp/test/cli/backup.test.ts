/**
 * backup and restore of the embedded database, and migrate --status / --dry-run: an online copy
 * taken while the service writes, checked by opening it again; a restore that refuses what is not
 * a service database, a database in use, and replacing one without --force; the PostgreSQL path
 * named in one line.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import { loadConfig, type RunningService, startService } from '../../src/index.js';
import { KNOWN_MIGRATIONS } from '../../src/storage/migrations.js';
import { openTestDatabase, runCli as run, SQLITE_SUITE_ONLY, TEST_DATABASE_URL } from '../support/helpers.js';

describe('service-idp backup, restore and migrate --status', SQLITE_SUITE_ONLY, () => {
  let dir: string;
  let data: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'service-idp-backup-'));
    data = join(dir, 'data');
    mkdirSync(data);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const cli = async (...args: string[]) => {
    const result = await run([...args, '--data', data]);
    assert.equal(result.code, 0, result.stderr);
    return result.stdout;
  };
  const clientNames = async () =>
    (JSON.parse(await cli('clients', 'list', '--json')) as { clients: Array<{ name: string }> }).clients.map((c) => c.name).sort();

  it('lists pending migrations and changes nothing, then applied ones', async () => {
    const fresh = join(dir, 'fresh');
    mkdirSync(fresh);
    const status = await run(['migrate', '--status', '--json', '--data', fresh]);
    assert.equal(status.code, 0, status.stderr);
    assert.deepEqual(JSON.parse(status.stdout), {
      database: join(fresh, 'service.db'),
      applied: [],
      pending: KNOWN_MIGRATIONS,
      unknown: [],
    });
    const dry = await run(['migrate', '--dry-run', '--data', fresh]);
    assert.equal(dry.code, 0, dry.stderr);
    assert.equal(
      dry.stdout,
      `migrate would apply ${KNOWN_MIGRATIONS.length} migrations to ${join(fresh, 'service.db')}, in this order:\n${KNOWN_MIGRATIONS.map((m) => `  ${m}\n`).join('')}`,
    );
    assert.deepEqual(readdirSync(fresh), [], 'neither made a database nor a server secret');

    // A database at an older migration: the pending ones are the newer, and dry-run leaves them pending.
    const older = new SQLite(join(fresh, 'service.db'));
    older.close();
    const { openSqlite } = await import('../../src/storage/database.js');
    const { migrate } = await import('../../src/storage/migrations.js');
    const db = openSqlite(join(fresh, 'service.db'), { checkpointWorker: false });
    await migrate(db, KNOWN_MIGRATIONS[2]);
    await db.destroy();
    const half = JSON.parse((await run(['migrate', '--status', '--json', '--data', fresh])).stdout);
    assert.deepEqual(
      half.applied.map((m: { name: string }) => m.name),
      KNOWN_MIGRATIONS.slice(0, 3),
    );
    assert.ok(half.applied.every((m: { at: number }) => Number.isInteger(m.at)));
    assert.deepEqual(half.pending, KNOWN_MIGRATIONS.slice(3));
    assert.match(
      (await run(['migrate', '--dry-run', '--data', fresh])).stdout,
      new RegExp(`would apply ${KNOWN_MIGRATIONS.length - 3} migrations`),
    );
    assert.deepEqual(JSON.parse((await run(['migrate', '--status', '--json', '--data', fresh])).stdout).pending, KNOWN_MIGRATIONS.slice(3));
    const table = (await run(['migrate', '--status', '--data', fresh])).stdout;
    assert.match(table, new RegExp(`: 3 applied, ${KNOWN_MIGRATIONS.length - 3} pending\\.\\nMIGRATION +STATUS +APPLIED\\n`));
    assert.match(table, new RegExp(`${KNOWN_MIGRATIONS[3]} +pending +-`));
    assert.equal((await run(['migrate', '--data', fresh])).code, 0);
    assert.match((await run(['migrate', '--dry-run', '--data', fresh])).stdout, /is up to date: migrate would apply nothing/);

    // A newer release's migration: status names it, dry-run says migrate would refuse.
    const newer = new SQLite(join(fresh, 'service.db'));
    newer.prepare('insert into kysely_migration (name, timestamp) values (?, ?)').run('9999_future', new Date().toISOString());
    newer.close();
    assert.deepEqual(JSON.parse((await run(['migrate', '--status', '--json', '--data', fresh])).stdout).unknown, ['9999_future']);
    const refused = await run(['migrate', '--dry-run', '--data', fresh]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /migrate would refuse .*newer than this build \(unknown migrations: 9999_future\)/);
    assert.equal((await run(['migrate', '--status', '--dry-run', '--data', fresh])).code, 2);
  });

  describe('while the service runs', () => {
    let service: RunningService | undefined;
    before(async () => {
      service = await startService(loadConfig({ port: '0', data }, {}));
    });
    after(async () => service?.close());

    it('backs up online, checked by reopening, and refuses to restore over the database in use', async () => {
      await cli('clients', 'create', '--name', 'Before', '--origin', 'https://before.test');
      const copy = join(dir, 'first.db');
      // Writes go on while the copy is taken.
      const writing = Promise.all(
        [1, 2, 3].map((i) => cli('clients', 'create', '--name', `During ${i}`, '--origin', `https://during${i}.test`)),
      );
      const out = await cli('backup', copy);
      await writing;
      assert.match(
        out,
        new RegExp(
          `^Backed up ${join(data, 'service.db')} to ${copy} \\(${KNOWN_MIGRATIONS.length} migrations, integrity ok\\)\\. Keep .*server-secret with it\\.\\n$`,
        ),
      );
      assert.ok(!existsSync(`${copy}-wal`) && !existsSync(`${copy}.partial`), 'one self-contained file');
      const opened = new SQLite(copy, { readonly: true });
      assert.equal(opened.pragma('integrity_check', { simple: true }), 'ok');
      assert.equal(opened.pragma('journal_mode', { simple: true }), 'delete');
      assert.ok((opened.prepare('select name from clients').all() as Array<{ name: string }>).some((c) => c.name === 'Before'));
      opened.close();

      const again = await run(['backup', copy, '--data', data]);
      assert.equal(again.code, 2);
      assert.match(again.stderr, /first\.db exists: give another name, or --force/);
      assert.equal((await run(['backup', copy, '--force', '--data', data])).code, 0);
      const itself = await run(['backup', join(data, 'service.db'), '--force', '--data', data]);
      assert.equal(itself.code, 2);
      assert.match(itself.stderr, /service\.db is the database itself: back it up to another file/);

      const inUse = await run(['restore', copy, '--force', '--data', data]);
      assert.equal(inUse.code, 1);
      assert.equal(
        inUse.stderr,
        `service-idp: ${join(data, 'service.db')} is in use (a running service-idp or command): stop it, then restore\n`,
      );
      assert.ok(!existsSync(join(data, 'service.db.restoring')));
      assert.equal((await clientNames()).length, 4, 'the database is as it was');
    });
  });

  it('restores a copy over the stopped service, keeping the database it replaced', async () => {
    const copy = join(dir, 'second.db');
    const before = await clientNames();
    await cli('backup', copy);
    await cli('clients', 'create', '--name', 'After', '--origin', 'https://after.test');
    const refused = await run(['restore', copy, '--data', data]);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /service\.db exists: restore replaces it only with --force/);

    const out = await cli('restore', copy, '--force');
    const kept = /kept as (\S+)\. /.exec(out)?.[1] ?? '';
    assert.match(out, new RegExp(`^Restored ${copy} to ${join(data, 'service.db')} \\(${KNOWN_MIGRATIONS.length} migrations\\)\\.`));
    assert.deepEqual(await clientNames(), before, 'the copy is what the service reads');
    const replaced = new SQLite(kept, { readonly: true });
    assert.ok((replaced.prepare('select name from clients').all() as Array<{ name: string }>).some((c) => c.name === 'After'));
    replaced.close();

    // Into a new data folder: only with the server secret the copy was made with.
    const moved = join(dir, 'moved');
    mkdirSync(moved);
    const noSecret = await run(['restore', copy, '--data', moved]);
    assert.equal(noSecret.code, 2);
    assert.match(noSecret.stderr, /restore needs .*moved\/server-secret, the server secret of the service the copy was made from/);
    copyFileSync(join(data, 'server-secret'), join(moved, 'server-secret'));
    assert.equal((await run(['restore', copy, '--data', moved])).code, 0);
    assert.deepEqual(
      JSON.parse((await run(['clients', 'list', '--json', '--data', moved])).stdout)
        .clients.map((c: { name: string }) => c.name)
        .sort(),
      before,
    );
    assert.equal(statSync(join(moved, 'service.db')).isFile(), true);
  });

  it('refuses to restore what is not a service database of this release or older', async () => {
    const junk = join(dir, 'junk.db');
    writeFileSync(junk, 'not a database at all, but long enough to be read as one'.repeat(100));
    const other = join(dir, 'other.db');
    const otherDb = new SQLite(other);
    otherDb.exec('create table notes (id integer primary key, text text)');
    otherDb.close();
    const future = join(dir, 'future.db');
    await cli('backup', future);
    const futureDb = new SQLite(future);
    futureDb.prepare('insert into kysely_migration (name, timestamp) values (?, ?)').run('9999_future', new Date().toISOString());
    futureDb.close();
    const cases: Array<[string, RegExp]> = [
      [junk, /junk\.db is not a service-idp database \(not SQLite\)/],
      [other, /other\.db is not a service-idp database \(no migrations table\)/],
      [future, /future\.db is from a newer service-idp \(migrations 9999_future\): upgrade first/],
      [join(dir, 'absent.db'), /cannot open .*absent\.db/],
    ];
    const names = await clientNames();
    for (const [file, message] of cases) {
      const result = await run(['restore', file, '--force', '--data', data]);
      assert.equal(result.code, 1, file);
      assert.match(result.stderr, message);
    }
    assert.deepEqual(await clientNames(), names, 'nothing changed');
  });

  it('points a PostgreSQL service to pg_dump and pg_restore', async () => {
    const env = { DATABASE_URL: 'postgres://idp:pg-secret@db.example:5432/idp' };
    const backup = await run(['backup', join(dir, 'pg.db'), '--data', data], env);
    assert.equal(backup.code, 2);
    assert.match(
      backup.stderr,
      /^service-idp: backup is for the embedded SQLite database; postgres:\/\/idp:\*\*\*@db\.example:5432\/idp is PostgreSQL: use pg_dump --format=custom \(docs\/operations\.md, Backups\)/,
    );
    const restore = await run(['restore', join(dir, 'second.db'), '--data', data], env);
    assert.equal(restore.code, 2);
    assert.match(restore.stderr, /use pg_restore/);
    assert.ok(!`${backup.stderr}${restore.stderr}`.includes('pg-secret'));
  });
});

describe('migrate --status and --dry-run on PostgreSQL', { skip: TEST_DATABASE_URL ? false : 'needs SERVICE_TEST_DATABASE_URL' }, () => {
  let data: string;
  let url: string;
  let drop: () => Promise<void>;
  before(async () => {
    data = mkdtempSync(join(tmpdir(), 'service-idp-migrate-pg-'));
    const t = await openTestDatabase();
    await t.db.destroy();
    drop = t.drop;
    // The CLI reaches the test schema through the URL's `options` parameter, as libpq does.
    const parsed = new URL(TEST_DATABASE_URL as string);
    parsed.searchParams.set('options', `-c search_path=${t.schema}`);
    url = parsed.toString();
  });
  after(async () => {
    await drop();
    rmSync(data, { recursive: true, force: true });
  });

  it('lists pending migrations without applying them, then applied ones', async () => {
    const status = async () => JSON.parse((await run(['migrate', '--status', '--json', '--data', data, '--database', url])).stdout);
    assert.deepEqual((await status()).pending, KNOWN_MIGRATIONS);
    assert.match(
      (await run(['migrate', '--dry-run', '--data', data, '--database', url])).stdout,
      new RegExp(`would apply ${KNOWN_MIGRATIONS.length} migrations`),
    );
    assert.deepEqual((await status()).pending, KNOWN_MIGRATIONS, 'dry-run applied nothing');
    assert.equal((await run(['migrate', '--data', data, '--database', url])).code, 0);
    const after = await status();
    assert.deepEqual([after.applied.map((m: { name: string }) => m.name), after.pending], [KNOWN_MIGRATIONS, []]);
  });
});
