import type { CodeService } from '../authorization-codes/service.js';
import type { Branding } from '../branding/service.js';
import type { ClientService } from '../clients/service.js';
import { defineWing } from '../composition/wing.js';
import type { SecretHasher } from '../crypto/secrets.js';
import type { SessionEnder } from '../devices/service.js';
import type { DeviceStore } from '../devices/store.js';
import type { EventLog } from '../events/service.js';
import type { PasskeyService } from '../factors/passkey/service.js';
import type { PasskeyStore } from '../factors/passkey/store.js';
import type { Keyring } from '../keys/keyring.js';
import type { Mailer } from '../mail/mailer.js';
import type { MailTemplates } from '../mail/templates.js';
import type { OrganizationAccess } from '../organizations/service.js';
import { type CaptchaConfig, captchaOrigins } from '../otp/send-captcha.js';
import type { SpentTokenStore } from '../spent-tokens/store.js';
import type { Db } from '../storage/schema.js';
import type { EnabledUserStore } from '../users/enabled-store.js';
import type { WebhookFanOut } from '../webhooks/fan-out.js';
import type { FindApi } from './authorize-request.js';
import { createLogoutDelivery } from './backchannel-logout.js';
import { createConsentStore } from './consent-store.js';
import { createDbsc } from './dbsc.js';
import { dbscRoutes } from './dbsc-routes.js';
import type { FirstPartyDeps } from './first-party-sign-in.js';
import { hostedSignInFor } from './hosted-for.js';
import { createLogoutService } from './logout.js';
import { logoutRoutes } from './logout-routes.js';
import { createPasskeyOffer } from './passkey-offer.js';
import { createPushedRequests } from './pushed-requests.js';
import { createRefreshTokenStore } from './refresh-store.js';
import { createRefreshTokens } from './refresh-tokens.js';
import { oidcRoutes, sessionCookieName } from './routes.js';
import { createOidcService } from './service.js';
import { renewalRoutes } from './session-renewal.js';
import { createOidcStore } from './store.js';

/**
 * The SSO sessions' store, opened before the wings that end sessions (a device revoked, a
 * passkey removed, a user disabled): `sessions` ends them, and writes the back-channel logout
 * rows to the webhook outbox, whose loop on this node then looks at once.
 */
export const oidcSessionsWing = defineWing(
  'oidc-sessions',
  ({ db, now, webhookFanOut }: { db: Db; now: () => number; webhookFanOut: Pick<WebhookFanOut, 'enqueued'> }) => {
    const oidcStore = createOidcStore(db, { logoutEnqueued: () => webhookFanOut.enqueued() });
    const sessions: SessionEnder = {
      endPasskeySessions: async (userId) => (await oidcStore.endSessions({ userId, which: 'passkeys' }, now())).length,
      endUnbound: async (userId) => (await oidcStore.endSessions({ userId, which: 'unbound' }, now())).length,
      endAll: async (userId) => (await oidcStore.endSessions({ userId, which: 'all' }, now())).length,
    };
    return { services: { oidcStore, sessions } };
  },
);

interface OidcNeeds {
  db: Db;
  now: () => number;
  hash: SecretHasher;
  idleMs: number;
  config: { issuer: string; sendSpacingSeconds: number; sendCaptcha: CaptchaConfig | undefined };
  oidcStore: ReturnType<typeof createOidcStore>;
  clients: ClientService;
  codes: CodeService;
  devices: DeviceStore;
  passkeyStore: PasskeyStore;
  passkeys: PasskeyService;
  enabledUsers: EnabledUserStore;
  events: EventLog;
  spentTokens: SpentTokenStore;
  keyring: Keyring;
  branding: Branding;
  mailer: Mailer;
  templates: MailTemplates;
  /** The registered APIs (apis/): what an authorization request's `resource` may name. */
  apiAuthorization: { findApi: FindApi };
  organizationAccess: OrganizationAccess;
}

/**
 * The OpenID Connect provider's browser side (docs/protocol.md, "OpenID Connect"): /authorize
 * and the hosted pages' requests, SSO sessions, pushed requests, refresh tokens, DBSC, the
 * passkey offer after a held sign-in, and logout (RP-initiated, back- and front-channel).
 */
export const oidcWing = defineWing('oidc', (deps: OidcNeeds) => {
  const { db, now, hash, idleMs, config, oidcStore, clients, codes, events, keyring, branding } = deps;
  const { issuer } = config;
  const refreshTokens = createRefreshTokens({ store: createRefreshTokenStore(db), codes, events, hash, now, deviceIdleMs: idleMs });
  const dbsc = createDbsc({ store: oidcStore, spent: deps.spentTokens, hash, issuer, now });
  const { findApi } = deps.apiAuthorization;
  const pushedRequests = createPushedRequests({ db, hash, now, findApi });
  const consents = createConsentStore(db);
  const oidc = createOidcService({
    ...{ issuer, clients, pushed: pushedRequests, codes, store: oidcStore, devices: deps.devices, passkeys: deps.passkeyStore, findApi },
    ...{ enabledUsers: deps.enabledUsers, events, hash, now, deviceIdleMs: idleMs, consents, organizations: deps.organizationAccess },
  });
  const passkeyOffer = createPasskeyOffer({
    oidc,
    passkeyService: deps.passkeys,
    clients,
    mailer: deps.mailer,
    templates: deps.templates,
    now,
  });
  const logout = createLogoutService({ issuer, clients, keyring, oidc, events, hash });
  const brandOf = (client: { id: string; name: string }) => branding.brandOf(client);
  return {
    services: {
      refreshTokens,
      dbsc,
      pushedRequests,
      oidc,
      /** What users granted third-party clients (oidc/consent.ts); the account center lists and revokes them. */
      consents,
      passkeyOffer,
      logout,
      logoutDelivery: createLogoutDelivery({ issuer, clients, keyring, now }),
      /** The hosted pages' pending request, as the upstream sign-in continues it (factors/upstream/). */
      hostedFor: hostedSignInFor(oidc, clients),
    },
    routes: {
      root:
        ({ languages }) =>
        async (app) => {
          const resendSeconds = config.sendSpacingSeconds;
          const captcha = config.sendCaptcha && { scriptUrl: config.sendCaptcha.scriptUrl, origins: captchaOrigins(config.sendCaptcha) };
          await app.register(oidcRoutes, { oidc, offer: passkeyOffer, issuer, resendSeconds, brandOf, languages, dbsc, captcha });
          await app.register(dbscRoutes, { dbsc, issuer });
          await app.register(renewalRoutes, { dbsc, issuer, sessionCookie: sessionCookieName(issuer) });
          await app.register(logoutRoutes, { logout, issuer, languages, productName: () => branding.productName() });
        },
    },
    async sweep(at: number) {
      await oidc.sweep(at);
      await pushedRequests.sweep(at);
      await refreshTokens.sweep(at);
    },
  };
});

/**
 * What the service's own apps (the account center, the console) sign in with: built-in clients
 * through the hosted pages, their sessions bound to the device or passkey that signed in.
 */
export const firstPartyWing = defineWing(
  'first-party',
  (
    deps: Omit<FirstPartyDeps, 'issuer' | 'passkeys' | 'deviceIdleMs' | 'clients'> & {
      clients: ClientService;
      config: { issuer: string };
      idleMs: number;
      passkeyStore: FirstPartyDeps['passkeys'];
    },
  ) => {
    const { clients, codes, enabledUsers, devices, hash, now } = deps;
    const firstParty: FirstPartyDeps & { clients: ClientService } = {
      ...{ issuer: deps.config.issuer, clients, codes, enabledUsers, devices, passkeys: deps.passkeyStore, hash, now },
      deviceIdleMs: deps.idleMs,
    };
    return { services: { firstParty } };
  },
);
