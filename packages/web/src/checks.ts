/** The checks the operations run on their input before any request. */
import { isValidEmail, MfaMethod, PKCE_CHALLENGE_PATTERN } from 'service-protocol';

export const MFA_METHODS: readonly string[] = Object.values(MfaMethod);

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

export function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

export function isEmail(value: unknown): value is string {
  return typeof value === 'string' && isValidEmail(value);
}

export function isMfaMethod(value: unknown): value is MfaMethod {
  return MFA_METHODS.includes(value as string);
}

/** A PKCE challenge that is not S256 (RFC 9700 2.1.1: S256 only), or a method without a challenge. */
export function isBadPkce(codeChallenge: unknown, method: unknown): boolean {
  return codeChallenge === undefined
    ? method !== undefined
    : typeof codeChallenge !== 'string' || !PKCE_CHALLENGE_PATTERN.test(codeChallenge) || (method ?? 'S256') !== 'S256';
}

/** The service's base URL without a trailing slash, or undefined when it is not an http(s) URL. */
export function normalizeBaseUrl(value: unknown): string | undefined {
  try {
    const url = new URL(typeof value === 'string' ? value : '?');
    if (/^https?:$/.test(url.protocol)) return (url.origin + url.pathname).replace(/\/+$/, '');
  } catch {}
}
