/** Shared set-up of the upstream sign-in tests: the service, a real upstream provider, a connection, a sign-in run. */
import { generateKeyPairSync } from 'node:crypto';
import { after, before } from 'node:test';
import { UpstreamPaths } from 'service-protocol';
import { APP_ORIGIN, startTestService, type TestService, type TestServiceOptions } from '../../support/helpers.js';
import { type CookieJar, complete, requestIdOf } from '../../support/oidc-helpers.js';
import { fragmentOf, pkcePair, RedirectBrowser, startUpstream, type TestUpstream } from '../../support/upstream.js';

export const RETURN_TO = `${APP_ORIGIN}/signed-in`;
export const atApp = (url: URL) => url.origin === APP_ORIGIN;
export const atCallback = (service: TestService) => (url: URL) => url.href.startsWith(service.url + UpstreamPaths.callback);

export async function connect(service: TestService, upstream: TestUpstream, clients = [service.clientId]) {
  return service.ctx.connections.create(
    { preset: 'oidc', issuer: upstream.issuer, clientId: upstream.clientId, clientSecret: upstream.clientSecret, clients },
    'test',
  );
}

/**
 * The suite's stack: a test-mode service, a real provider on loopback (node-oidc-provider) and
 * one connection the test app shows, started before the suite and closed after it; `started`
 * hands them over.
 */
export function upstreamSuite(
  started: (stack: { service: TestService; upstream: TestUpstream; connection: string }) => void,
  options: TestServiceOptions = {},
) {
  let service: TestService | undefined;
  let upstream: TestUpstream | undefined;
  before(async () => {
    service = await startTestService({ testMode: true, ...options });
    upstream = await startUpstream(`${service.url}${UpstreamPaths.callback}`);
    started({ service, upstream, connection: (await connect(service, upstream)).id });
  });
  after(async () => {
    await upstream?.close();
    await service?.close();
  });
}

/** The user's devices for the test app (browsers it registered), revoked ones included. */
export async function appDevicesOf(service: TestService, email: string) {
  const user = await service.ctx.enabledUsers.findByEmail(email);
  return user ? service.ctx.devices.list({ userId: user.id, clientId: service.clientId, usedSince: 0 }) : [];
}

export function startUrl(service: TestService, connection: string, params: Record<string, string> = {}) {
  const query = new URLSearchParams({
    connection,
    key: service.publishableKey,
    return_to: RETURN_TO,
    state: 'page-state-123',
    code_challenge: params.code_challenge ?? pkcePair().challenge,
    ...params,
  });
  return `${service.url}${UpstreamPaths.start}?${query}`;
}

/** A whole sign-in in a fresh browser: the result in the return URL's fragment, and the page's PKCE verifier. */
export async function signInWith(
  service: TestService,
  connection: string,
  browser = new RedirectBrowser(),
  params: Record<string, string> = {},
) {
  const pkce = pkcePair();
  const end = await browser.go(startUrl(service, connection, { ...params, code_challenge: pkce.challenge }), atApp);
  if (!atApp(end.url)) throw new Error(`did not come back: ${end.status} ${end.body?.slice(0, 300)}`);
  return { result: fragmentOf(end.url), verifier: pkce.verifier, browser };
}

/** The application's backend: the code (bound to the page's verifier) for the ID token's claims. */
export async function claimsFor(service: TestService, code: string, verifier: string): Promise<Record<string, any>> {
  const response = await fetch(service.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      client_id: service.clientId,
      client_secret: service.secretKey,
    }),
  });
  const body = await response.json();
  if (response.status !== 200) throw new Error(`token: ${JSON.stringify(body)}`);
  return JSON.parse(Buffer.from(body.id_token.split('.')[1], 'base64url').toString());
}

/** An application page's sign-in that remembers the browser: its DEVICE_KEY_NEEDED result (ticket, userid) and PKCE verifier. */
export const rememberedSignIn = (service: TestService, connection: string) =>
  signInWith(service, connection, new RedirectBrowser(), { remember_device: '1' });

/** A P-256 public key as the hosted page sends it at the start (device_key: base64url JSON of the JWK). */
export function pageDeviceKey(): string {
  const { kty, crv, x, y } = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
  return Buffer.from(JSON.stringify({ kty, crv, x, y })).toString('base64url');
}

/**
 * "Continue with" on the hosted page for the pending request at `signInLocation` (/signin?request=…),
 * in the browser whose service cookies `jar` holds (the request's binding): the start with the
 * page's device key, the provider, the callback, back at the page (its fragment), then
 * /signin/complete as the page finishes every step. The flow cookie and the callback URL are kept
 * for the replay tests.
 */
export async function hostedUpstreamSignIn(
  service: TestService,
  jar: CookieJar,
  signInLocation: string,
  connection: string,
  deviceKey = pageDeviceKey(),
) {
  const request = requestIdOf(signInLocation);
  const browser = new RedirectBrowser();
  browser.jar.set(new URL(service.url).origin, new Map(jar.cookies));
  const pkce = pkcePair();
  let callback = '';
  let flowCookie = '';
  const atPage = (url: URL) => {
    if (atCallback(service)(url)) {
      callback = url.href;
      flowCookie = browser.cookieHeader(url);
    }
    return url.href.startsWith(`${service.url}/signin?`);
  };
  const start = startUrl(service, connection, { code_challenge: pkce.challenge, request, device_key: deviceKey });
  const end = await browser.go(start, atPage);
  if (!atPage(end.url)) throw new Error(`did not come back: ${end.status} ${end.body?.slice(0, 300)}`);
  const result = fragmentOf(end.url);
  for (const [name, value] of browser.jar.get(new URL(service.url).origin) ?? []) jar.cookies.set(name, value);
  const done =
    result.status === 'SUCCESS' ? await complete(service, jar, { request, code: result.code, codeVerifier: pkce.verifier }) : undefined;
  return { result, done, callback, flowCookie, verifier: pkce.verifier };
}
