import { hkdfSync } from 'node:crypto';
import { createLocalJWKSet, type JWK, type JWTPayload, jwtVerify } from 'jose';
import type { TokenResponse } from 'service-protocol';
import type { CodeService } from '../authorization-codes/service.js';
import type { ClientService } from '../clients/service.js';
import { signHs256, signJws } from '../crypto/jws.js';
import { pkceChallengeOf } from '../crypto/pkce.js';
import { randomToken } from '../crypto/secrets.js';
import { ACCESS_TOKEN_TTL_SECONDS, ID_TOKEN_TTL_SECONDS } from '../defaults.js';
import { OAuthError } from '../errors.js';
import { isSigningAlg, type SigningAlg } from '../keys/algs.js';
import type { Keyring } from '../keys/keyring.js';
import { type AcrClasses, acrOf } from '../oidc/acr.js';
import { ORGANIZATION_SCOPE } from '../oidc/authorize-request.js';
import type { RefreshTokens } from '../oidc/refresh-tokens.js';
import type { OrganizationAccess } from '../organizations/service.js';
import type { EnabledUserStore } from '../users/enabled-store.js';
import {
  API_ACCESS_TOKEN_ALG,
  type ApiGrants,
  audienceOf,
  narrowedScope,
  signApiAccessToken,
  type UserApiGrant,
  userApiGrant,
} from './api-access.js';

export interface TokenDeps {
  issuer: string;
  clients: ClientService;
  codes: CodeService;
  enabledUsers: EnabledUserStore;
  keyring: Keyring;
  refreshTokens: RefreshTokens;
  serverSecret: Buffer;
  now: () => number;
  /** The acr class of each amr value, from the factors (factors/index.ts acrClassesOf). */
  acrClasses: AcrClasses;
  /** The registered APIs and the users' roles (apis/): what an access token for an API carries. */
  apis: ApiGrants;
  /** Who belongs to which organization and what their organization roles grant (organizations/). */
  organizations: Pick<OrganizationAccess, 'membership' | 'memberPermissions'>;
  /** RFC 8628: device codes the user approved (device-authorization/, which the composition hands in). */
  deviceAuthorizations: DeviceCodeRedemption;
}

/** RFC 8628 3.4: the grant type of a device's token request. */
export const DEVICE_CODE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

/**
 * What the device_code grant needs of the device authorizations (device-authorization/service.ts
 * implements it): the approved sign-in behind a client's device code, consumed once, or the
 * OAuthError that says why not (authorization_pending, slow_down, access_denied, expired_token, invalid_grant).
 */
export interface DeviceCodeRedemption {
  redeem(
    deviceCode: string,
    clientId: string,
  ): Promise<{
    signIn: { userId: string; deviceId: string | null; amr: string[]; authTime: number; sid: string | null };
    scope: string;
    resources: string[];
  }>;
}

/** RFC 8628 3.4: a device's token request (grant_type urn:ietf:params:oauth:grant-type:device_code). */
export interface DeviceCodeGrant {
  clientId: string;
  /** Absent for a public client. */
  clientSecret?: string;
  deviceCode: string;
  /** As in CodeGrant: the tokens are bound to the proof's key (RFC 9449 5). */
  dpopJkt?: string;
  /** As in CodeGrant: one of the APIs the device asked for. */
  resource?: string | readonly string[];
}

/** The organization a token is for (organizations/): its id and name, and the member's organization roles. */
export interface TokenOrganization {
  id: string;
  name: string;
  roles: string[];
}

export interface CodeGrant {
  clientId: string;
  /** Absent for a public client (`token_endpoint_auth_method: none`). */
  clientSecret?: string;
  code: string;
  codeVerifier?: string;
  redirectUri?: string;
  /** The JWK thumbprint of the request's valid DPoP proof (RFC 9449 5): the tokens are bound to it. */
  dpopJkt?: string;
  /** RFC 8707 2.2: the API the access token is for, among those the authorization request named. */
  resource?: string | readonly string[];
}

/** RFC 6749 6 refresh request (grant_type=refresh_token). */
export interface RefreshGrant {
  clientId: string;
  /** Absent for a public client. */
  clientSecret?: string;
  refreshToken: string;
  /** RFC 6749 6: at most the scope originally granted. */
  scope?: string;
  /** As in CodeGrant; a public client's bound family refreshes only with a proof of its key. */
  dpopJkt?: string;
  /** As in CodeGrant: one of the APIs the sign-in named (RFC 8707 2.2), never another. */
  resource?: string | readonly string[];
  /** An organization to switch to (organizations/): this answer's tokens are for it, if the user is its member. */
  organization?: string;
}

/** RFC 7009 2.1 revocation request. */
export interface Revocation {
  clientId: string;
  clientSecret?: string;
  token: string;
  /** As in CodeGrant: a bound refresh token is revoked only with a proof of its key. */
  dpopJkt?: string;
}

/** The scope of every code from the /v1 API, and the least /authorize grants. */
export const SCOPE = 'openid email';
/** OIDC Core 11: asks for a refresh token (granted when the sign-in used a remembered device). */
export const OFFLINE_ACCESS = 'offline_access';
/** Every scope value this service grants (discovery's scopes_supported); `organization`: the user picks one of theirs. */
export const SCOPES_SUPPORTED = ['openid', 'email', OFFLINE_ACCESS, ORGANIZATION_SCOPE] as const;

const hasOfflineAccess = (scope: string) => scope.split(' ').includes(OFFLINE_ACCESS);

/** The DPoP key an access token is bound to (RFC 9449 6.1 `cnf.jkt`), or undefined. */
function boundKeyOf(claims: Record<string, unknown>): string | undefined {
  const jkt = (claims.cnf as { jkt?: unknown } | undefined)?.jkt;
  return typeof jkt === 'string' ? jkt : undefined;
}

/**
 * The answer's scope (RFC 6749 5.1): the OpenID Connect values granted and, for an API's token,
 * the permissions it carries (fewer than asked when the user's roles grant fewer, RFC 6749 3.3).
 */
function answerScope(scope: string, api: { permissions: string[] } | undefined): string {
  const oidc = scope.split(' ').filter((value) => (SCOPES_SUPPORTED as readonly string[]).includes(value));
  return [...oidc, ...(api?.permissions ?? [])].join(' ');
}

/** Stands for a malformed code_verifier in the redeeming statement: no stored challenge has a `!`. */
const MALFORMED_VERIFIER = '!';

export interface UserinfoAnswer {
  claims: { sub: string; email: string; email_verified: true };
  clientId: string;
}

export interface TokenService {
  exchangeCode(grant: CodeGrant): Promise<TokenResponse>;
  /**
   * RFC 8628 3.4, 3.5: the client authenticates (and, if it requires DPoP, proves a key) before
   * its device code is looked at; an approved code is consumed once and its sign-in becomes a
   * code of this client redeemed at once, so the tokens are exactly a code exchange's.
   */
  exchangeDeviceCode(grant: DeviceCodeGrant): Promise<TokenResponse>;
  /**
   * RFC 6749 6 with rotation (RFC 9700 4.14.2): the presented token is spent and a new one
   * issued with a new access token and ID token (OIDC Core 12.2: same sub, aud and auth_time,
   * no nonce). A spent token presented again revokes its family.
   */
  refresh(grant: RefreshGrant): Promise<TokenResponse>;
  /**
   * RFC 7009 2.1: the client authenticates as at the token endpoint; then its own refresh
   * token (and the family) or access token is revoked. An unknown token, or one issued to
   * another client, changes nothing and is answered like a revoked one (2.2).
   */
  revoke(request: Revocation): Promise<void>;
  /**
   * OIDC Core 5.3 userinfo for a valid access token, or undefined. `dpopJkt`: the key of the
   * request's valid DPoP proof (the `DPoP` scheme); a bound token (`cnf.jkt`) is valid only with
   * a proof of its key, and an unbound one only without (RFC 9449 7.1, 7.2). With the claims,
   * the client the token was issued to (whose registered origins may read the answer, token/cors.ts).
   */
  userinfo(accessToken: string, dpopJkt?: string): Promise<UserinfoAnswer | undefined>;
  /**
   * One of our access tokens, of either kind (the userinfo token, HS256; an API's, RFC 9068
   * RS256 under a JWKS key), its signature, `typ`, issuer, expiry (and the userinfo token's
   * audience) checked, not whether it was revoked: its claims, or undefined (introspection).
   */
  accessTokenClaims(accessToken: string): Promise<JWTPayload | undefined>;
}

/**
 * The token endpoint's logic (RFC 6749 4.1.3, RFC 7636 4.6, OIDC Core 3.1.3): authenticate the
 * client, consume the code once, check its binding and PKCE, sign the ID token.
 */
export function createTokenService(deps: TokenDeps): TokenService {
  const { issuer, clients, codes, enabledUsers, keyring, refreshTokens, now } = deps;
  // Access tokens are only for this service's userinfo endpoint: an HMAC (HS256) JWT under a
  // key derived from the server secret is enough, and costs no second RSA signature.
  const accessKey = new Uint8Array(hkdfSync('sha256', deps.serverSecret, Buffer.alloc(0), 'service-idp access-token', 32));
  const userinfoAudience = `${issuer}/oauth/userinfo`;

  /** What one grant (a code exchange or a refresh) signs its tokens for. */
  type SignedGrant = {
    clientId: string;
    alg: SigningAlg;
    user: { id: string; email: string };
    amr: string[];
    authTime: number;
    nonce?: string | null;
    deviceId: string | null;
    /** The SSO session the grant comes from (OIDC Front-/Back-Channel Logout `sid`). */
    sid: string | null | undefined;
    scope: string;
    accessTokenJti: string;
    dpopJkt: string | undefined;
    /** The API the access token is for (RFC 8707) and the permissions it carries; undefined: userinfo only. */
    api: UserApiGrant | undefined;
    /** The organization the tokens are for, and the member's roles there; undefined: none. */
    organization?: TokenOrganization | undefined;
  };

  /** The ID token and access token of one grant (a code exchange or a refresh). */
  async function signTokens(grant: SignedGrant): Promise<{ idToken: string; accessToken: string }> {
    const org = grant.organization;
    // The client's registered algorithm (OIDC Dynamic Client Registration 2): RS256 unless it chose ES256 or EdDSA.
    const key = await keyring.active(grant.alg);
    const iat = Math.floor(now() / 1000);
    const idToken = await signJws(
      key.alg,
      { kid: key.kid, typ: 'JWT' },
      {
        iss: issuer,
        sub: grant.user.id,
        aud: grant.clientId,
        iat,
        nbf: iat,
        exp: iat + ID_TOKEN_TTL_SECONDS,
        auth_time: grant.authTime,
        jti: randomToken('', 16),
        email: grant.user.email,
        email_verified: true,
        amr: grant.amr,
        acr: acrOf(grant.amr, deps.acrClasses),
        // OIDC Core 3.1.3.6 / 2: the nonce of the authentication request, verbatim.
        ...(grant.nonce ? { nonce: grant.nonce } : {}),
        // Our claim: the device behind this sign-in, so a backend can end its session when it is revoked.
        ...(grant.deviceId ? { device_id: grant.deviceId } : {}),
        // OIDC Back-Channel Logout 1.0 2.1: the session's id, which logout tokens name.
        ...(grant.sid ? { sid: grant.sid } : {}),
        // Ours (docs/organizations.md): the organization the app asked for, its name and the member's roles there.
        ...(org ? { org_id: org.id, org_name: org.name, org_roles: org.roles } : {}),
      },
      key.privateKey,
    );
    const accessToken = await signAccessToken(grant, iat);
    return { idToken, accessToken };
  }

  /** The access token of a grant: for its API (RFC 9068, RS256), or for this service's userinfo alone (HS256). */
  async function signAccessToken(grant: SignedGrant, iat: number): Promise<string> {
    const org = grant.organization;
    return grant.api
      ? await signApiAccessToken(keyring, {
          iss: issuer,
          sub: grant.user.id,
          aud: grant.api.audience,
          client_id: grant.clientId,
          scope: grant.api.permissions.join(' '),
          iat,
          jti: grant.accessTokenJti,
          // RFC 9068 2.2.1: how the user signed in.
          auth_time: grant.authTime,
          acr: acrOf(grant.amr, deps.acrClasses),
          amr: grant.amr,
          ...(grant.api.roles ? { roles: grant.api.roles } : {}),
          ...(org ? { org_id: org.id, org_roles: org.roles } : {}),
          ...(grant.dpopJkt ? { cnf: { jkt: grant.dpopJkt } } : {}),
        })
      : signHs256(
          { typ: 'at+jwt' },
          {
            iss: issuer,
            sub: grant.user.id,
            aud: userinfoAudience,
            client_id: grant.clientId,
            scope: grant.scope,
            iat,
            exp: iat + ACCESS_TOKEN_TTL_SECONDS,
            jti: grant.accessTokenJti,
            // RFC 9449 6.1: bound to the proof's key.
            ...(grant.dpopJkt ? { cnf: { jkt: grant.dpopJkt } } : {}),
          },
          accessKey,
        );
  }

  /** The API an access token is for and what it carries (the organization's roles' grants too), or undefined for a sign-in that named none. */
  async function apiGrantOf(
    userId: string,
    audience: string | undefined,
    scope: string,
    organization?: TokenOrganization,
  ): Promise<UserApiGrant | undefined> {
    if (audience === undefined) return undefined;
    const fromOrganization = organization ? await deps.organizations.memberPermissions(userId, organization.id, audience) : [];
    return userApiGrant(deps.apis, userId, audience, scope, fromOrganization);
  }

  /**
   * The organization a grant is for, checked now: a member removed since the sign-in (or an
   * organization deleted) gets invalid_grant, never a token naming it.
   */
  async function organizationOf(
    userId: string,
    organizationId: string | null | undefined,
    amr: readonly string[],
  ): Promise<TokenOrganization | undefined> {
    if (!organizationId) return undefined;
    const membership = await deps.organizations.membership(userId, organizationId);
    if (!membership) throw new OAuthError('invalid_grant', 'The user is not a member of this organization.');
    // An organization that requires MFA gets tokens only from a sign-in that passed a second
    // factor: a refresh switching into it from one that did not, or one whose organization
    // began requiring it since, is refused (the app signs the user in again, with the factor).
    if (membership.organization.mfaRequired && !amr.includes('mfa'))
      throw new OAuthError('invalid_grant', 'This organization requires a second factor: sign in again.');
    return { id: membership.organization.id, name: membership.organization.name, roles: membership.roles };
  }

  /** The payload of one of our access tokens (signature, issuer, audience, type checked), or undefined. */
  async function accessTokenClaims(accessToken: string, currentDate: Date) {
    try {
      const { payload } = await jwtVerify(accessToken, accessKey, {
        issuer,
        audience: userinfoAudience,
        algorithms: ['HS256'],
        typ: 'at+jwt',
        currentDate,
      });
      return payload;
    } catch {
      return undefined;
    }
  }

  // The key set jose verifies against, made once per keyring load (the JWKS object changes when the keyring reloads).
  const localKeySets = new WeakMap<object, ReturnType<typeof createLocalJWKSet>>();
  const localKeySet = (jwks: { keys: JWK[] }) => {
    const known = localKeySets.get(jwks);
    if (known) return known;
    const keys = createLocalJWKSet(jwks);
    localKeySets.set(jwks, keys);
    return keys;
  };

  /** The payload of one of our access tokens for an API (RFC 9068: signature by a JWKS key, issuer, type), or undefined. */
  async function apiAccessTokenClaims(accessToken: string, currentDate: Date): Promise<JWTPayload | undefined> {
    try {
      const keys = localKeySet(await keyring.jwks());
      const { payload } = await jwtVerify(accessToken, keys, { issuer, algorithms: [API_ACCESS_TOKEN_ALG], typ: 'at+jwt', currentDate });
      return payload;
    } catch {
      return undefined;
    }
  }

  /**
   * The code, consumed for this client (RFC 6749 4.1.3), with its user and the client's ID token
   * algorithm; invalid_client or invalid_grant otherwise.
   */
  async function redeemCode(grant: CodeGrant, accessTokenJti: string) {
    // One statement on the way to a token (docs/performance.md, round trips): the client's
    // secret is checked, the code consumed, the user read and the sign-in recorded together.
    // Consumed before any other check: a code presented once is gone, whatever the outcome.
    // A second presentation also revokes the access token the first one got.
    const pkceChallenge = grant.codeVerifier === undefined ? null : (pkceChallengeOf(grant.codeVerifier) ?? MALFORMED_VERIFIER);
    const redeemed = await codes.redeem(grant.code, accessTokenJti, {
      id: grant.clientId,
      secretKeyHash: grant.clientSecret === undefined ? null : clients.secretKeyHash(grant.clientSecret),
      pkceChallenge,
      redirectUri: grant.redirectUri ?? null,
      dpopProof: grant.dpopJkt !== undefined,
    });
    if (!redeemed) {
      // Nothing was consumed: either the client failed to authenticate or the code is not live.
      if (!(await clients.authenticateTokenClient(grant.clientId, grant.clientSecret)))
        throw new OAuthError('invalid_client', 'Client authentication failed.');
      await refuseWithoutRequiredProof(grant);
      // RFC 6749 4.1.2: every token the first redemption issued is revoked, its refresh token family included.
      const firstAccessToken = await codes.revokeReplayed(grant.code);
      if (firstAccessToken) await refreshTokens.revokeFamily(firstAccessToken, 'code_replay');
      throw new OAuthError('invalid_grant', 'The authorization code is invalid, expired or already used.');
    }
    // The code's binding (client, PKCE, redirect_uri) was checked where every redemption is.
    if (redeemed.refused !== undefined) throw new OAuthError('invalid_grant', redeemed.refused);
    const { code, user } = redeemed.redeemed;
    const client = {
      id: grant.clientId,
      idTokenSignedResponseAlg: isSigningAlg(redeemed.redeemed.idTokenAlg) ? redeemed.redeemed.idTokenAlg : 'RS256',
    };
    if (!user) throw new OAuthError('invalid_grant', 'The user of this code no longer exists.');
    return { code, user, client };
  }

  /** RFC 9449 5.2: a client that requires DPoP and sent no proof (its code or refresh token was not spent). */
  async function refuseWithoutRequiredProof(grant: { clientId: string; dpopJkt?: string }): Promise<void> {
    if (grant.dpopJkt === undefined && (await clients.findById(grant.clientId))?.dpopBoundAccessTokens)
      throw new OAuthError('invalid_dpop_proof', 'This client must send a DPoP proof with every token request.');
  }

  return {
    async exchangeCode(grant: CodeGrant): Promise<TokenResponse> {
      const accessTokenJti = randomToken('', 16);
      const { code, user, client } = await redeemCode(grant, accessTokenJti);
      // Delegation may act only on users who signed in to this client (docs/delegation.md): the
      // redeeming statement recorded the pair when the checks above pass (code of this client,
      // PKCE binding equal, user enabled).

      // OIDC Core 11: offline access only for a sign-in bound to a remembered device, which is
      // what revokes it; otherwise the grant is narrowed and the answer's scope says so (RFC 6749 3.3).
      const offlineDevice = code.scope !== null && hasOfflineAccess(code.scope) ? code.deviceId : null;
      const asked = code.scope ?? SCOPE;
      const scope = offlineDevice
        ? asked
        : asked
            .split(' ')
            .filter((value) => value !== OFFLINE_ACCESS)
            .join(' ');
      // RFC 8707: a sign-in that named APIs gets a token for one of them (refused before a token is signed).
      const organization = await organizationOf(user.id, code.organizationId, code.amr);
      const api = await apiGrantOf(user.id, audienceOf(grant.resource, code.resources), scope, organization);
      const signed = await signTokens({
        clientId: client.id,
        alg: client.idTokenSignedResponseAlg,
        user,
        amr: code.amr,
        authTime: code.authTime,
        nonce: code.nonce,
        deviceId: code.deviceId,
        sid: code.sid,
        scope,
        accessTokenJti,
        dpopJkt: grant.dpopJkt,
        api,
        organization,
      });
      const refreshToken = offlineDevice
        ? await refreshTokens.issue({
            id: accessTokenJti,
            clientId: client.id,
            userId: user.id,
            deviceId: offlineDevice,
            scope,
            amr: code.amr,
            authTime: code.authTime,
            sid: code.sid,
            resources: code.resources,
            organizationId: code.organizationId,
            // RFC 9449 5: a public client's refresh token is bound to the key; a confidential client's is bound by its secret.
            dpopJkt: grant.clientSecret === undefined ? (grant.dpopJkt ?? null) : null,
          })
        : undefined;
      return {
        access_token: signed.accessToken,
        token_type: grant.dpopJkt ? 'DPoP' : 'Bearer',
        expires_in: ACCESS_TOKEN_TTL_SECONDS,
        id_token: signed.idToken,
        scope: answerScope(scope, api),
        ...(refreshToken ? { refresh_token: refreshToken } : {}),
      };
    },

    async exchangeDeviceCode(grant: DeviceCodeGrant): Promise<TokenResponse> {
      const client = await clients.authenticateTokenClient(grant.clientId, grant.clientSecret);
      if (!client) throw new OAuthError('invalid_client', 'Client authentication failed.');
      if (!client.deviceCodeGrant) throw new OAuthError('unauthorized_client', 'This client may not use the device authorization grant.');
      await refuseWithoutRequiredProof(grant);
      const approved = await deps.deviceAuthorizations.redeem(grant.deviceCode, client.id);
      // The approval becomes a code of this client, bound to a verifier only this request knows, redeemed at once.
      const codeVerifier = randomToken('', 48);
      const code = await codes.issue({
        clientId: client.id,
        userId: approved.signIn.userId,
        codeChallenge: pkceChallengeOf(codeVerifier) as string,
        amr: approved.signIn.amr,
        authTime: approved.signIn.authTime,
        deviceId: approved.signIn.deviceId,
        scope: approved.scope,
        sid: approved.signIn.sid,
        resources: approved.resources,
      });
      return this.exchangeCode({
        clientId: client.id,
        ...(grant.clientSecret !== undefined ? { clientSecret: grant.clientSecret } : {}),
        code,
        codeVerifier,
        ...(grant.dpopJkt !== undefined ? { dpopJkt: grant.dpopJkt } : {}),
        ...(grant.resource !== undefined ? { resource: grant.resource } : {}),
      });
    },

    async refresh(grant: RefreshGrant): Promise<TokenResponse> {
      let audience: string | undefined;
      let scope = '';
      const accessTokenJti = randomToken('', 16);
      const rotated = await refreshTokens.rotate(
        grant.refreshToken,
        {
          id: grant.clientId,
          secretKeyHash: grant.clientSecret === undefined ? null : clients.secretKeyHash(grant.clientSecret),
          dpopJkt: grant.dpopJkt ?? null,
        },
        accessTokenJti,
        // RFC 6749 6 and RFC 8707 2.2: nothing beyond the sign-in's grant, checked before the token
        // is spent, so a refused request leaves the client its refresh token.
        (family) => {
          audience = audienceOf(grant.resource, family.resources ?? []);
          scope = narrowedScope(grant.scope, family.scope, SCOPES_SUPPORTED);
        },
      );
      if (!rotated) {
        if (!(await clients.authenticateTokenClient(grant.clientId, grant.clientSecret)))
          throw new OAuthError('invalid_client', 'Client authentication failed.');
        await refuseWithoutRequiredProof(grant);
        await refreshTokens.detectReuse(grant.refreshToken, grant.clientId);
        throw new OAuthError('invalid_grant', 'The refresh token is invalid, expired or revoked.');
      }
      const { family } = rotated;
      // The organization asked for now, or the sign-in's; its membership checked now (a removed member is refused).
      const organization = await organizationOf(family.userId, grant.organization ?? family.organizationId, family.amr);
      // The user's roles now: a role removed since the sign-in is gone from this token.
      const api = await apiGrantOf(family.userId, audience, scope, organization);
      const signed = await signTokens({
        clientId: family.clientId,
        alg: isSigningAlg(rotated.idTokenAlg) ? rotated.idTokenAlg : 'RS256',
        user: { id: family.userId, email: rotated.email },
        amr: family.amr,
        authTime: family.authTime,
        deviceId: family.deviceId,
        sid: family.sid,
        scope,
        accessTokenJti,
        dpopJkt: grant.dpopJkt,
        api,
        organization,
      });
      return {
        access_token: signed.accessToken,
        token_type: grant.dpopJkt ? 'DPoP' : 'Bearer',
        expires_in: ACCESS_TOKEN_TTL_SECONDS,
        id_token: signed.idToken,
        scope: answerScope(scope, api),
        refresh_token: rotated.refreshToken,
      };
    },

    async revoke(request: Revocation): Promise<void> {
      // A machine client revokes its own access tokens with its secret too.
      const caller =
        (await clients.authenticateTokenClient(request.clientId, request.clientSecret)) ??
        (request.clientSecret === undefined ? undefined : await clients.authenticateMachine(request.clientId, request.clientSecret));
      if (!caller) throw new OAuthError('invalid_client', 'Client authentication failed.');
      // Ours are told apart by their form, so token_type_hint is not needed (RFC 7009 2.1 lets the server search).
      if (request.token.split('.').length === 3) {
        const at = new Date(now());
        const claims = (await accessTokenClaims(request.token, at)) ?? (await apiAccessTokenClaims(request.token, at));
        if (claims?.jti && claims.client_id === request.clientId && typeof claims.exp === 'number')
          await codes.revokeAccessTokens([{ jti: claims.jti, expiresAt: claims.exp * 1000 }]);
        return;
      }
      await refreshTokens.revoke(request.token, request.clientId, request.dpopJkt ?? null);
    },

    async accessTokenClaims(accessToken: string): Promise<JWTPayload | undefined> {
      const at = new Date(now());
      return (await accessTokenClaims(accessToken, at)) ?? (await apiAccessTokenClaims(accessToken, at));
    },

    async userinfo(accessToken: string, dpopJkt?: string): Promise<UserinfoAnswer | undefined> {
      // A bad token is a 401; a database outage below stays a 503.
      const claims = await accessTokenClaims(accessToken, new Date(now()));
      if (!claims?.jti || boundKeyOf(claims) !== dpopJkt || (await codes.isAccessTokenRevoked(claims.jti))) return undefined;
      const user = claims.sub ? await enabledUsers.findById(claims.sub) : undefined;
      return user && { claims: { sub: user.id, email: user.email, email_verified: true }, clientId: String(claims.client_id) };
    },
  };
}
