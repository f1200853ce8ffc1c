import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresAdapter, PostgresDialect, SqliteDialect } from 'kysely';
import type pg from 'pg';
import { DB_CONNECT_TIMEOUT_MS, DB_IDLE_TIMEOUT_MS, SQLITE_BACKSTOP_CHECKPOINT_PAGES, SQLITE_CHECKPOINT_INTERVAL_MS } from '../defaults.js';

const require = createRequire(import.meta.url);

import type { Database, Db } from './schema.js';

/** Where the data lives: PostgreSQL when a URL is given, else SQLite in the data folder. */
export interface DatabaseConfig {
  dataDir: string;
  /** postgres://… (from --database or DATABASE_URL); undefined selects SQLite. */
  databaseUrl: string | undefined;
  /** PostgreSQL only: connections per node. */
  dbPoolSize: number;
  /** PostgreSQL only: the server cancels a statement running longer than this. */
  dbStatementTimeoutMs: number;
}

/**
 * Opens the configured database. The caller runs `migrate` and owns `destroy()`. A one-shot
 * command passes `checkpointWorker: false` (SQLite): it writes little and exits, and the
 * worker's start-up would cost it more than its whole query.
 */
export function openDatabase(config: DatabaseConfig, options: { searchPath?: string; checkpointWorker?: boolean } = {}): Db {
  return config.databaseUrl
    ? openPostgres(config, options)
    : openSqlite(join(config.dataDir, 'service.db'), { checkpointWorker: options.checkpointWorker ?? true });
}

/** What `openDatabase` opens, for messages: the SQLite path, or the URL without its password. */
export function describeDatabase(config: Pick<DatabaseConfig, 'dataDir' | 'databaseUrl'>): string {
  if (!config.databaseUrl) return join(config.dataDir, 'service.db');
  try {
    const url = new URL(config.databaseUrl);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return 'postgres (unparsable URL)';
  }
}

/**
 * True on PostgreSQL. The hot paths fold their statements into one there (data-modifying CTEs,
 * one network round trip each); SQLite has no data-modifying CTEs and runs in process, where a
 * further statement costs microseconds, not a round trip.
 */
export const isPostgres = (db: Db): boolean => db.getExecutor().adapter instanceof PostgresAdapter;

/** A statement refused by a unique index (SQLite's constraint code, PostgreSQL's SQLSTATE 23505): the row another writer won. */
export const isUniqueViolation = (error: unknown): boolean =>
  constraintCode(error) === 'SQLITE_CONSTRAINT_UNIQUE' || constraintCode(error) === '23505';

/** A statement refused by a foreign key (SQLite's constraint code, PostgreSQL's SQLSTATE 23503): the row it names does not exist. */
export const isForeignKeyViolation = (error: unknown): boolean =>
  constraintCode(error) === 'SQLITE_CONSTRAINT_FOREIGNKEY' || constraintCode(error) === '23503';

const constraintCode = (error: unknown) => (error as { code?: unknown } | null)?.code;

/** int8 (BIGINT) columns hold epoch milliseconds, safe integers: read them as numbers, as SQLite does. */
const INT8_OID = 20;
const pgTypesOf = (types: typeof pg.types) => ({
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary'
      ? (value: string) => Number(value)
      : types.getTypeParser(oid, format)) as typeof types.getTypeParser,
});

/**
 * PostgreSQL through a pg Pool. A connection that drops is discarded by the pool (never
 * reused) and a new one is opened on the next query, so a node recovers by itself once the
 * database is back; meanwhile queries fail within DB_CONNECT_TIMEOUT_MS (mapped to 503).
 */
export function openPostgres(config: DatabaseConfig, options: { searchPath?: string } = {}): Db {
  // Loaded only for PostgreSQL: a SQLite service or CLI command never pays for the driver.
  const { Pool, types } = require('pg') as typeof pg;
  const pool = new Pool({
    connectionString: config.databaseUrl,
    max: config.dbPoolSize,
    connectionTimeoutMillis: DB_CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: DB_IDLE_TIMEOUT_MS,
    statement_timeout: config.dbStatementTimeoutMs,
    keepAlive: true,
    types: pgTypesOf(types),
    ...(options.searchPath ? { options: `-c search_path=${options.searchPath}` } : {}),
  });
  // A connection that dies (a restart, a network cut) emits 'error': the pool reports idle
  // ones here and drops them; a checked-out one also fails its query, and the pool drops it
  // on release because it is no longer queryable. Unheard, either event would end the process.
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    client.on('error', () => {});
    runPreparedByName(client);
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  pools.set(db, pool);
  return db;
}

const pools = new WeakMap<Db, pg.Pool>();

/**
 * The pool's use right now (the metrics page): connections open, idle, queries waiting for
 * one, and the most it opens. Undefined on SQLite, which has one in-process connection.
 */
export function poolUse(db: Db): { total: number; idle: number; waiting: number; max: number } | undefined {
  const pool = pools.get(db);
  return pool && { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: pool.options.max ?? 10 };
}

/**
 * SQL texts run as named prepared statements on PostgreSQL (storage/compiled.ts registers its
 * fixed-shape hot queries). Sent unnamed, every call is parsed and planned anew: measured
 * through the server log, the login's five-table read spent 0.3 ms parsing and 1.2 ms planning
 * for 0.17 ms of execution (docs/performance.md). Named, each connection parses it once and
 * PostgreSQL may keep a generic plan after a few executions. Only registered texts are named:
 * a statement whose text varies (lists, batches) would leave one prepared statement per text
 * on every connection.
 */
const preparedNames = new Map<string, string>();
let preparedGeneration = 0;

export function registerPreparedStatement(sql: string): void {
  if (!preparedNames.has(sql)) preparedNames.set(sql, `svc_${preparedNames.size}_0`);
}

/** SQLSTATE 0A000 "cached plan must not change result type": a column was added or changed under a prepared `select *`. */
const PLAN_CHANGED = '0A000';

function runPreparedByName(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (config: unknown, values?: unknown) => Promise<unknown>;
  (client as { query: unknown }).query = (text: unknown, values?: unknown, ...rest: unknown[]) => {
    const name = typeof text === 'string' && rest.length === 0 ? preparedNames.get(text) : undefined;
    if (name === undefined) return (query as (...args: unknown[]) => unknown)(text, values, ...rest);
    return query({ name, text, values }).catch((error: { code?: string }) => {
      if (error?.code !== PLAN_CHANGED) throw error;
      // A migration (another node's, during a rolling deploy) changed a table under the
      // statement: prepare it again under a new name, once, on this and every connection.
      preparedGeneration += 1;
      const renamed = `${name.slice(0, name.lastIndexOf('_'))}_${preparedGeneration}`;
      preparedNames.set(text as string, renamed);
      return query({ name: renamed, text, values });
    });
  };
}

/**
 * True for errors that mean "the database cannot be reached right now" rather than a bug:
 * refused or dropped connections, connect timeouts, a server shutting down or starting up,
 * too many connections, a statement timeout, a busy SQLite file. Requests that hit one are
 * answered 503 ERR_UNAVAILABLE.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth += 1) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (NETWORK_ERRORS.has(code) || code.startsWith('08') || PG_UNAVAILABLE.has(code) || code.startsWith('SQLITE_BUSY')) return true;
    }
    if (PG_CLIENT_MESSAGES.some((m) => e instanceof Error && e.message.includes(m))) return true;
  }
  return false;
}

const NETWORK_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);
/** SQLSTATE: admin/crash shutdown, cannot connect now, too many connections, statement timeout (query_canceled). */
const PG_UNAVAILABLE = new Set(['57P01', '57P02', '57P03', '53300', '57014']);
/** Errors pg raises itself, without a code. */
const PG_CLIENT_MESSAGES = [
  'timeout exceeded when trying to connect',
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'Connection ended',
];

/**
 * Opens the embedded SQLite database. WAL and a busy timeout let the CLI write while the
 * service runs; `:memory:` is accepted for tests. Without the checkpoint worker (a one-shot
 * command), SQLite checkpoints as it does by default: past 1000 pages, and at the last close.
 */
export function openSqlite(path: string, { checkpointWorker = true }: { checkpointWorker?: boolean } = {}): Db {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = new SQLite(path);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  cachePreparedStatements(sqlite);
  if (path !== ':memory:' && checkpointWorker) checkpointOffMainThread(sqlite, path);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  sqliteHandles.set(db, sqlite);
  return db;
}

/** The better-sqlite3 connection behind a Db opened by openSqlite (storage/group-commit.ts writes through it). */
const sqliteHandles = new WeakMap<Db, SQLite.Database>();
export const sqliteHandleOf = (db: Db): SQLite.Database | undefined => sqliteHandles.get(db);

/**
 * WAL checkpoints copy the log into the database file and fsync it: 15 ms or more on this
 * machine's disk, about every 150 logins, and SQLite runs them inside the commit that crosses
 * the threshold, on the event loop, so every request in flight waited (p99). A worker thread
 * with its own connection checkpoints instead (PASSIVE: it never blocks writers). The main
 * connection keeps a high threshold as a backstop should the worker stop. Sizes and interval:
 * defaults.ts.
 */
function checkpointOffMainThread(sqlite: SQLite.Database, path: string): void {
  sqlite.pragma(`wal_autocheckpoint = ${SQLITE_BACKSTOP_CHECKPOINT_PAGES}`);
  const worker = new Worker(CHECKPOINTER, {
    eval: true,
    workerData: { module: require.resolve('better-sqlite3'), path, intervalMs: SQLITE_CHECKPOINT_INTERVAL_MS },
  });
  worker.unref();
  // A worker that failed to start leaves the backstop in charge; nothing else depends on it.
  worker.on('error', () => {});
  const close = sqlite.close.bind(sqlite);
  sqlite.close = () => {
    void worker.terminate();
    return close();
  };
}

// Plain CommonJS so the worker needs no loader.
const CHECKPOINTER = `
const { workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.path, { fileMustExist: true });
setInterval(() => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {}
}, workerData.intervalMs);
`;

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
