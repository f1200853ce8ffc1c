import type { Branding } from '../branding/service.js';
import { DEVICE_VERIFICATION_CLIENT_ID } from '../clients/service.js';
import { defineWing } from '../composition/wing.js';
import type { Sealer } from '../crypto/seal.js';
import type { SecretHasher } from '../crypto/secrets.js';
import type { EventLog } from '../events/service.js';
import type { FindApi } from '../oidc/authorize-request.js';
import type { ConsentStore } from '../oidc/consent-store.js';
import { createFirstPartySignIn, type FirstPartyDeps } from '../oidc/first-party-sign-in.js';
import type { Db } from '../storage/schema.js';
import type { Throttle } from '../throttle/service.js';
import { DEVICE_CALLBACK_PATH, deviceVerificationRoutes } from './page-routes.js';
import { deviceAuthorizationRoutes } from './routes.js';
import { createDeviceAuthorizations } from './service.js';
import { createDeviceAuthorizationStore } from './store.js';

interface DeviceAuthorizationNeeds extends Omit<FirstPartyDeps, 'issuer' | 'passkeys' | 'deviceIdleMs'> {
  db: Db;
  now: () => number;
  hash: SecretHasher;
  sealerFor: (purpose: string) => Sealer;
  idleMs: number;
  config: { issuer: string };
  clients: FirstPartyDeps['clients'] &
    Parameters<typeof createDeviceAuthorizations>[0]['clients'] &
    Parameters<typeof deviceAuthorizationRoutes>[1]['clients'];
  passkeyStore: FirstPartyDeps['passkeys'];
  throttle: Throttle;
  events: EventLog;
  /** What users granted third-party clients (oidc/wing.ts): Allow records it as the consent page's does. */
  consents: ConsentStore;
  branding: Branding;
  apiAuthorization: { findApi: FindApi };
}

/**
 * The device authorization grant (RFC 8628; docs/protocol.md "Device authorization grant"): the
 * device authorization endpoint, the verification page (/device) where a signed-in user approves
 * the device, and `deviceAuthorizations.redeem`, which the token endpoint's device_code grant
 * calls (token/wing.ts) before it issues tokens the way a code exchange does.
 */
export const deviceAuthorizationWing = defineWing('device-authorization', (deps: DeviceAuthorizationNeeds) => {
  const { db, now, hash, config, clients } = deps;
  const { issuer } = config;
  const deviceAuthorizations = createDeviceAuthorizations({
    issuer,
    store: createDeviceAuthorizationStore(db),
    clients,
    throttle: deps.throttle,
    events: deps.events,
    consents: deps.consents,
    findApi: deps.apiAuthorization.findApi,
    hash,
    now,
  });
  // The page signs its user in as any app would: through /authorize and the hosted pages (a live session answers at once).
  const signIn = createFirstPartySignIn(
    {
      ...{ issuer, clients, codes: deps.codes, enabledUsers: deps.enabledUsers, devices: deps.devices, passkeys: deps.passkeyStore },
      ...{ hash, now, deviceIdleMs: deps.idleMs },
    },
    {
      clientId: DEVICE_VERIFICATION_CLIENT_ID,
      name: 'Device connection',
      callbackPath: DEVICE_CALLBACK_PATH,
      mfaPolicy: 'optional',
      purpose: 'device',
    },
  );
  const sealer = deps.sealerFor('device-verification');
  return {
    services: { deviceAuthorizations },
    routes: {
      root:
        ({ languages }) =>
        async (app) => {
          await app.register(deviceAuthorizationRoutes, { devices: deviceAuthorizations, clients });
          await app.register(deviceVerificationRoutes, {
            ...{ devices: deviceAuthorizations, signIn, sealer, hash, issuer, now, languages },
            brandOf: (client) => deps.branding.brandOf(client),
          });
        },
    },
    sweep: (at: number) => deviceAuthorizations.sweep(at),
  };
});
