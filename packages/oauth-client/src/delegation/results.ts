/** The checks on a delegation call's input (before any request) and on its sealed result. */
import type { DelegationDevice, DelegationOp, MfaChangeStep } from 'service-protocol';
import { DelegationRequestError, DelegationResponseError } from './errors.js';
import { MFA_METHODS, type MfaMethod } from './options.js';

export function inputError(message: string): DelegationRequestError {
  return new DelegationRequestError(message, { code: 'ERR_DELEGATION_INPUT_INVALID' });
}

export function requireInput(name: string, value: unknown, hint = ''): string {
  if (typeof value !== 'string' || value.trim() === '') throw inputError(`${name} must be a non-empty string${hint}`);
  return value;
}

export function method(value: unknown): MfaMethod {
  if (typeof value !== 'string' || !MFA_METHODS.includes(value)) {
    throw inputError(`mfaMethod must be one of ${MFA_METHODS.map((m) => `'${m}'`).join(', ')}`);
  }
  return value as MfaMethod;
}

export function isDevice(value: unknown): value is DelegationDevice {
  const d = value as Record<string, unknown> | null;
  return (
    typeof d === 'object' &&
    d !== null &&
    ['id', 'name', 'browser', 'os'].every((k) => typeof d[k] === 'string') &&
    Number.isSafeInteger(d.created_at) &&
    (d.last_used_at === null || Number.isSafeInteger(d.last_used_at))
  );
}

/** Only the documented fields of a device, nothing else from the answer. */
export const copyDevice = ({ id, name, browser, os, created_at, last_used_at }: DelegationDevice): DelegationDevice => ({
  id,
  name,
  browser,
  os,
  created_at,
  last_used_at,
});

export function invalidResult(op: DelegationOp): DelegationResponseError {
  return new DelegationResponseError(`delegation answer to ${op} has a result of the wrong shape`, { status: 200 });
}

/** A sealed MFA-change step, its status one of `allowed`, its optional fields strings. */
export function changeStep(result: Record<string, unknown>, allowed: MfaChangeStep['status'][], op: DelegationOp): MfaChangeStep {
  const status = result.status as MfaChangeStep['status'];
  if (typeof result.session_id !== 'string' || !allowed.includes(status)) throw invalidResult(op);
  const step: MfaChangeStep = pick(
    result,
    { session_id: result.session_id, status },
    ['message', 'current_method', 'otpauth_uri', 'secret'],
    op,
  );
  // A user's method in force may also be a passkey, which a backend cannot enroll (so MfaMethod leaves it out).
  if (step.current_method !== undefined && ![...MFA_METHODS, 'passkey'].includes(step.current_method)) throw invalidResult(op);
  return step;
}

/** Copies the checked fields and the optional string fields; nothing else from the answer. */
export function pick<T extends object>(result: Record<string, unknown>, base: T, optional: string[], op: DelegationOp): T {
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const name of optional) {
    const value = result[name];
    if (value === undefined) continue;
    if (typeof value !== 'string') throw invalidResult(op);
    out[name] = value;
  }
  return out as T;
}
