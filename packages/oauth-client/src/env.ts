/**
 * Environment variables read by exchangeCodeForClaims when an option is not given (spec,
 * Authentication item 7). Explicit options always win; empty values count as unset.
 */
export const EXCHANGE_ENV = {
  apiKey: 'SERVICE_API_KEY',
  oauthTokenUrl: 'OAUTH_TOKEN_ENDPOINT',
  clientId: 'OAUTH_CLIENT_ID',
  jwksUrl: 'JWKS_URL',
  publicKey: 'OAUTH_PUBLIC_KEY',
  issuer: 'OAUTH_ISSUER',
  audience: 'OAUTH_AUDIENCE',
} as const;

export type ExchangeEnvKey = keyof typeof EXCHANGE_ENV;

/** The option if it is set, else the environment variable that stands for it. */
export function fromEnv<T>(key: ExchangeEnvKey, option: T | undefined, env: NodeJS.ProcessEnv = process.env): T | string | undefined {
  if (option !== undefined && option !== null && option !== '') return option;
  const value = env[EXCHANGE_ENV[key]];
  return value === undefined || value === '' ? undefined : value;
}
