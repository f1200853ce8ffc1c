/**
 * The backend half: exchanges the code with service-oauth-client and checks the ID token again
 * with verifyJwt. Prints the claims as JSON for the test to read.
 */
import { type Claims, exchangeCodeForClaims, ServiceOAuthError, verifyJwt } from 'service-oauth-client';
import { signIn } from './browser.js';

const [serviceUrl = '', clientId = '', publishableKey = '', secretKey = '', origin = '', email = ''] = process.argv.slice(2);

// A page's fetch sends its Origin, and the service binds the publishable key to it.
const fromPage: typeof fetch = (input, init) =>
  fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), origin } });

try {
  const browser = await signIn(serviceUrl, publishableKey, email, fromPage);
  const claims: Claims = await exchangeCodeForClaims({
    code: browser.code,
    codeVerifier: browser.codeVerifier,
    oauthTokenUrl: `${serviceUrl}/oauth/token`,
    clientId,
    apiKey: secretKey,
    jwksUrl: `${serviceUrl}/.well-known/jwks.json`,
    issuer: serviceUrl,
  });
  process.stdout.write(`${JSON.stringify({ claims, deviceRemembered: browser.deviceRemembered })}\n`);
} catch (error) {
  process.stderr.write(`${error instanceof ServiceOAuthError ? `${error.code}: ` : ''}${String(error)}\n`);
  process.exitCode = 1;
}

/** Typed use of verifyJwt with a PEM public key (type-checked only: the exchange above verified the token). */
export const verifyWithPem = (idToken: string, pem: string) => verifyJwt(idToken, pem, { issuer: serviceUrl, audience: clientId });
