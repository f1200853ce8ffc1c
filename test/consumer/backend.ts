/**
 * The backend half: exchanges the code the browser obtained with service-oauth-client (the ID
 * token is verified against the service's key set), as a login handler would.
 */
import { type Claims, exchangeCodeForClaims, ServiceOAuthError, verifyJwt } from 'service-oauth-client';

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
