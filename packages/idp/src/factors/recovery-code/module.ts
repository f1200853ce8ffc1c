import type { FactorModule } from '../module.js';

/**
 * Recovery codes: a second factor that stands in for the user's method at its steps (sign-in/
 * mfa-step.ts asks service.ts), never a method of its own: issued with the first method, not
 * chosen, so nothing to enroll in and no route of its own.
 */
export const recoveryCodeModule: FactorModule = {
  name: 'recovery-code',
  second: ['recovery_code'],
  metrics: { second: 'recovery_code' },
  tables: [{ name: 'recovery_codes', userColumn: 'user_id' }],
};
