import type SQLite from 'better-sqlite3';
import type { CompiledQuery } from 'kysely';
import { sqliteHandleOf } from './database.js';
import type { Db } from './schema.js';

/** Runs one compiled statement on the batch's connection: its rows (none for a statement without RETURNING). */
export type RunStatement = (query: CompiledQuery) => unknown[];

/**
 * Group commit on SQLite (issue 40): the writes that arrive within one turn of the event loop
 * commit together, each in a savepoint of its own, and each caller is answered only after that
 * one COMMIT. A COMMIT was a sixth of a trusted-device login's main-thread time
 * (docs/performance.md), and concurrent logins each paid it.
 *
 * What a caller sees is what a transaction of its own gives: its work runs synchronously and
 * alone (better-sqlite3 is synchronous, so no other statement interleaves), a throw rolls back
 * to its savepoint and only its own writes, and its promise settles after the commit, so an
 * answer sent then is durable (packages/idp/test/events/crash.test.ts). If the COMMIT itself
 * fails, every caller of the batch gets the error and nothing of the batch is written.
 *
 * Kysely shares the connection: while one of its transactions is open (across awaits), the
 * batch waits for the next turn rather than joining it.
 */
export interface GroupCommit {
  run<T>(work: (run: RunStatement) => T): Promise<T>;
}

interface Pending {
  work: (run: RunStatement) => unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

const groups = new WeakMap<SQLite.Database, GroupCommit>();

/** The connection's group commit, or undefined where there is none (PostgreSQL: one statement per login already). */
export function groupCommitOf(db: Db): GroupCommit | undefined {
  const sqlite = sqliteHandleOf(db);
  if (!sqlite) return undefined;
  let group = groups.get(sqlite);
  if (!group) {
    group = createGroupCommit(sqlite);
    groups.set(sqlite, group);
  }
  return group;
}

function createGroupCommit(sqlite: SQLite.Database): GroupCommit {
  let queue: Pending[] = [];
  let scheduled = false;
  const runStatement: RunStatement = (query) => {
    const statement = sqlite.prepare(query.sql);
    const parameters = query.parameters as unknown[];
    if (statement.reader) return statement.all(parameters);
    statement.run(parameters);
    return [];
  };
  // Prepared like any statement (cached by storage/database.ts), so drivers' counters see them.
  const control = (sql: string) => sqlite.prepare(sql).run();
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(flush);
  };
  function flush() {
    scheduled = false;
    if (queue.length === 0) return;
    // A Kysely transaction is open on this connection: not inside it; after it.
    if (sqlite.inTransaction) return schedule();
    const batch = queue;
    queue = [];
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      control('BEGIN');
      for (const item of batch) {
        control('SAVEPOINT one_write');
        try {
          outcomes.push({ ok: true, value: item.work(runStatement) });
          control('RELEASE one_write');
        } catch (error) {
          control('ROLLBACK TO one_write');
          control('RELEASE one_write');
          outcomes.push({ ok: false, error });
        }
      }
      control('COMMIT');
    } catch (error) {
      if (sqlite.inTransaction) control('ROLLBACK');
      for (const item of batch) item.reject(error);
      return;
    }
    batch.forEach((item, i) => {
      const outcome = outcomes[i] as (typeof outcomes)[number];
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    });
  }
  return {
    run<T>(work: (run: RunStatement) => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
        schedule();
      });
    },
  };
}
