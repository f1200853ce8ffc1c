/**
 * Statuses returned by the browser library. The first group is the spec's; the second is
 * ours, for failures the spec leaves open (documented in docs/protocol.md).
 */
export const Status = {
  // spec
  INITIALIZED: 'INITIALIZED',
  SUCCESS: 'SUCCESS',
  OTP_NEEDED: 'OTP_NEEDED',
  MFA_REQUIRED: 'MFA_REQUIRED',
  INVALID_EMAIL: 'INVALID_EMAIL',
  DEVICE_REGISTERED: 'DEVICE_REGISTERED',
  MFA_ENROLLMENT_NEEDED: 'MFA_ENROLLMENT_NEEDED',
  FINALIZE_REGISTRATION_NEEDED: 'FINALIZE_REGISTRATION_NEEDED',
  MFA_INITIATED: 'MFA_INITIATED',
  // ours: failures
  NOT_INITIALIZED: 'NOT_INITIALIZED',
  INVALID_API_KEY: 'INVALID_API_KEY',
  INVALID_REQUEST: 'INVALID_REQUEST',
  INVALID_OTP: 'INVALID_OTP',
  OTP_EXPIRED: 'OTP_EXPIRED',
  SESSION_EXPIRED: 'SESSION_EXPIRED',
  RATE_LIMITED: 'RATE_LIMITED',
  ACCOUNT_LOCKED: 'ACCOUNT_LOCKED',
  DEVICE_KEY_UNAVAILABLE: 'DEVICE_KEY_UNAVAILABLE',
  NETWORK_ERROR: 'NETWORK_ERROR',
  TIMEOUT: 'TIMEOUT',
  SERVICE_ERROR: 'SERVICE_ERROR',
} as const;

export type Status = (typeof Status)[keyof typeof Status];

/** MFA methods, as the spec's MfaMethod enumeration gives them. */
export const MfaMethod = { EMAIL: 'email', SMS: 'sms', TOTP: 'totp' } as const;
export type MfaMethod = (typeof MfaMethod)[keyof typeof MfaMethod];
