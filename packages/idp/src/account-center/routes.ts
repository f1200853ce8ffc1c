import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { PageLanguages } from '../i18n/page-language.js';
import type { Invitations } from '../organizations/invitations.js';
import type { OrganizationSelfService } from '../organizations/self-service.js';
import { accountDataRoutes } from './data-routes.js';
import { accountDeviceRoutes } from './device-routes.js';
import { accountFactorChangeRoutes, accountProofRoutes, accountRecoveryCodeRoutes } from './factor-routes.js';
import { accountHttp } from './http.js';
import { accountInvitationRoutes } from './invitation-routes.js';
import { accountLinkRoutes } from './link-routes.js';
import { accountManagedOrganizationRoutes, accountOrganizationRoutes } from './organization-routes.js';
import { accountPageRoutes, accountSignInRoutes } from './page-routes.js';
import { accountPasskeyRoutes } from './passkey-routes.js';
import type { AccountCenter } from './service.js';

/**
 * The account center at /account (docs/operations.md, "The account center"): the page, its
 * sign-in through the hosted sign-in, and its actions, one plugin for each thing the page does.
 * Every action is a POST from the page's own forms: Origin (when sent) the issuer's,
 * Sec-Fetch-Site (when sent) same-origin, and the session's CSRF token; the sensitive ones also
 * need a recent sign-in (account-center/http.ts `act`, which every group shares).
 */
export const accountRoutes: FastifyPluginAsyncTypebox<{
  account: AccountCenter;
  issuer: string;
  languages: PageLanguages;
  invitations: Invitations;
  organizations: OrganizationSelfService;
}> = async (app, { account, issuer, languages, invitations, organizations }) => {
  await account.ensureClient();
  const { locales } = languages;
  const http = accountHttp({ account, issuer, languages });
  await app.register(accountPageRoutes, { account, http, locales, organizations });
  await app.register(accountDeviceRoutes, { account, http });
  await app.register(accountLinkRoutes, { account, http });
  await app.register(accountDataRoutes, { account, http });
  await app.register(accountFactorChangeRoutes, { account, http, locales });
  await app.register(accountProofRoutes, { account, http });
  await app.register(accountRecoveryCodeRoutes, { account, http });
  await app.register(accountPasskeyRoutes, { account, http });
  await app.register(accountInvitationRoutes, { account, http, invitations });
  await app.register(accountOrganizationRoutes, { account, http, organizations });
  await app.register(accountManagedOrganizationRoutes, { account, http, organizations });
  // After the devices: sign-out's body is revoke-others', and the OpenAPI document names a shared
  // body after the first route registered with it (RevokeOtherOwnDevicesRequest, a published name).
  await app.register(accountSignInRoutes, { account, http });
};
