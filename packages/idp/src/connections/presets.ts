import type { ConnectionPreset } from 'service-protocol';

/**
 * What each kind of connection brings, from the providers' own documentation. The generic
 * `oidc` connection takes the operator's issuer; a preset fixes it.
 */
export interface Preset {
  /** The issuer the connection is made from (discovery at issuer + /.well-known/openid-configuration). */
  issuer: string | undefined;
  scopes: string[];
  /** The button's default label. */
  name: string;
  /**
   * OpenID Connect with an ID token (every preset but GitHub, which is OAuth 2.0 only: its
   * identity comes from its REST API, the address from /user/emails).
   */
  oidc: boolean;
  /** The provider posts its answer (response_mode=form_post): Apple, when a scope is asked. */
  formPost: boolean;
  /** The client secret is an ES256 JWT signed with the operator's key (Apple). */
  jwtSecret: boolean;
  /**
   * An ID token without the address is completed from the UserInfo endpoint (OIDC Core 5.4).
   * Not Microsoft's (its `email` is vouched for by the ID token's `xms_edov` only, and its
   * UserInfo is Graph's) nor Apple's (no UserInfo endpoint).
   */
  userinfo: boolean;
}

/** GitHub's endpoints (docs.github.com, "Authorizing OAuth apps"; REST "Users" and "Emails"). */
export const GITHUB = {
  issuer: 'https://github.com',
  authorize: 'https://github.com/login/oauth/authorize',
  token: 'https://github.com/login/oauth/access_token',
  user: 'https://api.github.com/user',
  emails: 'https://api.github.com/user/emails',
} as const;

/** Apple's client secret audience (developer.apple.com, "Creating a client secret"). */
export const APPLE_AUDIENCE = 'https://appleid.apple.com';

export const PRESETS: Readonly<Record<ConnectionPreset, Preset>> = {
  oidc: {
    issuer: undefined,
    scopes: ['openid', 'email', 'profile'],
    name: 'OpenID Connect',
    oidc: true,
    formPost: false,
    jwtSecret: false,
    userinfo: true,
  },
  google: {
    issuer: 'https://accounts.google.com',
    scopes: ['openid', 'email', 'profile'],
    name: 'Google',
    oidc: true,
    formPost: false,
    jwtSecret: false,
    userinfo: true,
  },
  // The multi-tenant ("common") endpoint: its metadata's issuer is a template,
  // https://login.microsoftonline.com/{tenantid}/v2.0, each ID token's `iss` is the user's
  // tenant's (`tid` put in it), which openid-client checks (learn.microsoft.com, "Validate the issuer").
  microsoft: {
    issuer: 'https://login.microsoftonline.com/common/v2.0',
    scopes: ['openid', 'email', 'profile'],
    name: 'Microsoft',
    oidc: true,
    formPost: false,
    jwtSecret: false,
    userinfo: false,
  },
  apple: {
    issuer: 'https://appleid.apple.com',
    scopes: ['openid', 'email', 'name'],
    name: 'Apple',
    oidc: true,
    formPost: true,
    jwtSecret: true,
    userinfo: false,
  },
  github: {
    issuer: GITHUB.issuer,
    scopes: ['read:user', 'user:email'],
    name: 'GitHub',
    oidc: false,
    formPost: false,
    jwtSecret: false,
    userinfo: false,
  },
};
