import { chmodSync, existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ServiceConfig } from '../config.js';
import { type Command, UsageError } from './command.js';

/**
 * backup and restore of the embedded SQLite database (docs/operations.md, Backups). Both go
 * through SQLite's online backup API (better-sqlite3's `backup`): a consistent copy, taken while
 * the service writes. A copy is checked by opening it again before it is trusted: integrity_check
 * and the migrations table. PostgreSQL is backed up with its own tools (pg_dump, pg_restore).
 */

async function sqlite() {
  return (await import('better-sqlite3')).default;
}

/** The SQLite file, or a one-line refusal for a PostgreSQL service. */
async function sqlitePath(config: ServiceConfig, command: 'backup' | 'restore'): Promise<string> {
  const { describeDatabase } = await import('../storage/database.js');
  if (config.databaseUrl)
    throw new UsageError(
      `${command} is for the embedded SQLite database; ${describeDatabase(config)} is PostgreSQL: use ${
        command === 'backup' ? 'pg_dump --format=custom' : 'pg_restore'
      } (docs/operations.md, Backups)`,
    );
  return describeDatabase(config);
}

/**
 * Opens `file` read-only and checks it is a whole service database this build can run:
 * integrity_check, the migrations table, no migration of a newer release. Returns its migrations.
 */
async function checkCopy(file: string): Promise<string[]> {
  const [SQLite, { KNOWN_MIGRATIONS }] = await Promise.all([sqlite(), import('../storage/migrations.js')]);
  const notOurs = (why: string) => new Error(`${file} is not a service-idp database (${why})`);
  let db: InstanceType<typeof SQLite>;
  try {
    db = new SQLite(file, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw (error as { code?: string }).code === 'SQLITE_CANTOPEN' ? new Error(`cannot open ${file}`) : notOurs('not SQLite');
  }
  try {
    let integrity: string;
    try {
      integrity = String(db.pragma('integrity_check', { simple: true }));
    } catch {
      throw notOurs('not SQLite');
    }
    if (integrity !== 'ok') throw notOurs(`integrity_check: ${integrity}`);
    const table = db.prepare("select 1 from sqlite_master where type = 'table' and name = 'kysely_migration'").get();
    if (!table) throw notOurs('no migrations table');
    const names = (db.prepare('select name from kysely_migration order by name').all() as Array<{ name: string }>).map((r) => r.name);
    if (names.length === 0) throw notOurs('no migration applied');
    const newer = names.filter((name) => !KNOWN_MIGRATIONS.includes(name));
    if (newer.length > 0) throw new Error(`${file} is from a newer service-idp (migrations ${newer.join(', ')}): upgrade first`);
    return names;
  } finally {
    db.close();
  }
}

const backup: Command = {
  name: 'backup',
  usage: `  service-idp backup FILE [--force]
      An online copy of the SQLite database (the service may run), checked by opening it again
      (integrity_check, the migrations table). --force replaces an existing FILE. Keep the data
      folder's server-secret with it: the copy is useless without it. PostgreSQL: pg_dump.
`,
  flags: ['force'],
  async run({ operands: [target], values, config }, io) {
    if (!target) throw new UsageError('usage: service-idp backup FILE');
    const file = resolve(target);
    const source = await sqlitePath(config, 'backup');
    if (!existsSync(source)) throw new UsageError(`no database in ${config.dataDir} to back up`);
    if (file === source || file.startsWith(`${source}-`))
      throw new UsageError(`${file} is the database itself: back it up to another file`);
    if (existsSync(file) && !values.force) throw new UsageError(`${file} exists: give another name, or --force to replace it`);
    const SQLite = await sqlite();
    const partial = `${file}.partial`;
    rmSync(partial, { force: true });
    // The copy holds every address and keyed secret: readable by its owner only (0600), made so
    // before SQLite writes a byte into it (its journal takes the same mode), whatever the umask.
    writeFileSync(partial, '', { mode: 0o600, flag: 'wx' });
    chmodSync(partial, 0o600);
    const db = new SQLite(source, { fileMustExist: true, timeout: 5000 });
    try {
      await db.backup(partial);
    } finally {
      db.close();
    }
    try {
      // One self-contained file: no -wal beside the copy.
      const copy = new SQLite(partial, { fileMustExist: true });
      copy.pragma('journal_mode = DELETE');
      copy.close();
      const migrations = await checkCopy(partial);
      renameSync(partial, file);
      io.out(
        `Backed up ${source} to ${file} (${migrations.length} migrations, integrity ok). Keep ${join(config.dataDir, 'server-secret')} with it.\n`,
      );
    } finally {
      rmSync(partial, { force: true });
    }
    return 0;
  },
};

const restore: Command = {
  name: 'restore',
  usage: `  service-idp restore FILE [--force]
      Replaces the SQLite database with a copy made by backup, after checking it (integrity,
      migrations of this release or older). Refused while a service or command has the
      database open; replacing an existing database needs --force, and keeps it beside as
      service.db.replaced-TIME. The data folder must hold the server-secret the copy was made
      with. PostgreSQL: pg_restore.
`,
  flags: ['force'],
  async run({ operands: [source], values, config }, io) {
    if (!source) throw new UsageError('usage: service-idp restore FILE');
    const file = resolve(source);
    const target = await sqlitePath(config, 'restore');
    const migrations = await checkCopy(file);
    const secret = join(config.dataDir, 'server-secret');
    if (!existsSync(secret))
      throw new UsageError(`restore needs ${secret}, the server secret of the service the copy was made from: copy it there first`);
    const present = existsSync(target);
    if (present && !values.force)
      throw new UsageError(`${target} exists: restore replaces it only with --force (the replaced database is kept beside it)`);
    const SQLite = await sqlite();
    // The copy is made whole beside the database first, then swapped in by a rename.
    const incoming = `${target}.restoring`;
    rmSync(incoming, { force: true });
    const from = new SQLite(file, { readonly: true, fileMustExist: true });
    try {
      await from.backup(incoming);
    } finally {
      from.close();
    }
    let kept: string | undefined;
    try {
      if (present) {
        // In use: a connection in exclusive locking mode is refused while any other has the file open.
        const current = new SQLite(target, { fileMustExist: true, timeout: 200 });
        try {
          current.pragma('locking_mode = EXCLUSIVE');
          current.exec('BEGIN EXCLUSIVE; COMMIT');
          current.pragma('wal_checkpoint(TRUNCATE)');
        } catch (error) {
          if ((error as { code?: string }).code?.startsWith('SQLITE_BUSY'))
            throw new Error(`${target} is in use (a running service-idp or command): stop it, then restore`);
          throw error;
        } finally {
          current.close();
        }
        kept = `${target}.replaced-${new Date().toISOString().replace(/[:.]/g, '-')}`;
        renameSync(target, kept);
        for (const suffix of ['-wal', '-shm']) rmSync(`${target}${suffix}`, { force: true });
      }
      renameSync(incoming, target);
    } finally {
      rmSync(incoming, { force: true });
    }
    io.out(
      `Restored ${file} to ${target} (${migrations.length} migrations).${kept ? ` The database it replaced is kept as ${kept}.` : ''} The next start applies any newer migrations.\n`,
    );
    return 0;
  },
};

export const backups: Command[] = [backup, restore];
