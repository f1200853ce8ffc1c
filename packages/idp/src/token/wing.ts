import { Paths } from 'service-protocol';
import type { CodeService } from '../authorization-codes/service.js';
import type { Branding } from '../branding/service.js';
import type { ClientService } from '../clients/service.js';
import { defineWing } from '../composition/wing.js';
import type { SecretHasher } from '../crypto/secrets.js';
import { createDpopVerifier } from '../dpop/proof.js';
import type { Locales } from '../i18n/locales.js';
import type { Keyring } from '../keys/keyring.js';
import type { AcrClasses } from '../oidc/acr.js';
import type { PushedRequests } from '../oidc/pushed-requests.js';
import type { RefreshTokens } from '../oidc/refresh-tokens.js';
import type { OrganizationAccess } from '../organizations/service.js';
import type { SpentTokenStore } from '../spent-tokens/store.js';
import type { Db } from '../storage/schema.js';
import type { EnabledUserStore } from '../users/enabled-store.js';
import type { ApiGrants } from './api-access.js';
import { createClientAssertions } from './client-assertion.js';
import { createClientCredentialsGrant } from './client-credentials-grant.js';
import { oauthCors } from './cors.js';
import { createIntrospection } from './introspection.js';
import { introspectionRoutes } from './introspection-routes.js';
import { createIntrospectionStore } from './introspection-store.js';
import { pushedRequestRoutes } from './pushed-request-routes.js';
import { tokenRoutes } from './routes.js';
import { createTokenService, type DeviceCodeRedemption } from './service.js';

interface TokenNeeds {
  db: Db;
  now: () => number;
  hash: SecretHasher;
  serverSecret: Buffer;
  config: { issuer: string; clientRegistration: 'off' | 'open' | 'initial-token' };
  acrClasses: AcrClasses;
  locales: Locales;
  clients: ClientService;
  codes: CodeService;
  enabledUsers: EnabledUserStore;
  keyring: Keyring;
  refreshTokens: RefreshTokens;
  spentTokens: SpentTokenStore;
  pushedRequests: PushedRequests;
  branding: Branding;
  /** RFC 8628: device codes the user approved (device-authorization/wing.ts). */
  deviceAuthorizations: DeviceCodeRedemption;
  /** The registered APIs, the users' roles and what machine clients are granted (apis/). */
  apiAuthorization: ApiGrants & { clientGrants(clientId: string): Promise<Array<{ api: string; permission: string }>> };
  organizationAccess: OrganizationAccess;
}

/**
 * What a client's backend calls (docs/protocol.md, "Token endpoint"): the token endpoint with
 * DPoP, userinfo, revocation, introspection, discovery and the JWKS, and pushed authorization requests; CORS
 * for single-page apps only from the origins registered on the calling client.
 */
export const tokenWing = defineWing('token', (deps: TokenNeeds) => {
  const { now, hash, config, clients, keyring, pushedRequests, branding } = deps;
  const { issuer } = config;
  const dpop = createDpopVerifier({ issuer, spent: deps.spentTokens, hash, now });
  const machines = createClientCredentialsGrant({
    issuer,
    clients,
    assertions: createClientAssertions({ issuer, tokenEndpoint: `${issuer}${Paths.token}`, spent: deps.spentTokens, hash, now }),
    apis: deps.apiAuthorization,
    keyring,
    now,
  });
  const tokens = createTokenService({
    ...{ issuer, clients, codes: deps.codes, enabledUsers: deps.enabledUsers, keyring, refreshTokens: deps.refreshTokens },
    ...{ serverSecret: deps.serverSecret, now, acrClasses: deps.acrClasses, apis: deps.apiAuthorization },
    organizations: deps.organizationAccess,
    deviceAuthorizations: deps.deviceAuthorizations,
  });
  const introspection = createIntrospection({
    ...{ issuer, tokens, grants: createIntrospectionStore(deps.db), refreshTokens: deps.refreshTokens },
    apis: deps.apiAuthorization,
  });
  return {
    services: { dpop, tokens, machines },
    routes: {
      root:
        ({ origins }) =>
        async (app) => {
          await app.register(tokenRoutes, {
            ...{ tokens, keyring, issuer, dpop, locales: deps.locales.supported, settings: () => branding.settings(), machines },
            registration: config.clientRegistration !== 'off',
            metadataDocuments: clients.metadataDocuments,
            cors: (scope) => oauthCors(scope, { isRegistered: (origin) => origins.has(origin), findClient: clients.findById }),
          });
          await app.register(pushedRequestRoutes, { pushed: pushedRequests, clients });
          await app.register(introspectionRoutes, { introspection, clients, machines });
        },
    },
  };
});
