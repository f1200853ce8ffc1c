/**
 * The result side of every operation: failures as the library returns them, the fixed ones
 * several operations share, and the fields read off a service answer. No method throws; `guard`
 * is what makes that so.
 */
import type { FailureResult, FailureStatus } from './types.js';

export function failure(status: FailureStatus, message: string): FailureResult {
  return { status, message };
}

export const invalid = (message: string): FailureResult => failure('INVALID_REQUEST', message);
export const invalidEmail = (): FailureResult => failure('INVALID_EMAIL', 'Enter a valid email address');
export const badOtp = (): FailureResult => failure('INVALID_OTP', 'The code is 6 digits');
export const noPendingLogin = (): FailureResult =>
  failure('SESSION_EXPIRED', 'No login in progress for this user; call authenticate() again');
export const unexpected = (): FailureResult => failure('SERVICE_ERROR', 'Unexpected response from the service');
export const notInitialized = (): FailureResult => failure('NOT_INITIALIZED', 'Call init() first');

export function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Runs an operation so that it can only resolve: an unexpected exception becomes SERVICE_ERROR.
 * `flag` then decides which results get `success: false` (the operations whose result has `success`).
 */
export async function guard<T>(operation: () => Promise<T | FailureResult>, flag?: (result: object) => boolean): Promise<T> {
  let result: T | FailureResult;
  try {
    result = await operation();
  } catch (error) {
    result = failure('SERVICE_ERROR', `Unexpected error: ${reasonOf(error)}`);
  }
  return (flag?.(result as object) ? { ...result, success: false } : result) as T;
}

/** For the core operations whose result has `success`: a result without it is a failure. */
export const lacksSuccess = (result: object): boolean => !('success' in result);

export function messageOf(body: Record<string, unknown>): string {
  return typeof body.message === 'string' ? body.message : '';
}

/** `to` with the fields `keys` of an answer that have the type `type` (an answer's optional fields). */
export function withTyped<T extends object>(to: T, body: Record<string, unknown>, type: 'string' | 'number', ...keys: string[]): T {
  for (const key of keys) if (typeof body[key] === type) (to as Record<string, unknown>)[key] = body[key];
  return to;
}

/** The recovery codes an answer carries (shown once: an enrollment or a regeneration), as a spreadable field. */
export function codesOf(body: Record<string, unknown>): { recoveryCodes?: string[] } {
  return Array.isArray(body.recoveryCodes) ? { recoveryCodes: body.recoveryCodes } : {};
}

/** A success message, and why the device could not be remembered when that went wrong. */
export function withNote(message: string, problem: string | undefined): string {
  return problem === undefined ? message : `${message} This device could not be remembered: ${problem}.`;
}
