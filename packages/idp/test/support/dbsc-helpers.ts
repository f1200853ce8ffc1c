/**
 * A browser's side of Device Bound Session Credentials (W3C draft), written with jose: its key,
 * the `Secure-Session-Response` JWT, the registration header's parts, and the service session
 * seen from /authorize.
 */
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { exportJWK, generateKeyPair, type CryptoKey as JoseKey, type JWK, SignJWT } from 'jose';
import { sendClock, startTestService, type TestService } from './helpers.js';
import { authorize, type CookieJar, hostedBrowser } from './oidc-helpers.js';
import { type RelyingParty, relyingParty } from './oidc-token-helpers.js';

export interface BrowserKey {
  privateKey: JoseKey;
  jwk: JWK;
}

export async function browserKey(): Promise<BrowserKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  return { privateKey, jwk: await exportJWK(publicKey) };
}

/** The draft's `Secure-Session-Response` JWT, as Chromium makes it: header alg, typ, jwk; payload jti. */
export function sessionResponse(key: BrowserKey, challenge: string, signer?: JoseKey): Promise<string> {
  return new SignJWT({ jti: challenge }).setProtectedHeader({ alg: 'ES256', typ: 'dbsc+jwt', jwk: key.jwk }).sign(signer ?? key.privateKey);
}

/** The parts of a `Secure-Session-Registration` header (an RFC 8941 list of one inner list with parameters). */
export function parseRegistration(header: string | null) {
  const match = /^\(([A-Z0-9 ]+)\);path="([^"]+)";challenge="([^"]+)"$/.exec(header ?? '');
  assert.ok(match, `Secure-Session-Registration: ${header}`);
  return { algs: match[1]?.split(' '), path: match[2] ?? '', challenge: match[3] ?? '' };
}

/**
 * Signs in through /authorize and the hosted page; the jar then holds the session cookie.
 * `extra`: more of /signin/complete's body (the page's `sessionKey`).
 */
export async function hostedSignIn(service: TestService, rp: RelyingParty, email: string, extra: Record<string, unknown> = {}) {
  const browser = hostedBrowser(service);
  const start = await authorize(service, authorizeParams(rp), browser.jar);
  const done = await browser.signIn(start.location ?? '', email, extra);
  assert.equal(done.status, 200, JSON.stringify(done.body));
  return { jar: browser.jar, registration: done.headers.get('secure-session-registration') };
}

export const authorizeParams = (rp: RelyingParty) => ({
  response_type: 'code',
  client_id: rp.clientId,
  redirect_uri: rp.redirectUri,
  scope: 'openid email',
  state: 'st',
  code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
  code_challenge_method: 'S256',
});

/** Whether the browser of `jar` is signed in: /authorize answers with a code at once (SSO), not the page. */
export async function signedIn(service: TestService, rp: RelyingParty, jar: CookieJar): Promise<boolean> {
  const answer = await authorize(service, { ...authorizeParams(rp), prompt: 'none' }, jar);
  return new URL(answer.location ?? '', service.url).searchParams.has('code');
}

export async function dbscPost(service: TestService, path: string, jar: CookieJar, headers: Record<string, string> = {}) {
  const response = await fetch(service.url + path, { method: 'POST', headers: { cookie: jar.header(), ...headers } });
  jar.store(response);
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}

/** The hosted page's side of the DBSC fallback: its session key signs in, the interstitial's challenge, the renewal post. */
export async function pageKeySignIn(service: TestService, rp: RelyingParty, email: string) {
  const key = await browserKey();
  const { kty, crv, x, y } = key.jwk;
  const { jar } = await hostedSignIn(service, rp, email, { sessionKey: { kty, crv, x, y } });
  return { jar, key };
}

/** The page's proof: the draft's JWT shape without the `jwk` header (the service has the key). */
export function pageProof(key: BrowserKey, challenge: string, signer?: JoseKey): Promise<string> {
  return new SignJWT({ jti: challenge }).setProtectedHeader({ alg: 'ES256', typ: 'dbsc+jwt' }).sign(signer ?? key.privateKey);
}

/** /authorize as a browser sees it: the renewal interstitial's challenge and next URL, or none. */
export async function interstitial(service: TestService, rp: RelyingParty, jar: CookieJar) {
  const answer = await authorize(service, { ...authorizeParams(rp), prompt: 'none' }, jar);
  const challenge = /data-challenge="([^"]+)"/.exec(answer.body)?.[1];
  const next = /data-continue="([^"]+)"/.exec(answer.body)?.[1]?.replaceAll('&amp;', '&');
  return { status: answer.status, challenge, next, csp: answer.headers.get('content-security-policy') };
}

/** POST /signin/session/renew as the interstitial's script does (our origin unless told). */
export async function renewPost(service: TestService, jar: CookieJar, body: Record<string, unknown>, origin = service.url) {
  const response = await fetch(`${service.url}/signin/session/renew`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin, cookie: jar.header() },
    body: JSON.stringify(body),
  });
  jar.store(response);
  return { status: response.status, body: await response.json(), setCookie: response.headers.getSetCookie() };
}

/**
 * The suites of the bound session share this set-up: a test service on a clock the test moves
 * (past send spacing, past the short cookie) and one relying party, started before the suite
 * and closed after it. Read `service` and `rp` inside tests (they exist once `before` ran).
 */
export function boundSessionSuite(): { readonly service: TestService; readonly rp: RelyingParty; clock: ReturnType<typeof sendClock> } {
  const clock = sendClock();
  let service: TestService | undefined;
  let rp: RelyingParty | undefined;
  before(async () => {
    service = await startTestService({ now: clock.now });
    rp = await relyingParty(service);
  });
  after(() => service?.close());
  return {
    clock,
    get service() {
      assert.ok(service, 'the suite has started');
      return service;
    },
    get rp() {
      assert.ok(rp, 'the suite has started');
      return rp;
    },
  };
}
