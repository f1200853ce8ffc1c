import { sql } from 'kysely';
import { SWEEP_BATCH_ROWS, SWEEP_INTERVAL_SECONDS } from '../defaults.js';
import { isPostgres } from './database.js';
import type { Database, Db } from './schema.js';

/**
 * Runs `sweep` every SWEEP_INTERVAL_SECONDS. Expired rows are already refused by every
 * query; sweeping only keeps tables small. Returns the stop function.
 */
export function startSweeper(sweep: (now: number) => Promise<void>, now: () => number, onError: (error: unknown) => void): () => void {
  const timer = setInterval(() => {
    sweep(now()).catch(onError);
  }, SWEEP_INTERVAL_SECONDS * 1000);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Deletes the rows of `table` whose `column` is before `cutoff`, SWEEP_BATCH_ROWS per
 * statement, yielding to the event loop between statements: better-sqlite3 runs a statement
 * synchronously, so one unbounded delete stalls every request in flight. Rows are picked by
 * their physical id (SQLite `rowid`, PostgreSQL `ctid`), which every table has whatever its
 * key; the condition is checked again by the delete itself. Returns how many rows went.
 */
export async function deleteBefore<T extends keyof Database & string>(
  db: Db,
  table: T,
  column: keyof Database[T] & string,
  cutoff: number,
  batchRows = SWEEP_BATCH_ROWS,
): Promise<number> {
  const rowId = sql.raw(isPostgres(db) ? 'ctid' : 'rowid');
  let total = 0;
  for (;;) {
    const result =
      await sql`delete from ${sql.table(table)} where ${sql.ref(column)} < ${cutoff} and ${rowId} in (select ${rowId} from ${sql.table(table)} where ${sql.ref(column)} < ${cutoff} limit ${batchRows})`.execute(
        db,
      );
    const deleted = Number(result.numAffectedRows ?? 0);
    total += deleted;
    if (deleted < batchRows) return total;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
