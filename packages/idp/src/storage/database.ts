import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { Database, Db } from './schema.js';

export type { Database, Db } from './schema.js';

/**
 * Opens the embedded SQLite database. WAL and a busy timeout let the CLI write while the
 * service runs; `:memory:` is accepted for tests.
 */
export function openSqlite(path: string): Db {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = new SQLite(path);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  cachePreparedStatements(sqlite);
  return new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
}

/**
 * Kysely prepares every query anew; preparing was about a tenth of a login's CPU. Queries are
 * parameterised, so the SQL texts are few and a statement can be reused (better-sqlite3 runs
 * each to completion synchronously). Bounded in case a caller builds SQL dynamically.
 */
const STATEMENT_CACHE_SIZE = 500;
function cachePreparedStatements(sqlite: SQLite.Database): void {
  const prepare = sqlite.prepare.bind(sqlite);
  const cache = new Map<string, SQLite.Statement>();
  sqlite.prepare = ((source: string) => {
    let statement = cache.get(source);
    if (!statement) {
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.clear();
      statement = prepare(source);
      cache.set(source, statement);
    }
    return statement;
  }) as typeof sqlite.prepare;
}
