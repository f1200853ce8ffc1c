import { type SqlBool, sql } from 'kysely';
import { ServiceError } from '../errors.js';

/**
 * The characters no operator's filter, cursor or query parameter may hold: C0 controls (NUL
 * included), DEL and the C1 controls, and the Unicode line and paragraph separators. A NUL
 * reached SQLite's LIKE as the end of the pattern, so `%\0zzz%` matched every address.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this pattern's purpose.
export const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** A UTF-16 surrogate not in a pair (with the `u` flag, a pair is one code point and does not match). */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * The one rule for the text of an operator's query (admin API query parameters, the CLI's
 * filters): no control character and well-formed Unicode (no lone surrogate), or
 * ERR_REQUEST_INVALID naming the parameter.
 */
export function checkQueryText(name: string, value: string): string {
  if (CONTROL_CHARACTERS.test(value))
    throw new ServiceError('ERR_REQUEST_INVALID', `The query parameter "${name}" contains a control character.`);
  if (LONE_SURROGATE.test(value))
    throw new ServiceError('ERR_REQUEST_INVALID', `The query parameter "${name}" is not well-formed Unicode.`);
  return value;
}

/** Longest cursor this service makes: a 15-digit time and an id of up to 100 characters, in JSON, in base64url. */
export const CURSOR_MAX_LENGTH = 200;

/**
 * Cursor pagination for operators' listings (users, events): a cursor is the last row's sort
 * key, a time and an id, opaque to callers. Unlike an offset it stays correct while rows come and go.
 */
export function encodeCursor(at: number, id: string): string {
  return Buffer.from(JSON.stringify([at, id])).toString('base64url');
}

/**
 * The sort key inside a cursor, or ERR_REQUEST_INVALID when it is not one this service made:
 * only the exact encoding `encodeCursor` gives is taken (no padding, no stray or extra
 * characters, no other spelling of the same JSON), of a non-negative safe integer and an id
 * without control characters.
 */
export function decodeCursor(cursor: string): { at: number; id: string } {
  const refused = () => new ServiceError('ERR_REQUEST_INVALID', 'The cursor is not one this service returned.');
  if (cursor.length > CURSOR_MAX_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw refused();
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString());
  } catch {
    throw refused();
  }
  if (!Array.isArray(key) || key.length !== 2 || !Number.isSafeInteger(key[0]) || key[0] < 0 || typeof key[1] !== 'string') throw refused();
  const [at, id] = key as [number, string];
  if (id.length === 0 || CONTROL_CHARACTERS.test(id) || LONE_SURROGATE.test(id) || encodeCursor(at, id) !== cursor) throw refused();
  return { at, id };
}

/** A page size from 1 to `max`, or ERR_REQUEST_INVALID. */
export function checkPageSize(limit: number, max: number): number {
  if (!Number.isInteger(limit) || limit < 1 || limit > max)
    throw new ServiceError('ERR_REQUEST_INVALID', `The page size must be a whole number from 1 to ${max}.`);
  return limit;
}

/** A page request of an operator's listing: the previous page's nextCursor, and a page size. */
export interface PageQuery {
  cursor?: string;
  limit: number;
}

/** Where a page of rows ordered by (created_at, id) starts: after this row. */
export type PageStart = { at: number; id: string } | undefined;

/** The condition "after this row" of a one-table listing ordered by created_at, then id. */
export const afterRow = (after: { at: number; id: string }) =>
  sql<SqlBool>`(created_at > ${after.at} or (created_at = ${after.at} and id > ${after.id}))`;

/**
 * One page of a listing ordered by (createdAt, id), as the users and events lists page: the
 * cursor checked (decodeCursor), at most `limit` rows (1 to `max`), and the next page's cursor
 * when the page is full (null: the last page).
 */
export async function keysetPage<T extends { createdAt: number; id: string }>(
  query: PageQuery,
  max: number,
  rows: (after: PageStart, limit: number) => Promise<T[]>,
): Promise<{ items: T[]; nextCursor: string | null }> {
  const limit = checkPageSize(query.limit, max);
  const items = await rows(query.cursor === undefined ? undefined : decodeCursor(query.cursor), limit);
  const last = items.at(-1);
  return { items, nextCursor: items.length === limit && last ? encodeCursor(last.createdAt, last.id) : null };
}
