/** The consent page of a third-party client (oidc/consent.ts), driven as a browser's form would (issue 37). */
import { createPkcePair } from 'service-web';
import type { TestService } from './helpers.js';
import { authorize, type CookieJar, type hostedBrowser, paramsOf, redeem } from './oidc-helpers.js';
import { credentials, type RelyingParty } from './oidc-token-helpers.js';

/** GET the consent page at `location` (/signin/consent?request=…) with the browser's cookies: its HTML and form fields. */
export async function consentPage(service: TestService, jar: CookieJar, location: string) {
  const response = await fetch(new URL(location, service.url), { headers: { cookie: jar.header() } });
  const html = await response.text();
  const field = (name: string) => html.match(new RegExp(`name="${name}" value="([^"]*)"`))?.[1] ?? '';
  return { status: response.status, html, headers: response.headers, request: field('request'), csrf: field('csrf') };
}

/** POST the consent form (same origin, the browser's cookies) with `override`s to attack it: the redirect it answers. */
export async function answerConsent(
  service: TestService,
  jar: CookieJar,
  form: { request: string; csrf: string; decision: 'allow' | 'deny' | string },
  headers: Record<string, string> = {},
) {
  const response = await fetch(`${service.url}/signin/consent`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: service.url, cookie: jar.header(), ...headers },
    body: new URLSearchParams(form),
  });
  return { status: response.status, location: response.headers.get('location'), body: await response.text() };
}

/** /authorize for `rp` in `browser` (signing in on the hosted page when it asks): where the browser lands, and the PKCE verifier. */
export async function startSignIn(
  service: TestService,
  rp: RelyingParty,
  email: string,
  browser: ReturnType<typeof hostedBrowser>,
  options: { scope?: string; extra?: Record<string, string | string[]> } = {},
) {
  const pkce = await createPkcePair();
  const start = await authorize(
    service,
    {
      response_type: 'code',
      client_id: rp.clientId,
      redirect_uri: rp.redirectUri,
      scope: options.scope ?? 'openid email',
      state: 'st-consent',
      nonce: 'n-consent',
      code_challenge: pkce.codeChallenge,
      code_challenge_method: 'S256',
      ...options.extra,
    },
    browser.jar,
  );
  let location = start.location ?? '';
  if (location.startsWith('/signin?')) location = (await browser.signIn(location, email)).location ?? '';
  return { location, codeVerifier: pkce.codeVerifier };
}

/** Redeems the code of a redirect to `rp`: the token response. */
export async function redeemAt(service: TestService, rp: RelyingParty, location: string | null, codeVerifier: string) {
  return redeem(service, {
    code: paramsOf(location).code ?? '',
    redirect_uri: rp.redirectUri,
    code_verifier: codeVerifier,
    ...credentials(rp),
  });
}

/** The consent page's request id of a /signin/consent?request=… location. */
export const isConsentPage = (location: string | null) => (location ?? '').startsWith('/signin/consent?request=');
