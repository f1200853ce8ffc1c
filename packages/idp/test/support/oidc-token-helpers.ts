/**
 * Refresh, revocation and logout requests as a relying party's backend (or its browser) sends
 * them, on top of the hosted sign-in of oidc-helpers.ts.
 */
import { createPkcePair } from 'service-web';
import { startTestService, type TestService } from './helpers.js';
import { authorize, hostedBrowser, paramsOf, RP_CALLBACK, redeem } from './oidc-helpers.js';

export interface RelyingParty {
  clientId: string;
  secretKey?: string;
  redirectUri: string;
}

/** A registered relying party: confidential unless `public`, with its redirect and post-logout URIs and its page origins. */
export async function relyingParty(
  service: TestService,
  options: { name?: string; public?: boolean; redirectUri?: string; postLogoutRedirectUris?: string[]; origins?: string[] } = {},
): Promise<RelyingParty> {
  const redirectUri = options.redirectUri ?? RP_CALLBACK;
  const keys = await service.ctx.clients.create({
    name: options.name ?? 'Relying Party',
    origins: options.origins ?? [],
    redirectUris: [redirectUri],
    ...(options.public ? { public: true } : {}),
    postLogoutRedirectUris: options.postLogoutRedirectUris ?? [],
  });
  return { clientId: keys.clientId, ...(keys.secretKey ? { secretKey: keys.secretKey } : {}), redirectUri };
}

/**
 * A service on `now` with three relying parties: `rp` (confidential, RP_CALLBACK), `other`
 * (another confidential app) and `spa` (public): the cast of the token theft and revocation cases.
 */
export async function startWithRelyingParties(now: () => number) {
  const service = await startTestService({ now });
  return {
    service,
    rp: await relyingParty(service),
    other: await relyingParty(service, { name: 'Other App', redirectUri: 'https://other.example/cb' }),
    spa: await relyingParty(service, { name: 'SPA', public: true, redirectUri: 'https://spa.example/cb' }),
  };
}

/** The client's credentials as form fields (client_secret_post, or client_id alone for a public client). */
export const credentials = (rp: RelyingParty): Record<string, string> => ({
  client_id: rp.clientId,
  ...(rp.secretKey ? { client_secret: rp.secretKey } : {}),
});

/** Signs `email` in through /authorize and the hosted page (or the browser's session): the code, not yet redeemed. */
export async function signInForCode(
  service: TestService,
  rp: RelyingParty,
  email: string,
  options: { scope?: string; browser?: ReturnType<typeof hostedBrowser>; extra?: Record<string, string | string[]> } = {},
) {
  const browser = options.browser ?? hostedBrowser(service);
  const pkce = await createPkcePair();
  const start = await authorize(
    service,
    {
      response_type: 'code',
      client_id: rp.clientId,
      redirect_uri: rp.redirectUri,
      scope: options.scope ?? 'openid email offline_access',
      state: 'st',
      nonce: 'n-0',
      code_challenge: pkce.codeChallenge,
      code_challenge_method: 'S256',
      ...options.extra,
    },
    browser.jar,
  );
  let location = start.location;
  if (location?.startsWith('/signin')) location = (await browser.signIn(location, email)).location ?? null;
  const code = paramsOf(location).code;
  if (!code) throw new Error(`no code: ${location}`);
  return { code, codeVerifier: pkce.codeVerifier, browser, location: location ?? '' };
}

/**
 * Signs `email` in through /authorize and the hosted page (or the browser's session) and
 * redeems the code: the token response, and the browser (its cookies hold the session).
 */
export async function signIn(
  service: TestService,
  rp: RelyingParty,
  email: string,
  options: {
    scope?: string;
    browser?: ReturnType<typeof hostedBrowser>;
    extra?: Record<string, string | string[]>;
    /** Headers of the code's token request (a DPoP proof), made when the code is ready. */
    redeemHeaders?: () => Promise<Record<string, string>>;
  } = {},
) {
  const { code, codeVerifier, browser } = await signInForCode(service, rp, email, options);
  const tokens = await redeem(
    service,
    { code, redirect_uri: rp.redirectUri, code_verifier: codeVerifier, ...credentials(rp) },
    (await options.redeemHeaders?.()) ?? {},
  );
  if (tokens.status !== 200) throw new Error(`token: ${JSON.stringify(tokens.body)}`);
  return { tokens: tokens.body as Record<string, string>, browser, code, codeVerifier };
}

/** POST /oauth/token with grant_type=refresh_token. */
export async function refresh(service: TestService, params: Record<string, string>, headers: Record<string, string> = {}) {
  const response = await fetch(service.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams({ grant_type: 'refresh_token', ...params }),
  });
  return { status: response.status, body: await response.json() };
}

/** POST /oauth/revoke (RFC 7009). */
export async function revoke(service: TestService, params: Record<string, string>, headers: Record<string, string> = {}) {
  const response = await fetch(`${service.url}/oauth/revoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(params),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}

/** GET /oauth/userinfo with a bearer token: its status. */
export async function userinfoStatus(service: TestService, accessToken: string): Promise<number> {
  const response = await fetch(`${service.url}/oauth/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });
  await response.arrayBuffer();
  return response.status;
}

/** POST /oauth/introspect (RFC 7662), with client_secret_post fields in `params` or `headers` (Basic). */
export async function introspect(service: TestService, params: Record<string, string>, headers: Record<string, string> = {}) {
  const response = await fetch(`${service.url}/oauth/introspect`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(params),
  });
  return { status: response.status, body: await response.json(), headers: response.headers };
}

/** RFC 6749 2.3.1 client_secret_basic: the Authorization header of a confidential client. */
export const basicAuthorization = (rp: RelyingParty): Record<string, string> => ({
  authorization: `Basic ${Buffer.from(`${encodeURIComponent(rp.clientId)}:${encodeURIComponent(rp.secretKey ?? '')}`).toString('base64')}`,
});
