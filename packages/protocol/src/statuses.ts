/**
 * Statuses returned by the browser library. The first group is the spec's; the second is
 * ours, for failures the spec leaves open (documented in docs/protocol.md).
 */
const STATUSES = [
  // spec
  'INITIALIZED',
  'SUCCESS',
  'OTP_NEEDED',
  'MFA_REQUIRED',
  'INVALID_EMAIL',
  'DEVICE_REGISTERED',
  'MFA_ENROLLMENT_NEEDED',
  'FINALIZE_REGISTRATION_NEEDED',
  'MFA_INITIATED',
  // ours: a step
  'UPSTREAM_REQUIRED',
  // ours: failures
  'NOT_INITIALIZED',
  'INVALID_API_KEY',
  'INVALID_REQUEST',
  'INVALID_OTP',
  'OTP_EXPIRED',
  'SESSION_EXPIRED',
  'RATE_LIMITED',
  'CHALLENGE_REQUIRED',
  'ACCOUNT_LOCKED',
  'DEVICE_KEY_UNAVAILABLE',
  'MFA_UNAVAILABLE',
  'NETWORK_ERROR',
  'TIMEOUT',
  'SERVICE_ERROR',
] as const;

/** Each status under its own name (`Status.OTP_NEEDED === 'OTP_NEEDED'`), built so that each name is written once. */
export const Status = Object.fromEntries(STATUSES.map((status) => [status, status])) as { readonly [S in (typeof STATUSES)[number]]: S };

export type Status = (typeof Status)[keyof typeof Status];

/**
 * MFA methods, as the spec's MfaMethod enumeration gives them, and ours beside them: PASSKEY, a
 * passkey enrolled as the second factor (its ceremonies live in service-web/passkeys).
 */
export const MfaMethod = { EMAIL: 'email', SMS: 'sms', TOTP: 'totp', PASSKEY: 'passkey' } as const;
export type MfaMethod = (typeof MfaMethod)[keyof typeof MfaMethod];
