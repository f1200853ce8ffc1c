import type { CodeFactor } from '../../sign-in/factor.js';
import { type SentCodeDeps, sentCodeFactor } from '../sent-code.js';

/** The amr of the emailed code as a first factor: a new device's sign-in (new-device.ts). */
export const emailCodeFirst = ['otp'] as const;

/**
 * A code mailed to the account's address. As the first factor it is the emailed code of a
 * new-device sign-in (new-device.ts, amr `otp`); as the MFA method, a code mailed at the step
 * (amr `email`). An enrollment in it at a new device's sign-in needs no confirmation: the
 * first factor just proved the same address. After that first factor it is no second one (the same mailbox):
 * neither the enrollment nor the step adds `mfa` there (sign-in/pipeline.ts countsAsSecond).
 */
export function createEmailCodeFactor(deps: SentCodeDeps): CodeFactor {
  return sentCodeFactor(deps, {
    name: 'email-code',
    method: 'email',
    first: emailCodeFirst,
    prompt: 'We emailed you a verification code.',
    channel: async (target) => ({ kind: 'email', to: target.email }),
    keeps: () => null,
  });
}
