import type { FactorModule } from '../module.js';
import { createTotpFactor } from './factor.js';

/** An authenticator app: the MFA method `totp`; its sealed secret and replay barrier are kept with the method (mfa_methods). */
export const totpModule: FactorModule = {
  name: 'totp',
  second: ['totp'],
  method: 'totp',
  mfa: createTotpFactor,
  metrics: { second: 'totp' },
  tables: [],
  enrollment: { label: 'hosted.method.totp', userEnrollable: true, onAccountPage: true },
};
