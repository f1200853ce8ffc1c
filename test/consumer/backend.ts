/**
 * The backend half: exchanges the code the browser obtained with service-oauth-client (the ID
 * token is verified against the service's key set), as a login handler would.
 */
import {
  accessTokenRefusal,
  type Claims,
  exchangeCodeForClaims,
  ServiceOAuthError,
  type VerifiedAccessToken,
  verifyAccessToken,
  verifyJwt,
} from 'service-oauth-client';

export interface ServiceSettings {
  serviceUrl: string;
  clientId: string;
  secretKey: string;
}

export function exchange(settings: ServiceSettings, code: string, codeVerifier: string): Promise<Claims> {
  return exchangeCodeForClaims({
    code,
    codeVerifier,
    oauthTokenUrl: `${settings.serviceUrl}/oauth/token`,
    clientId: settings.clientId,
    apiKey: settings.secretKey,
    jwksUrl: `${settings.serviceUrl}/.well-known/jwks.json`,
    issuer: settings.serviceUrl,
  });
}

/** What a handler would log: the stable code of a library error, or the error itself. */
export const describeError = (error: unknown): string => (error instanceof ServiceOAuthError ? error.code : String(error));

/** Typed use of verifyJwt with a PEM public key (type-checked only). */
export const verifyWithPem = (settings: ServiceSettings, idToken: string, pem: string) =>
  verifyJwt(idToken, pem, { issuer: settings.serviceUrl, audience: settings.clientId });

/** verifyAccessToken as an API would (run by test/packages.test.ts): a DPoP-bound token with its proof. */
export const verifyApiRequest = (
  settings: ServiceSettings,
  token: string,
  proof: string | undefined,
): Promise<VerifiedAccessToken | ReturnType<typeof accessTokenRefusal>> =>
  verifyAccessToken(token, {
    issuer: settings.serviceUrl,
    audience: 'https://api.example.com',
    requiredScopes: ['read:notes'],
    dpop: { method: 'GET', url: 'https://api.example.com/notes', proof },
  }).catch((error: unknown) => accessTokenRefusal(error));

/** verifyAccessToken as an API would (run by test/packages.test.ts): a bearer token for https://api.example.com. */
export const verifyBearer = (
  settings: ServiceSettings,
  token: string,
): Promise<VerifiedAccessToken | ReturnType<typeof accessTokenRefusal>> =>
  verifyAccessToken(token, { issuer: settings.serviceUrl, audience: 'https://api.example.com', requiredScopes: ['read:notes'] }).catch(
    (error: unknown) => accessTokenRefusal(error),
  );
