import type { FactorModule } from '../module.js';
import { createEmailCodeFactor, emailCodeFirst } from './factor.js';
import { createNewDeviceStore } from './new-device-store.js';
import { newDeviceRoutes } from './routes.js';

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
  // A pending new-device sign-in is keyed by the address: no user may exist yet.
  tables: [{ name: 'registrations', userColumn: 'email' }],
  sweep: (db, at) => createNewDeviceStore(db).deleteExpired(at),
  enrollment: { label: 'hosted.method.email', userEnrollable: true, onAccountPage: true },
  routes: {
    browser: async (app, deps) =>
      app.register(newDeviceRoutes, { newDeviceSignIn: deps.newDeviceSignIn, placeHeader: deps.placeHeader, mfaMethods: deps.mfaMethods }),
  },
};
