import type { Compilable, CompiledQuery } from 'kysely';
import { isPostgres, registerPreparedStatement } from './database.js';
import type { Db } from './schema.js';

/**
 * Hot queries built and compiled by Kysely once per dialect, then run with new values.
 *
 * Kysely rebuilds a query's operation tree and SQL text on every call: about a sixth of the
 * main thread's time in a login or a token request (docs/performance.md, "Where the time goes").
 * A query whose shape is fixed needs that work once. Written here: the registry holds no
 * maintained package for it (kysely-params, which did this, is not there), and it is small.
 *
 * The builder is called with placeholders instead of values and must pass each one to Kysely
 * as a value, unchanged: no branching on it, no arithmetic, no JSON.stringify. Compiling checks
 * that every placeholder came out as one whole bound parameter and nothing else, so a builder
 * that visibly breaks the rule throws on its first call instead of running the wrong SQL (a guard,
 * not a proof: a change that leaves the placeholder as it was goes unseen). A query
 * with several shapes (say, public and confidential clients) takes a `shape` argument: each
 * shape is compiled once. On PostgreSQL the compiled text also runs as a named prepared statement
 * (storage/database.ts registerPreparedStatement): parsed once per connection, its plan kept.
 */
export function compiledQuery<A extends Record<string, unknown>, Row, S extends string = never>(
  build: (db: Db, args: A, shape: S) => Compilable<Row>,
): (db: Db, args: A, ...shape: [S] extends [never] ? [] : [S]) => Promise<Row[]> {
  const compiled = new Map<string, { query: CompiledQuery<Row>; slots: Slot[] }>();
  return async (db, args, ...rest) => {
    const shape = rest[0] as S;
    const key = `${isPostgres(db) ? 'pg' : 'sqlite'}:${shape ?? ''}`;
    let entry = compiled.get(key);
    if (!entry) {
      const query = build(db, placeholders<A>(), shape).compile();
      entry = { query, slots: slotsOf(query) };
      if (isPostgres(db)) registerPreparedStatement(query.sql);
      compiled.set(key, entry);
    }
    const parameters = entry.slots.map((slot) => ('arg' in slot ? args[slot.arg] : slot.value));
    return (await db.executeQuery<Row>({ ...entry.query, parameters })).rows;
  };
}

type Slot = { arg: string } | { value: unknown };

// Mixed case and control characters, so that common transformations (case, escaping) change it visibly.
const MARK = '\u0000Placeholder\u0001 ';

function placeholders<A>(): A {
  return new Proxy({}, { get: (_target, name) => `${MARK}${String(name)}` }) as A;
}

function slotsOf(query: CompiledQuery): Slot[] {
  if (query.sql.includes('\u0000')) throw new Error('compiledQuery: a placeholder reached the SQL text; pass it as a value.');
  return query.parameters.map((value) => {
    if (typeof value !== 'string' || !value.includes('\u0000')) return { value };
    if (!value.startsWith(MARK)) throw new Error('compiledQuery: a placeholder was changed; pass it to Kysely unchanged.');
    return { arg: value.slice(MARK.length) };
  });
}
