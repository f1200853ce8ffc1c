import { signJws } from '../crypto/jws.js';
import { ACCESS_TOKEN_TTL_SECONDS } from '../defaults.js';
import { OAuthError } from '../errors.js';
import type { Keyring } from '../keys/keyring.js';

/** RFC 9068 4: the algorithm of access tokens for APIs, the one every resource server supports. */
export const API_ACCESS_TOKEN_ALG = 'RS256';

/** The claims of an access token for an API (RFC 9068 2.2); `exp` follows from `iat`. */
export interface ApiAccessTokenClaims {
  iss: string;
  /** The user, or the machine client itself (RFC 9068 2.2: client_credentials). */
  sub: string;
  aud: string;
  client_id: string;
  scope: string;
  iat: number;
  jti: string;
  auth_time?: number;
  acr?: string;
  amr?: string[];
  /** The user's roles that grant any of the API's permissions, for an API that asks for them. */
  roles?: string[];
  /** The organization the token is for (organizations/) and the member's roles there. */
  org_id?: string;
  org_roles?: string[];
  cnf?: { jkt: string };
}

/**
 * RFC 9068: an access token for an API, which the API checks by itself against the JWKS: signed
 * with the service's RS256 key, `typ: at+jwt`, valid ACCESS_TOKEN_TTL_SECONDS.
 */
export async function signApiAccessToken(keyring: Pick<Keyring, 'active'>, claims: ApiAccessTokenClaims): Promise<string> {
  const key = await keyring.active(API_ACCESS_TOKEN_ALG);
  return signJws(key.alg, { kid: key.kid, typ: 'at+jwt' }, { ...claims, exp: claims.iat + ACCESS_TOKEN_TTL_SECONDS }, key.privateKey);
}

/** A registered API as the token endpoint reads it (apis/): its identifier (the audience) and permissions. */
export interface ApiResource {
  identifier: string;
  permissions: readonly string[];
  /** RFC 7662 4: the client its resource server introspects as (token/introspection.ts), or null. */
  resourceServerClientId: string | null;
  /** Its tokens name the user's roles (`roles`). */
  rolesInToken: boolean;
}

/** What the token endpoint needs of the registered APIs and the users' roles (apis/ ApiAuthorization). */
export interface ApiGrants {
  findApi(identifier: string): Promise<ApiResource | undefined>;
  /** The permissions the user's roles grant on the API. */
  userPermissions(userId: string, apiIdentifier: string): Promise<string[]>;
  /** The names of the user's roles that grant any permission of the API (the `roles` claim). */
  userRolesFor(userId: string, apiIdentifier: string): Promise<string[]>;
  /** The permissions granted to a machine client on the API. */
  clientPermissions(clientId: string, apiIdentifier: string): Promise<string[]>;
}

/**
 * RFC 8707 2.2 at the token endpoint: the API this access token is for, among those the sign-in
 * named at /authorize. One audience per token (our rule, so a token for one API is never
 * accepted by another): several values are refused; none takes the first the sign-in named,
 * and a sign-in that named none gets the userinfo-only token (undefined).
 */
export function audienceOf(requested: string | readonly string[] | undefined, named: readonly string[]): string | undefined {
  if (requested === undefined) return named[0];
  if (typeof requested !== 'string')
    throw new OAuthError('invalid_target', 'Name one resource per token request: each access token is for one API.');
  if (!named.includes(requested)) throw new OAuthError('invalid_target', 'resource was not named in the authorization request.');
  return requested;
}

/** What a user's access token for an API carries: its audience, the permissions, and the roles when the API asks for them. */
export interface UserApiGrant {
  audience: string;
  permissions: string[];
  roles?: string[];
}

/**
 * What a user's access token for `api` carries: the permissions the sign-in asked for (its
 * scope), that the API still has, and that the user's roles grant now (so a role removed since
 * the sign-in is gone at the next refresh), sorted for a stable `scope`; and, when the API asks
 * for them (rolesInToken), the names of the user's roles that grant any of its permissions.
 */
export async function userApiGrant(
  grants: ApiGrants,
  userId: string,
  api: string,
  scope: string,
  /** What the user's roles in the token's organization grant on the API (organizations/), beside their own roles'. */
  organizationPermissions: readonly string[] = [],
): Promise<UserApiGrant> {
  const registered = await grants.findApi(api);
  if (!registered) throw new OAuthError('invalid_target', 'The API of this resource is no longer registered.');
  const held = new Set([...(await grants.userPermissions(userId, api)), ...organizationPermissions]);
  const permissions = scope
    .split(' ')
    .filter((value) => registered.permissions.includes(value) && held.has(value))
    .sort();
  return registered.rolesInToken
    ? { audience: api, permissions, roles: await grants.userRolesFor(userId, api) }
    : { audience: api, permissions };
}

/**
 * RFC 6749 6: a refresh asks for at most what the sign-in was granted (`granted`, its scope),
 * else invalid_scope. Undefined or empty: the whole of it. The OpenID Connect values (`kept`)
 * stay whatever is asked: the ID token and the refresh token are the family's; what narrows is
 * the permissions the access token carries.
 */
export function narrowedScope(requested: string | undefined, granted: string, kept: readonly string[]): string {
  if (requested === undefined || requested.trim() === '') return granted;
  const values = requested.split(' ').filter((value) => value !== '');
  const grantedValues = granted.split(' ');
  if (!values.every((value) => grantedValues.includes(value)))
    throw new OAuthError('invalid_scope', 'The scope asks for more than was granted.');
  return grantedValues.filter((value) => values.includes(value) || kept.includes(value)).join(' ');
}
