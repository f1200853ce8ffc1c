import type { KeyObject } from 'node:crypto';
import { DEFAULT_ALGORITHMS, DEFAULT_LEEWAY_SECONDS, EXCHANGE_TIMEOUT_MS } from './defaults.js';
import { EXCHANGE_ENV, fromEnv } from './env.js';
import { OAuthExchangeError } from './errors.js';
import { type KeySetResolver, sharedJwksCache } from './jwks.js';
import { importPublicKey, type PublicKeyInput } from './keys.js';
import { type JwtPayload, verifyWithKey, verifyWithKeySet } from './verify-jwt.js';

/**
 * Options of {@link exchangeCodeForClaims}. Options marked "env" fall back to the named
 * environment variable when not given.
 */
export interface ExchangeCodeForClaimsOptions {
  /** Authorization code from the browser library. Required. */
  code: string;
  /** Token endpoint URL. Required; env `OAUTH_TOKEN_ENDPOINT`. */
  oauthTokenUrl?: string;
  /** OAuth client ID. Required; env `OAUTH_CLIENT_ID`. */
  clientId?: string;
  /** The client's secret key, sent as `client_secret`. Required; env `SERVICE_API_KEY`. */
  apiKey?: string;
  /**
   * Static verification key: PEM string (SPKI or X.509 certificate), path to a PEM file, or a
   * Buffer. One of `publicKey` and `jwksUrl` is required; env `OAUTH_PUBLIC_KEY`.
   */
  publicKey?: PublicKeyInput;
  /** Key set URL (recommended over `publicKey`); env `JWKS_URL`. */
  jwksUrl?: string;
  /** PKCE code verifier (RFC 7636), when the browser sent a code_challenge. */
  codeVerifier?: string;
  /** Alias of `codeVerifier`, the name the spec's backend example uses. */
  code_verifier?: string;
  /** Expected `aud`; default the client ID; env `OAUTH_AUDIENCE`. */
  audience?: string;
  /** Expected `iss`; env `OAUTH_ISSUER`. Recommended. */
  issuer?: string;
  /** Clock-skew tolerance in seconds; default 0. */
  leeway?: number;
  /**
   * Allowed ID token `alg` values; default `['RS256']`. Add `ES256` or `EdDSA` when the client
   * is registered with that `id_token_signed_response_alg`. Asymmetric algorithms only.
   */
  algorithms?: string[];
  /** Token endpoint timeout in milliseconds (not in the spec); default 10000. */
  timeoutMs?: number;
  /**
   * A DPoP proof for this token request (RFC 9449 5; `POST` to the token endpoint), sent as the
   * `DPoP` header so the tokens are bound to its key: typically made in the browser with
   * `service-web`'s `dpop()`, signed by the device key. Refused for want of the server's nonce,
   * the call throws an {@link OAuthExchangeError} with `error` `use_dpop_nonce` and `dpopNonce`:
   * a new proof with that nonce exchanges the same code.
   */
  dpop?: string;
}

/** What {@link exchangeCodeForTokens} returns: the verified ID token's claims and the tokens. */
export interface ExchangedTokens {
  claims: Claims;
  /** For the service's userinfo endpoint; bound to the proof's key when `tokenType` is `DPoP`. */
  accessToken: string;
  tokenType: 'Bearer' | 'DPoP';
  /** Seconds. */
  expiresIn: number | undefined;
  scope: string | undefined;
  refreshToken: string | undefined;
}

/** Claims of the verified ID token. Further claims may be present. */
export interface Claims extends JwtPayload {
  /** Subject: the user's ID. */
  sub: string;
  email: string;
  email_verified: boolean;
  aud: string;
  iss: string;
  /** Issued at, Unix seconds. */
  iat: number;
  /** Expiry, Unix seconds. */
  exp: number;
}

/** OIDC Core 2: claims every ID token carries. */
const ID_TOKEN_REQUIRED_CLAIMS = ['iss', 'sub', 'aud', 'exp', 'iat'];

interface ExchangeConfig {
  code: string;
  tokenUrl: URL;
  clientId: string;
  apiKey: string;
  key: KeyObject | KeySetResolver;
  algorithms: string[];
  codeVerifier: string | undefined;
  audience: string;
  issuer: string | undefined;
  leeway: number;
  timeoutMs: number;
  dpop: string | undefined;
}

/**
 * Exchanges an authorization code for the claims of the verified ID token
 * (OAuth 2.0 authorization code grant, RFC 6749 4.1.3, with client_secret_post).
 *
 * It POSTs `grant_type=authorization_code`, `code`, `client_id`, `client_secret` and, with
 * PKCE, `code_verifier` to the token endpoint, then verifies the returned `id_token` (`algorithms`, default RS256;
 * signature, `aud` = `audience` or the client ID, `iss` when given, `exp`/`nbf`/`iat` with
 * `leeway`) against `publicKey` or the key set at `jwksUrl`. Options not given are read from
 * the environment (`SERVICE_API_KEY`, `OAUTH_TOKEN_ENDPOINT`, `OAUTH_CLIENT_ID`, `JWKS_URL` or
 * `OAUTH_PUBLIC_KEY`, `OAUTH_ISSUER`, `OAUTH_AUDIENCE`). Configuration and a static key are
 * checked before the request, so a misconfiguration does not spend the single-use code.
 *
 * @throws {@link OAuthExchangeError} configuration missing (`ERR_OAUTH_EXCHANGE_CONFIG`), code
 *   refused (`ERR_OAUTH_EXCHANGE_FAILED`, `.error` e.g. `invalid_grant`), network or timeout
 * @throws {@link JWTVerificationError} the ID token fails verification
 * @throws {@link InvalidPublicKeyError} `publicKey` is malformed
 *
 * @example
 * ```ts
 * import express from 'express';
 * import { exchangeCodeForClaims, OAuthExchangeError } from 'service-oauth-client';
 *
 * // SERVICE_API_KEY, OAUTH_TOKEN_ENDPOINT, OAUTH_CLIENT_ID, JWKS_URL, OAUTH_ISSUER are set.
 * app.post('/api/login', express.json(), async (req, res) => {
 *   const { code, userid, code_verifier } = req.body;
 *   try {
 *     const claims = await exchangeCodeForClaims({ code, code_verifier, leeway: 10 });
 *     req.session.user = { id: claims.sub, email: claims.email };
 *     res.json({ ok: true });
 *   } catch (err) {
 *     if (err instanceof OAuthExchangeError && err.error === 'invalid_grant') return res.sendStatus(401);
 *     throw err;
 *   }
 * });
 * ```
 */
export async function exchangeCodeForClaims(options: ExchangeCodeForClaimsOptions): Promise<Claims> {
  return (await exchangeCodeForTokens(options)).claims;
}

/**
 * {@link exchangeCodeForClaims}, returning the access token (and refresh token, if granted)
 * with the claims: for a backend that calls the userinfo endpoint, or binds the tokens to a
 * DPoP key (`dpop`).
 *
 * @example
 * ```ts
 * // The page sent the code and a proof made with `await client.dpop({ method: 'POST', url: tokenUrl, nonce })`.
 * const { claims, accessToken, tokenType } = await exchangeCodeForTokens({ code, code_verifier, dpop: req.body.dpop });
 * ```
 */
export async function exchangeCodeForTokens(options: ExchangeCodeForClaimsOptions): Promise<ExchangedTokens> {
  const config = await resolveConfig(options);
  const tokens = await requestTokens(config);
  const idToken = tokens.id_token as string;
  const verifyOptions = {
    algorithms: config.algorithms,
    audience: config.audience,
    ...(config.issuer === undefined ? {} : { issuer: config.issuer }),
    leeway: config.leeway,
  };
  const payload =
    typeof config.key === 'function'
      ? await verifyWithKeySet(idToken, config.key, verifyOptions, ID_TOKEN_REQUIRED_CLAIMS)
      : verifyWithKey(idToken, config.key, verifyOptions, ID_TOKEN_REQUIRED_CLAIMS);
  return {
    claims: payload as Claims,
    accessToken: typeof tokens.access_token === 'string' ? tokens.access_token : '',
    tokenType: typeof tokens.token_type === 'string' && tokens.token_type.toLowerCase() === 'dpop' ? 'DPoP' : 'Bearer',
    expiresIn: typeof tokens.expires_in === 'number' ? tokens.expires_in : undefined,
    scope: typeof tokens.scope === 'string' ? tokens.scope : undefined,
    refreshToken: typeof tokens.refresh_token === 'string' ? tokens.refresh_token : undefined,
  };
}

function configError(message: string): OAuthExchangeError {
  return new OAuthExchangeError(message, { code: 'ERR_OAUTH_EXCHANGE_CONFIG' });
}

function requireString(name: 'oauthTokenUrl' | 'clientId' | 'apiKey', value: unknown): string {
  if (typeof value !== 'string' || value === '') {
    throw configError(`${name} is required (option ${name} or environment variable ${EXCHANGE_ENV[name]})`);
  }
  return value;
}

/** DESIGN: all authentication over HTTPS; plain HTTP only to the local machine. */
function parseEndpoint(name: string, value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw configError(`${name} is not a valid URL`);
  }
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw configError(`${name} must be an https URL (http is allowed only for localhost)`);
  }
  return url;
}

async function resolveConfig(options: ExchangeCodeForClaimsOptions): Promise<ExchangeConfig> {
  if (options === null || typeof options !== 'object') throw configError('options are required');
  if (typeof options.code !== 'string' || options.code === '') throw configError('code is required');
  const tokenUrl = parseEndpoint('oauthTokenUrl', requireString('oauthTokenUrl', fromEnv('oauthTokenUrl', options.oauthTokenUrl)));
  const clientId = requireString('clientId', fromEnv('clientId', options.clientId));
  const apiKey = requireString('apiKey', fromEnv('apiKey', options.apiKey));

  const { codeVerifier, code_verifier: alias } = options;
  if (codeVerifier !== undefined && alias !== undefined && codeVerifier !== alias) {
    throw configError('codeVerifier and code_verifier differ; give one');
  }
  const verifier = codeVerifier ?? alias;
  if (verifier !== undefined && (typeof verifier !== 'string' || verifier === '')) {
    throw configError('codeVerifier must be a non-empty string');
  }

  const leeway = options.leeway ?? DEFAULT_LEEWAY_SECONDS;
  if (typeof leeway !== 'number' || !Number.isFinite(leeway) || leeway < 0) {
    throw configError('leeway must be a non-negative number of seconds');
  }
  const timeoutMs = options.timeoutMs ?? EXCHANGE_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) throw configError('timeoutMs must be a positive integer');

  const algorithms = options.algorithms ?? [...DEFAULT_ALGORITHMS];
  if (!Array.isArray(algorithms) || algorithms.length === 0 || !algorithms.every((alg) => typeof alg === 'string')) {
    throw configError('algorithms must be a non-empty array of algorithm names');
  }

  const audience = fromEnv('audience', options.audience) ?? clientId;
  const issuer = fromEnv('issuer', options.issuer);
  if (typeof audience !== 'string') throw configError('audience must be a string');
  if (issuer !== undefined && typeof issuer !== 'string') throw configError('issuer must be a string');
  if (options.dpop !== undefined && (typeof options.dpop !== 'string' || options.dpop === '' || /[\s,]/.test(options.dpop)))
    throw configError('dpop must be one DPoP proof (a compact JWT)');

  return {
    code: options.code,
    tokenUrl,
    clientId,
    apiKey,
    key: resolveKey(options),
    algorithms,
    codeVerifier: verifier,
    audience,
    issuer,
    leeway,
    timeoutMs,
    dpop: options.dpop,
  };
}

/** Explicit options first (both at once is ambiguous), then JWKS_URL, then OAUTH_PUBLIC_KEY. */
function resolveKey(options: ExchangeCodeForClaimsOptions): KeyObject | KeySetResolver {
  const hasKey = options.publicKey !== undefined && options.publicKey !== '';
  const hasUrl = options.jwksUrl !== undefined && options.jwksUrl !== '';
  if (hasKey && hasUrl) throw configError('give publicKey or jwksUrl, not both');
  if (hasKey) return importPublicKey(options.publicKey as PublicKeyInput);
  const jwksUrl = fromEnv('jwksUrl', options.jwksUrl);
  if (jwksUrl !== undefined) return sharedJwksCache.resolver(parseEndpoint('jwksUrl', jwksUrl));
  const publicKey = fromEnv('publicKey', undefined);
  if (publicKey !== undefined) return importPublicKey(publicKey);
  throw configError(
    `publicKey or jwksUrl is required (options, or environment variable ${EXCHANGE_ENV.jwksUrl} or ${EXCHANGE_ENV.publicKey})`,
  );
}

async function requestTokens(config: ExchangeConfig): Promise<Record<string, unknown>> {
  const form = new URLSearchParams({
    grant_type: 'authorization_code',
    code: config.code,
    client_id: config.clientId,
    client_secret: config.apiKey,
  });
  if (config.codeVerifier !== undefined) form.set('code_verifier', config.codeVerifier);

  const signal = AbortSignal.timeout(config.timeoutMs);
  let response: Response;
  let body: unknown;
  try {
    response = await fetch(config.tokenUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
        ...(config.dpop === undefined ? {} : { dpop: config.dpop }),
      },
      body: form,
      // A redirect would carry the secret to another place: refuse it.
      redirect: 'error',
      signal,
    });
    const text = await response.text();
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
  } catch (cause) {
    if (signal.aborted) {
      throw new OAuthExchangeError(`token endpoint did not answer within ${config.timeoutMs} ms`, {
        code: 'ERR_OAUTH_EXCHANGE_TIMEOUT',
        cause,
      });
    }
    throw new OAuthExchangeError(`token endpoint ${config.tokenUrl.origin} could not be reached`, {
      code: 'ERR_OAUTH_EXCHANGE_NETWORK',
      cause,
    });
  }

  const fields = isObject(body) ? body : {};
  if (response.status !== 200) {
    // RFC 6749 5.2 error response.
    const error = typeof fields.error === 'string' ? fields.error : undefined;
    const description = typeof fields.error_description === 'string' ? fields.error_description : undefined;
    const detail = error === undefined ? `HTTP ${response.status}` : `${error}${description ? `: ${description}` : ''}`;
    throw new OAuthExchangeError(`token endpoint refused the code (${detail})`, {
      code: 'ERR_OAUTH_EXCHANGE_FAILED',
      error,
      description,
      status: response.status,
      dpopNonce: response.headers.get('dpop-nonce') ?? undefined,
    });
  }
  if (typeof fields.id_token !== 'string' || fields.id_token === '') {
    throw new OAuthExchangeError(isObject(body) ? 'token response has no id_token' : 'token response is not a JSON object', {
      code: 'ERR_OAUTH_EXCHANGE_RESPONSE_INVALID',
      status: response.status,
    });
  }
  return fields;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
