import type { IntrospectionResponse } from 'service-protocol';
import type { RefreshTokens } from '../oidc/refresh-tokens.js';
import type { IntrospectionStore } from './introspection-store.js';
import type { TokenService } from './service.js';

/** RFC 7662 2.2: the whole answer for a token that is not live, or that the caller may not learn about. */
export const INACTIVE = Object.freeze({ active: false as const });

export interface IntrospectionDeps {
  issuer: string;
  /** Verifies our access tokens (token/service.ts). */
  tokens: Pick<TokenService, 'accessTokenClaims'>;
  /** Whether the grant behind an access token stands (token/introspection-store.ts). */
  grants: IntrospectionStore;
  refreshTokens: Pick<RefreshTokens, 'findLive'>;
  /** The registered APIs (apis/): each may name its resource server's client. */
  apis: { findApi(identifier: string): Promise<{ resourceServerClientId: string | null } | undefined> };
}

export interface Introspection {
  /**
   * RFC 7662 2.2 for `token` as `callerId` (an authenticated confidential client) may see it:
   * active with its members only when the token is live (signature, issuer, type, expiry; not
   * revoked; its grant standing: user enabled, device kept, refresh family not revoked) and
   * the caller may learn about it (RFC 7662 4): the client it was issued to, or for a token of
   * an API, the client that API names as its resource server's. `{ active: false }` otherwise.
   */
  introspect(callerId: string, token: string): Promise<IntrospectionResponse>;
}

const seconds = (ms: number) => Math.floor(ms / 1000);

export function createIntrospection({ issuer, tokens, grants, refreshTokens, apis }: IntrospectionDeps): Introspection {
  const userinfoAudience = `${issuer}/oauth/userinfo`;

  /** Who besides the client a token was issued to may learn about it: its API's resource server, if the API names one. */
  async function mayLearn(callerId: string, clientId: string, audience: string): Promise<boolean> {
    if (callerId === clientId) {
      // A token for an API no longer registered is of no audience: inactive to everyone.
      return audience === userinfoAudience || (await apis.findApi(audience)) !== undefined;
    }
    if (audience === userinfoAudience) return false;
    const api = await apis.findApi(audience);
    return api?.resourceServerClientId != null && api.resourceServerClientId === callerId;
  }

  async function accessToken(callerId: string, token: string): Promise<IntrospectionResponse> {
    const claims = await tokens.accessTokenClaims(token);
    if (!claims) return INACTIVE;
    const { jti, sub, client_id: clientId, scope, aud, exp, iat } = claims;
    if (
      typeof jti !== 'string' ||
      typeof sub !== 'string' ||
      typeof clientId !== 'string' ||
      typeof scope !== 'string' ||
      typeof aud !== 'string' ||
      typeof exp !== 'number' ||
      typeof iat !== 'number'
    )
      return INACTIVE;
    if (!(await mayLearn(callerId, clientId, aud))) return INACTIVE;
    // RFC 9068 2.2: a client_credentials token's subject is the client itself.
    const live = sub === clientId ? await grants.isMachineTokenLive(jti, clientId) : await grants.isAccessTokenGrantLive(jti);
    if (!live) return INACTIVE;
    const jkt = (claims.cnf as { jkt?: unknown } | undefined)?.jkt;
    return {
      active: true,
      scope,
      client_id: clientId,
      sub,
      exp,
      iat,
      iss: issuer,
      aud,
      jti,
      // RFC 9449 6.2: a bound token is presented with the DPoP scheme and a proof of its key.
      token_type: typeof jkt === 'string' ? 'DPoP' : 'Bearer',
      ...(typeof jkt === 'string' ? { cnf: { jkt } } : {}),
    };
  }

  async function refreshToken(callerId: string, token: string): Promise<IntrospectionResponse> {
    const live = await refreshTokens.findLive(token);
    // Only the client it was issued to: no resource server ever holds a refresh token.
    if (!live || live.clientId !== callerId) return INACTIVE;
    return {
      active: true,
      scope: live.scope,
      client_id: live.clientId,
      sub: live.userId,
      exp: seconds(live.expiresAt),
      iat: seconds(live.issuedAt),
      iss: issuer,
      token_type: 'refresh_token',
    };
  }

  return {
    // Ours are told apart by their form, so token_type_hint is not needed (RFC 7662 2.1 lets the server search).
    async introspect(callerId, token) {
      if (token.startsWith('rt_')) return refreshToken(callerId, token);
      if (token.split('.').length === 3) return accessToken(callerId, token);
      return INACTIVE;
    },
  };
}
