import { type Kysely, type Migration, type MigrationProvider, Migrator, PostgresAdapter, SqliteAdapter, sql } from 'kysely';
import { initialMigrations } from './migrations/0001-initial.js';
import { migrations0002 } from './migrations/0002-mfa.js';
import { migrations0003 } from './migrations/0003-delegation.js';
import { migrations0004 } from './migrations/0004-device-lifecycle.js';
import { migrations0005 } from './migrations/0005-mfa-change-current-factor.js';
import { migrations0006 } from './migrations/0006-code-reuse-revocation.js';
import { migrations0007 } from './migrations/0007-id-token-alg.js';
import { migrations0008 } from './migrations/0008-users-events.js';
import { migrations0009 } from './migrations/0009-webhooks.js';
import { migrations0010 } from './migrations/0010-recovery-codes.js';
import { migrations0011 } from './migrations/0011-oidc.js';
import { migrations0012 } from './migrations/0012-refresh-tokens.js';
import { migrations0013 } from './migrations/0013-passkeys.js';
import { migrations0014 } from './migrations/0014-held-sign-in.js';
import { migrations0015 } from './migrations/0015-spent-tokens.js';
import { migrations0016 } from './migrations/0016-console.js';
import { migrations0017 } from './migrations/0017-user-locale.js';
import { migrations0018 } from './migrations/0018-dpop.js';
import { migrations0019 } from './migrations/0019-dbsc.js';
import { migrations0020 } from './migrations/0020-upstream.js';
import { migrations0021 } from './migrations/0021-branding.js';
import { migrations0022 } from './migrations/0022-identity-name.js';
import { migrations0023 } from './migrations/0023-response-mode.js';
import { migrations0024 } from './migrations/0024-pushed-requests.js';
import { migrations0025 } from './migrations/0025-logout.js';
import { migrations0026 } from './migrations/0026-apis.js';
import { migrations0027 } from './migrations/0027-sms-rules.js';
import { migrations0028 } from './migrations/0028-resources.js';
import { migrations0029 } from './migrations/0029-introspection.js';
import { migrations0030 } from './migrations/0030-machine-clients.js';
import { migrations0031 } from './migrations/0031-consent.js';
import { migrations0032 } from './migrations/0032-roles-in-token.js';
import { migrations0034 } from './migrations/0034-client-registration.js';
import { migrations0035 } from './migrations/0035-device-authorization.js';
import { migrations0036 } from './migrations/0036-organizations.js';
import { migrations0037 } from './migrations/0037-organization-domains.js';
import { migrations0038 } from './migrations/0038-organization-admins.js';
import { migrations0039 } from './migrations/0039-user-external-ids.js';

/**
 * Versioned migrations, applied in name order. A migration never changes once released;
 * a change of schema is a new entry. Written with Kysely's schema builder only, so each
 * runs unchanged on SQLite and PostgreSQL.
 */
const migrations: Record<string, Migration> = {
  ...initialMigrations,
  ...migrations0002,
  ...migrations0003,
  ...migrations0004,
  ...migrations0005,
  ...migrations0006,
  ...migrations0007,
  ...migrations0008,
  ...migrations0009,
  ...migrations0010,
  ...migrations0011,
  ...migrations0012,
  ...migrations0013,
  ...migrations0014,
  ...migrations0015,
  ...migrations0016,
  ...migrations0017,
  ...migrations0018,
  ...migrations0019,
  ...migrations0020,
  ...migrations0021,
  ...migrations0022,
  ...migrations0023,
  ...migrations0024,
  ...migrations0025,
  ...migrations0026,
  ...migrations0027,
  ...migrations0028,
  ...migrations0029,
  ...migrations0030,
  ...migrations0031,
  ...migrations0032,
  ...migrations0034,
  ...migrations0035,
  ...migrations0036,
  ...migrations0037,
  ...migrations0038,
  ...migrations0039,
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

export const KNOWN_MIGRATIONS = Object.keys(migrations).sort();

/**
 * SQLSTATEs of Kysely's all-schema look-up meeting another schema changed meanwhile (see
 * migrate): a table (42P01), a schema (3F000) or a column (42703) dropped under it.
 */
const SCHEMA_DROPPED_MEANWHILE = new Set(['42P01', '3F000', '42703']);

/**
 * Brings the schema to the newest version this build knows (or, for the tests of a migration,
 * to `target`, one of KNOWN_MIGRATIONS). Refuses a database that has migrations this build
 * does not know (a newer release ran against it).
 */
export async function migrate(db: Kysely<any>, target?: string): Promise<string[]> {
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) return migrateOn(db, target);
  // Kysely's migrator takes no lock on SQLite (one connection per process is its lock), so
  // nodes started together on one empty data folder ran the same migrations side by side
  // ("table clients already exists"). When there is something to apply, BEGIN IMMEDIATE takes
  // the database's write lock first: another process waits for it (busy_timeout), then finds
  // the migrations applied. An up-to-date database is only read (a command beside a busy
  // service, or a backup, waits for no write lock).
  if (target === undefined && (await appliedNames(db)).length >= KNOWN_MIGRATIONS.length) return migrateOn(db, target);
  return db.connection().execute(async (connection) => {
    await sql`begin immediate`.execute(connection);
    try {
      const applied = await migrateOn(connection, target);
      await sql`commit`.execute(connection);
      return applied;
    } catch (error) {
      await sql`rollback`.execute(connection).catch(() => {});
      throw error;
    }
  });
}

async function migrateOn(db: Kysely<any>, target: string | undefined): Promise<string[]> {
  const migrator = new Migrator({ db, provider, ...(await migrationTableSchema(db)) });
  const unknown = await appliedButUnknown(db);
  if (unknown.length > 0) {
    throw new Error(`database schema is newer than this build (unknown migrations: ${unknown.join(', ')}); upgrade service-idp`);
  }
  for (let attempt = 1; ; attempt++) {
    const { error, results } = target === undefined ? await migrator.migrateToLatest() : await migrator.migrateTo(target);
    // Kysely looks for its migration table through an introspection of every schema's tables;
    // a schema dropped meanwhile by another client (another tenant, a test run beside this one)
    // fails that look-up with "relation", "schema" or "column does not exist". Nothing was
    // applied: try again, twice at most (a migration's own error comes back each time and is thrown).
    const applied = (results ?? []).some((r) => r.status === 'Success');
    if (error && !applied && SCHEMA_DROPPED_MEANWHILE.has((error as { code?: string }).code ?? '') && attempt < 3) continue;
    if (error) throw error;
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  }
}

/**
 * On PostgreSQL, the schema the tables go to (the first of search_path, usually public).
 * Kysely looks for its migration tables in every schema unless told which one, so another
 * schema's kysely_migration (a second application, or a test schema) would be taken for ours.
 */
async function migrationTableSchema(db: Kysely<any>): Promise<{ migrationTableSchema?: string }> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return {};
  const { rows } = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db);
  const schema = rows[0]?.schema;
  if (!schema) throw new Error('PostgreSQL has no current schema: the first schema of search_path must exist');
  return { migrationTableSchema: schema };
}

async function appliedButUnknown(db: Kysely<any>): Promise<string[]> {
  return (await appliedNames(db)).filter((name) => !KNOWN_MIGRATIONS.includes(name));
}

/** The migrations the database records as applied (none on a fresh database). */
async function appliedNames(db: Kysely<any>): Promise<string[]> {
  try {
    const rows = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
    return rows.rows.map((r) => r.name);
  } catch {
    return []; // no migration table yet: a fresh database
  }
}

/**
 * The advisory lock Kysely's migrator holds on PostgreSQL while it migrates (its PostgresAdapter's
 * LOCK_ID, not exported): one key for the whole database.
 */
const POSTGRES_MIGRATION_LOCK = 3853314791062309107n;

/**
 * Runs `work` in one transaction under the migration lock, for the set-up that must happen once
 * per database however many nodes start together (the first signing keys). PostgreSQL: the
 * migrator's advisory lock, as a transaction lock (released at commit or rollback, never left
 * on a pooled connection), so it also waits for a migration running elsewhere. SQLite: the
 * database's write lock, taken by the transaction's first statement (a write that changes
 * nothing), so another process waits for it (busy_timeout). Call it after `migrate`.
 */
export async function withMigrationLock<T>(db: Kysely<any>, work: (tx: Kysely<any>) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (tx) => {
    if (db.getExecutor().adapter instanceof PostgresAdapter)
      await sql`select pg_advisory_xact_lock(${sql.lit(POSTGRES_MIGRATION_LOCK)})`.execute(tx);
    else await sql`update kysely_migration_lock set is_locked = is_locked where id = 'migration_lock'`.execute(tx);
    return work(tx);
  });
}

/** Each migration this build knows, applied or not, and any the database has that this build does not know; changes nothing. */
export interface MigrationStatus {
  applied: Array<{ name: string; at: number }>;
  pending: string[];
  /** Applied by a newer release: `migrate` refuses such a database. */
  unknown: string[];
}

export async function migrationStatus(db: Kysely<any>): Promise<MigrationStatus> {
  const migrator = new Migrator({ db, provider, ...(await migrationTableSchema(db)) });
  const known = await migrator.getMigrations();
  return {
    applied: known.flatMap((m) => (m.executedAt ? [{ name: m.name, at: m.executedAt.getTime() }] : [])),
    pending: known.filter((m) => !m.executedAt).map((m) => m.name),
    unknown: await appliedButUnknown(db),
  };
}
