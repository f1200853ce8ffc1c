import type { MfaFactor } from '../sign-in/factor.js';
import { createEmailCodeFactor } from './email-code/factor.js';
import { passkeyFactor } from './passkey/factor.js';
import type { SentCodeDeps } from './sent-code.js';
import { createSmsCodeFactor } from './sms-code/factor.js';
import { createTotpFactor, type TotpFactorDeps } from './totp/factor.js';

export type MfaFactorDeps = SentCodeDeps & TotpFactorDeps;

/**
 * The factors that can be a user's MFA method, one line each: the MFA step (sign-in/mfa-step.ts)
 * dispatches to them by the session's method. Recovery codes (factors/recovery-code) stand in
 * for any of them; the device key (factors/device-key) is a first factor only.
 */
export function createMfaFactors(deps: MfaFactorDeps): MfaFactor[] {
  return [createEmailCodeFactor(deps), createSmsCodeFactor(deps), createTotpFactor(deps), passkeyFactor];
}
