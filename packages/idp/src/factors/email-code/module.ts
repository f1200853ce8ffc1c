import type { FactorModule } from '../module.js';
import { createEmailCodeFactor, emailCodeFirst } from './factor.js';
import { createRegistrationStore } from './new-device-store.js';
import { registrationRoutes } from './routes.js';

/**
 * The emailed code, one module for both its roles: the new-device sign-in's first factor (amr
 * `otp`, routes.ts) and the MFA method `email`. One proof (the account's mailbox) and one sender;
 * the pipeline's rule that after the first the second is no second factor (sign-in/pipeline.ts
 * countsAsSecond) is a rule about this one factor. Its metric labels stay per role.
 */
export const emailCodeModule: FactorModule = {
  name: 'email-code',
  first: emailCodeFirst,
  second: ['email'],
  method: 'email',
  mfa: createEmailCodeFactor,
  acr: { otp: 'otp' },
  metrics: { first: 'otp', second: 'email' },
  // A pending registration is keyed by the address: no user may exist yet.
  tables: [{ name: 'registrations', userColumn: 'email' }],
  sweep: (db, at) => createRegistrationStore(db).deleteExpired(at),
  enrollment: { label: 'hosted.method.email', userEnrollable: true, onAccountPage: true },
  routes: {
    browser: async (app, deps) =>
      app.register(registrationRoutes, { registration: deps.registration, placeHeader: deps.placeHeader, mfaMethods: deps.mfaMethods }),
  },
};
