import type { MfaMethod } from 'service-protocol';
import { defineWing } from '../composition/wing.js';
import type { DeviceService } from '../devices/service.js';
import type { EventLog } from '../events/service.js';
import type { PasskeyMfa } from '../factors/passkey/mfa.js';
import type { PasskeyService } from '../factors/passkey/service.js';
import type { RecoveryCodes } from '../factors/recovery-code/service.js';
import type { UpstreamService } from '../factors/upstream/service.js';
import type { Mailer } from '../mail/mailer.js';
import type { MailTemplates } from '../mail/templates.js';
import type { FindApi } from '../oidc/authorize-request.js';
import type { ConsentStore } from '../oidc/consent-store.js';
import type { FirstPartyDeps } from '../oidc/first-party-sign-in.js';
import type { RefreshTokens } from '../oidc/refresh-tokens.js';
import type { Invitations } from '../organizations/invitations.js';
import type { OrganizationSelfService } from '../organizations/self-service.js';
import type { MfaStep } from '../sign-in/mfa-step.js';
import type { UserService } from '../users/service.js';
import { accountRoutes } from './routes.js';
import { createAccountCenter } from './service.js';

interface AccountCenterNeeds {
  /** Organizations' invitations, accepted on the account center's page (organizations/invitations.ts). */
  invitations: Invitations;
  /** The user's own organizations: list, leave, create, and the page of one they manage (organizations/self-service.ts). */
  organizationSelfService: OrganizationSelfService;
  config: { issuer: string };
  firstParty: FirstPartyDeps & { clients: Parameters<typeof createAccountCenter>[0]['clients'] };
  /** The methods the account page offers (factors/index.ts enrollableMethods, the account page's). */
  accountMfaMethods: MfaMethod[];
  users: UserService;
  events: EventLog;
  mfa: MfaStep;
  recoveryCodes: RecoveryCodes;
  deviceService: DeviceService;
  upstream: UpstreamService;
  connections: { list(): Promise<{ id: string; name: string }[]> };
  passkeys: PasskeyService;
  passkeyMfa: PasskeyMfa;
  mailer: Mailer;
  templates: MailTemplates;
  refreshTokens: RefreshTokens;
  /** What users granted third-party clients (oidc/wing.ts). */
  consents: ConsentStore;
  apiAuthorization: { findApi: FindApi };
}

/** The account center at /account (docs/operations.md, "The account center"): every user's own devices, factors, activity, export and deletion. */
export const accountCenterWing = defineWing('account-center', (deps: AccountCenterNeeds) => {
  const { refreshTokens } = deps;
  const accountCenter = createAccountCenter({
    ...deps.firstParty,
    ...{ users: deps.users, events: deps.events, mfa: deps.mfa, mfaMethods: deps.accountMfaMethods, recoveryCodes: deps.recoveryCodes },
    ...{ deviceService: deps.deviceService, identities: deps.upstream, connections: deps.connections },
    ...{ passkeyService: deps.passkeys, passkeyMfa: deps.passkeyMfa, mailer: deps.mailer, templates: deps.templates },
    revokeAppTokens: (userId, clientId) => refreshTokens.revokeUserClient(userId, clientId),
    consents: deps.consents,
    findApi: deps.apiAuthorization.findApi,
  });
  return {
    services: { accountCenter },
    routes: {
      root:
        ({ languages }) =>
        async (app) => {
          await app.register(accountRoutes, {
            account: accountCenter,
            issuer: deps.config.issuer,
            languages,
            invitations: deps.invitations,
            organizations: deps.organizationSelfService,
          });
        },
    },
  };
});
