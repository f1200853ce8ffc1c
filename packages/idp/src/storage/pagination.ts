import { ServiceError } from '../errors.js';

/**
 * Cursor pagination for operators' listings (users, events): a cursor is the last row's sort
 * key, a time and an id, opaque to callers. Unlike an offset it stays correct while rows come and go.
 */
export function encodeCursor(at: number, id: string): string {
  return Buffer.from(JSON.stringify([at, id])).toString('base64url');
}

/** The sort key inside a cursor, or ERR_REQUEST_INVALID when it is not one this service made. */
export function decodeCursor(cursor: string): { at: number; id: string } {
  let key: unknown;
  try {
    key = JSON.parse(Buffer.from(cursor, 'base64url').toString());
  } catch {
    key = undefined;
  }
  if (!Array.isArray(key) || key.length !== 2 || !Number.isSafeInteger(key[0]) || typeof key[1] !== 'string')
    throw new ServiceError('ERR_REQUEST_INVALID', 'The cursor is not one this service returned.');
  return { at: key[0], id: key[1] };
}

/** A page size from 1 to `max`, or ERR_REQUEST_INVALID. */
export function checkPageSize(limit: number, max: number): number {
  if (!Number.isInteger(limit) || limit < 1 || limit > max)
    throw new ServiceError('ERR_REQUEST_INVALID', `The page size must be a whole number from 1 to ${max}.`);
  return limit;
}
