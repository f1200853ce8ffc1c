import { createPrivateKey } from 'node:crypto';
import { SignJWT } from 'jose';
import * as oidc from 'openid-client';
import { APPLE_AUDIENCE, GITHUB, PRESETS } from '../../connections/presets.js';
import type { OpenConnection } from '../../connections/service.js';
import { isLoopback } from '../../connections/service.js';
import { APPLE_CLIENT_SECRET_TTL_SECONDS, UPSTREAM_METADATA_CACHE_SECONDS, UPSTREAM_TIMEOUT_SECONDS } from '../../defaults.js';

/** Who the provider says signed in. `subject` is the link; the address only matches when verified. */
export interface UpstreamIdentity {
  subject: string;
  email: string | undefined;
  emailVerified: boolean;
  name: string | undefined;
  /** The provider's tokens, kept (sealed) only where the connection says so. */
  tokens: Record<string, unknown>;
}

/** What the callback must check, as the start stored it (sealed in the browser's flow cookie). */
export interface FlowChecks {
  state: string;
  nonce: string;
  codeVerifier: string;
}

export type UpstreamFetch = typeof fetch;

/**
 * The relying party towards upstream providers: openid-client (OpenID Certified) does the
 * protocol: discovery, the authorization URL, the code exchange with PKCE, `state` and the
 * RFC 9207 `iss` response parameter checked, and the ID token validated (signature from the
 * provider's JWKS, `iss`, `aud`, `exp`, `nonce`; Entra's tenant `iss` template), the UserInfo
 * answer's `sub` against the ID token's. What is ours: each preset's differences (Apple's JWT client secret and form_post, GitHub's REST identity).
 */
export function createUpstreamProvider({
  redirectUri,
  now,
  fetch: upstreamFetch,
}: {
  redirectUri: string;
  now: () => number;
  /** Tests route providers' fixed hosts (Google, Apple, GitHub, Microsoft) to local servers. */
  fetch?: UpstreamFetch;
}) {
  const cache = new Map<string, { config: oidc.Configuration; expiresAt: number }>();

  const execute = (issuer: string) => (isLoopback(new URL(issuer).hostname) ? [oidc.allowInsecureRequests] : []);

  /** Apple's client secret: an ES256 JWT signed by the operator's key (developer.apple.com, "Creating a client secret"). */
  async function appleSecret(connection: OpenConnection): Promise<string> {
    const at = Math.floor(now() / 1000);
    return new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: connection.appleKeyId ?? '' })
      .setIssuer(connection.appleTeamId ?? '')
      .setSubject(connection.clientId)
      .setAudience(APPLE_AUDIENCE)
      .setIssuedAt(at)
      .setExpirationTime(at + APPLE_CLIENT_SECRET_TTL_SECONDS)
      .sign(createPrivateKey(connection.secret ?? ''));
  }

  async function configure(connection: OpenConnection): Promise<oidc.Configuration> {
    const key = `${connection.id}:${connection.updatedAt}`;
    const cached = cache.get(key);
    if (cached && cached.expiresAt > now()) return cached.config;
    const preset = PRESETS[connection.preset];
    const secret = preset.jwtSecret ? await appleSecret(connection) : connection.secret;
    const auth = secret === undefined ? oidc.None() : oidc.ClientSecretPost(secret);
    const options = {
      execute: execute(connection.issuer),
      timeout: UPSTREAM_TIMEOUT_SECONDS,
      ...(upstreamFetch ? { [oidc.customFetch]: upstreamFetch } : {}),
    };
    let config: oidc.Configuration;
    if (preset.oidc) {
      config = await oidc.discovery(new URL(connection.issuer), connection.clientId, undefined, auth, options);
    } else {
      // GitHub is OAuth 2.0 only: no discovery, its endpoints are documented.
      config = new oidc.Configuration(
        { issuer: GITHUB.issuer, authorization_endpoint: GITHUB.authorize, token_endpoint: GITHUB.token },
        connection.clientId,
        undefined,
        auth,
      );
      if (upstreamFetch) config[oidc.customFetch] = upstreamFetch;
      for (const extension of options.execute) extension(config);
    }
    // openid-client checks an ID token's (and a signed UserInfo answer's) signature against the
    // provider's JWKS only when asked; TLS cannot stand in for it (loopback providers are plain http).
    oidc.enableNonRepudiationChecks(config);
    // A JWT secret is minted for each cached configuration and lives a few minutes; the metadata an hour.
    const lifetime = preset.jwtSecret ? (APPLE_CLIENT_SECRET_TTL_SECONDS - 60) * 1000 : UPSTREAM_METADATA_CACHE_SECONDS * 1000;
    for (const [k, v] of cache) if (k.startsWith(`${connection.id}:`) || v.expiresAt <= now()) cache.delete(k);
    cache.set(key, { config, expiresAt: now() + lifetime });
    return config;
  }

  return {
    /** The provider's authorization URL for this sign-in (authorization code, PKCE S256, state, nonce). */
    async authorizationUrl(connection: OpenConnection, checks: FlowChecks): Promise<string> {
      const config = await configure(connection);
      const preset = PRESETS[connection.preset];
      return oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: connection.scopes.join(' '),
        state: checks.state,
        ...(preset.oidc ? { nonce: checks.nonce } : {}),
        code_challenge: await oidc.calculatePKCECodeChallenge(checks.codeVerifier),
        code_challenge_method: 'S256',
        // Apple posts the answer when a scope is asked (its documentation: form_post is required then).
        ...(preset.formPost ? { response_mode: 'form_post' } : {}),
      }).href;
    },

    /**
     * The provider's answer (the callback's parameters, from its query or its form post) traded
     * for the identity, every check made by openid-client; throws when anything does not check out.
     */
    async identity(connection: OpenConnection, params: URLSearchParams, checks: FlowChecks): Promise<UpstreamIdentity> {
      const config = await configure(connection);
      const preset = PRESETS[connection.preset];
      const current = new URL(redirectUri);
      for (const [k, v] of params) if (k !== 'user') current.searchParams.append(k, v);
      const tokens = await oidc.authorizationCodeGrant(config, current, {
        pkceCodeVerifier: checks.codeVerifier,
        expectedState: checks.state,
        ...(preset.oidc ? { expectedNonce: checks.nonce, idTokenExpected: true } : {}),
      });
      const kept = { ...tokens } as Record<string, unknown>;
      if (!preset.oidc) return { ...(await githubIdentity(tokens.access_token)), tokens: kept };
      const idToken = tokens.claims();
      if (!idToken) throw new Error('no ID token');
      const claims = await withUserinfo(config, connection, idToken, tokens.access_token);
      const email = typeof claims.email === 'string' ? claims.email : undefined;
      return {
        subject: idToken.sub,
        email,
        emailVerified: emailVerified(connection, claims),
        name: nameOf(connection, claims, params),
        tokens: kept,
      };
    },
  };

  /**
   * The ID token's claims, with the address from the UserInfo endpoint when the ID token lacks
   * `email` or `email_verified` (OIDC Core 5.4: with the code flow, a scope's claims may come
   * only from UserInfo; node-oidc-provider's and Zitadel's default). The pair is taken together,
   * never one half from each; openid-client refuses an answer whose `sub` is not the ID token's
   * (OIDC Core 5.3.2), which fails the sign-in.
   */
  async function withUserinfo(
    config: oidc.Configuration,
    connection: OpenConnection,
    idToken: oidc.IDToken,
    accessToken: string,
  ): Promise<Record<string, unknown>> {
    const complete = typeof idToken.email === 'string' && idToken.email_verified !== undefined;
    if (complete || !PRESETS[connection.preset].userinfo || !config.serverMetadata().userinfo_endpoint) return idToken;
    const userinfo = await oidc.fetchUserInfo(config, accessToken, idToken.sub);
    return {
      ...idToken,
      email: userinfo.email,
      email_verified: userinfo.email_verified,
      ...(idToken.name === undefined ? { name: userinfo.name } : {}),
    };
  }

  /** GitHub's user id (the subject) and its primary address, only when GitHub verified it (REST "List email addresses"). */
  async function githubIdentity(accessToken: string): Promise<Omit<UpstreamIdentity, 'tokens'>> {
    const get = async (url: string) => {
      const response = await (upstreamFetch ?? fetch)(url, {
        headers: {
          authorization: `Bearer ${accessToken}`,
          accept: 'application/vnd.github+json',
          'x-github-api-version': '2022-11-28',
          'user-agent': 'service-idp',
        },
        signal: AbortSignal.timeout(UPSTREAM_TIMEOUT_SECONDS * 1000),
      });
      if (!response.ok) throw new Error(`GitHub answered ${response.status}`);
      return response.json() as Promise<unknown>;
    };
    const [user, emails] = await Promise.all([get(GITHUB.user), get(GITHUB.emails)]);
    const id = (user as { id?: unknown }).id;
    if (typeof id !== 'number' && typeof id !== 'string') throw new Error('GitHub user without id');
    const primary = Array.isArray(emails)
      ? (emails as { email?: unknown; primary?: unknown; verified?: unknown }[]).find((e) => e.primary === true)
      : undefined;
    const name = (user as { name?: unknown }).name;
    return {
      subject: String(id),
      email: typeof primary?.email === 'string' ? primary.email : undefined,
      emailVerified: primary?.verified === true,
      name: typeof name === 'string' ? name : undefined,
    };
  }
}

export type UpstreamProvider = ReturnType<typeof createUpstreamProvider>;

/**
 * Whether the provider vouches for the address. OIDC Core 5.1 `email_verified` (Apple sends
 * the string "true"). Microsoft's `email` is not verified by Entra and has no such claim; only
 * `xms_edov` (the optional claim "email domain owner verified") makes it so (learn.microsoft.com,
 * "Migrate away from using email claims for user identification").
 */
function emailVerified(connection: OpenConnection, claims: Record<string, unknown>): boolean {
  if (connection.preset === 'microsoft') return claims.xms_edov === true || claims.xms_edov === 'true' || claims.xms_edov === 1;
  return claims.email_verified === true || claims.email_verified === 'true';
}

/** The name: the ID token's (or UserInfo's), or Apple's `user` form field, sent on the first sign-in only. */
function nameOf(connection: OpenConnection, claims: Record<string, unknown>, params: URLSearchParams): string | undefined {
  if (typeof claims.name === 'string') return claims.name;
  if (connection.preset !== 'apple') return undefined;
  try {
    const user = JSON.parse(params.get('user') ?? 'null') as { name?: { firstName?: string; lastName?: string } } | null;
    const parts = [user?.name?.firstName, user?.name?.lastName].filter((p): p is string => typeof p === 'string' && p.length > 0);
    return parts.length ? parts.join(' ') : undefined;
  } catch {
    return undefined;
  }
}
