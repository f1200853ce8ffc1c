import type { FactorModule } from '../module.js';
import { passkeyFactor } from './factor.js';
import { passkeyMfaRoutes } from './mfa-routes.js';
import { passkeyRoutes } from './routes.js';

/**
 * A passkey: a first factor (its sign-in ceremony) and the MFA method `passkey` (its MFA
 * ceremony). Enrolled through service-web/passkeys at an enrollment, never through delegation.
 */
export const passkeyModule: FactorModule = {
  name: 'passkey',
  first: passkeyFactor.first,
  second: passkeyFactor.second,
  method: 'passkey',
  mfa: () => passkeyFactor,
  // A device-bound passkey (hwk) is phishing-resistant; a synced one (swk) reaches what a device's key does.
  acr: { hwk: 'phishingResistant', swk: 'device' },
  metrics: { first: 'passkey', second: 'passkey' },
  tables: [{ name: 'passkeys', userColumn: 'user_id' }],
  enrollment: { label: 'hosted.method.passkey', userEnrollable: true, onAccountPage: false },
  routes: {
    browser: async (app, deps) => {
      await app.register(passkeyRoutes, { passkeys: deps.passkeys, ceremonyContext: deps.ceremonyContext, mfaMethods: deps.mfaMethods });
      await app.register(passkeyMfaRoutes, { passkeys: deps.passkeyMfa });
    },
  },
};
