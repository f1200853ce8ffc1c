/**
 * Storage on the database the suite runs against (SQLite in memory, or a fresh PostgreSQL
 * schema when SERVICE_TEST_DATABASE_URL is set): versioned migrations, the refusal of a
 * schema newer than the build, BIGINT times read as numbers, readiness, and the CLI's
 * --database flag and DATABASE_URL (PostgreSQL only).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { loadConfig, openContext } from '../../src/index.js';
import { KNOWN_MIGRATIONS, migrate } from '../../src/storage/migrations.js';
import { openTestDatabase, startTestService, TEST_DATABASE_URL, type TestService } from '../support/helpers.js';

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env } }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** Records a migration only a newer release would know, as that release would have. */
async function addFutureMigration(db: Parameters<typeof migrate>[0]): Promise<void> {
  await sql`insert into kysely_migration (name, timestamp) values (${'9999_future'}, ${new Date().toISOString()})`.execute(db);
}

const NEWER_SCHEMA = /database schema is newer than this build \(unknown migrations: 9999_future\); upgrade service-idp/;

describe(`database (${TEST_DATABASE_URL ? 'PostgreSQL' : 'SQLite'})`, () => {
  let data: string;
  before(() => {
    data = mkdtempSync(join(tmpdir(), 'service-idp-db-'));
  });
  after(() => rmSync(data, { recursive: true, force: true }));

  it('applies every known migration to a fresh database once', async () => {
    const t = await openTestDatabase();
    try {
      assert.deepEqual(await migrate(t.db), KNOWN_MIGRATIONS);
      assert.deepEqual(await migrate(t.db), []);
    } finally {
      await t.db.destroy();
      await t.drop();
    }
  });

  it('refuses to open a database whose schema is newer than this build', async () => {
    const t = await openTestDatabase();
    try {
      await migrate(t.db);
      await addFutureMigration(t.db);
      await assert.rejects(openContext(loadConfig({ data }, {}), { db: t.db }), NEWER_SCHEMA);
      const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(t.db);
      assert.deepEqual(
        applied.rows.map((r) => r.name),
        [...KNOWN_MIGRATIONS, '9999_future'],
        'nothing was applied or undone',
      );
    } finally {
      await t.db.destroy();
      await t.drop();
    }
  });

  describe('a running service', () => {
    let service: TestService;
    before(async () => {
      service = await startTestService();
    });
    after(() => service.close());

    it('reads BIGINT epoch milliseconds back as numbers', async () => {
      const row = await service.ctx.db.selectFrom('clients').select('created_at').executeTakeFirstOrThrow();
      assert.equal(typeof row.created_at, 'number');
      assert.ok(Math.abs(row.created_at - Date.now()) < 60_000);
    });

    it('is ready while its database answers', async () => {
      const response = await fetch(`${service.url}/readyz`);
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), { status: 'ok' });
    });
  });

  describe('CLI with --database', { skip: !TEST_DATABASE_URL && 'needs SERVICE_TEST_DATABASE_URL' }, () => {
    let t: Awaited<ReturnType<typeof openTestDatabase>>;
    let url: string;
    before(async () => {
      t = await openTestDatabase();
      // The CLI reaches the test schema through the URL's `options` parameter, as libpq does.
      const parsed = new URL(TEST_DATABASE_URL as string);
      parsed.searchParams.set('options', `-c search_path=${t.schema}`);
      url = parsed.toString();
    });
    after(async () => {
      await t.db.destroy();
      await t.drop();
    });

    it('migrates, writes and reads through --database and DATABASE_URL alike', async () => {
      const migrated = await run(['migrate', '--data', data, '--database', url]);
      assert.equal(migrated.code, 0, migrated.stderr);
      assert.match(migrated.stdout, /^Database postgres:\/\/.* is up to date\.$/m);
      const tables = await sql<{ n: number }>`select count(*) as n from kysely_migration`.execute(t.db);
      assert.equal(Number(tables.rows[0]?.n), KNOWN_MIGRATIONS.length);

      const created = await run([
        'clients',
        'create',
        '--data',
        data,
        '--database',
        url,
        '--name',
        'PG',
        '--origin',
        'https://pg.example',
        '--json',
      ]);
      assert.equal(created.code, 0, created.stderr);
      const { clientId } = JSON.parse(created.stdout);
      const listed = await run(['clients', 'list', '--data', data, '--json'], { DATABASE_URL: url });
      assert.equal(listed.code, 0, listed.stderr);
      assert.deepEqual(
        JSON.parse(listed.stdout).clients.map((c: { id: string }) => c.id),
        [clientId],
      );
      const rotated = await run(['keys', 'rotate', '--data', data], { DATABASE_URL: url });
      assert.equal(rotated.code, 0, rotated.stderr);
    });

    it('hides the password when it names the database', async () => {
      const withPassword = new URL(url);
      withPassword.password = 'hunter2';
      const result = await run(['migrate', '--data', data, '--database', withPassword.toString()]);
      assert.doesNotMatch(result.stdout + result.stderr, /hunter2/);
    });

    it('migrate and start refuse a schema newer than this build', async () => {
      await addFutureMigration(t.db);
      const migrated = await run(['migrate', '--data', data, '--database', url]);
      assert.equal(migrated.code, 1);
      assert.match(migrated.stderr, NEWER_SCHEMA);
      const started = await run(['start', '--port', '0', '--data', data, '--database', url]);
      assert.equal(started.code, 1);
      assert.match(started.stderr, NEWER_SCHEMA);
    });

    it('refuses a --database that is not a postgres:// URL', async () => {
      const result = await run(['migrate', '--data', data, '--database', 'mysql://localhost/db']);
      assert.equal(result.code, 2);
      assert.match(result.stderr, /must be a postgres:\/\/ URL/);
    });
  });
});
