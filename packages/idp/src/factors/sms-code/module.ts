import type { FactorModule } from '../module.js';
import { createSmsCodeFactor } from './factor.js';

/** A code by SMS: the MFA method `sms`, proven at the MFA step's routes (sign-in/); its phone is kept with the method (mfa_methods). */
export const smsCodeModule: FactorModule = {
  name: 'sms-code',
  second: ['sms'],
  method: 'sms',
  mfa: createSmsCodeFactor,
  metrics: { second: 'sms' },
  tables: [],
  // SMS through the development outbox is refused in production: the code would reach nobody.
  enrollment: {
    label: 'hosted.method.sms',
    userEnrollable: true,
    onAccountPage: true,
    offered: (config) => !(config.production && config.sms.transport === 'outbox'),
  },
};
