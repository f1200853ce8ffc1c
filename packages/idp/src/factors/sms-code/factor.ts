import type { CodeFactor } from '../../sign-in/factor.js';
import { type SentCodeDeps, sentCodeFactor } from '../sent-code.js';

/** A code sent by SMS to the phone the method keeps (E.164, checked where it is asked for). */
export function createSmsCodeFactor(deps: SentCodeDeps): CodeFactor {
  return sentCodeFactor(deps, {
    name: 'sms-code',
    method: 'sms',
    prompt: 'We sent a verification code by SMS.',
    channel: async (target) => ({ kind: 'sms', to: await target.phone() }),
    keeps: (phone) => phone,
  });
}
