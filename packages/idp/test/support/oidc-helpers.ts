/**
 * Driving /authorize and the hosted sign-in without a browser: the hosted page's calls are made
 * with service-web itself, as the page makes them (its origin, the request header).
 */
import { IDBFactory } from 'fake-indexeddb';
import { createPkcePair, ServiceClient } from 'service-web';
import type { TestService } from './helpers.js';

export const RP_CALLBACK = 'https://rp.example/callback';

/** An app registered with the service (a relying party of the hosted sign-in). */
export type App = { clientId: string; secretKey?: string };

/**
 * The hosted-app fixture: an app registered for the hosted sign-in (redirect RP_CALLBACK, no
 * origins), with its MFA policy or its passkey-as-MFA setting when given.
 */
export async function registerApp(service: TestService, name: string, settings: { mfaPolicy?: 'required'; passkeyMfa?: 'no' } = {}) {
  const app = await service.ctx.clients.create({ name, origins: [], redirectUris: [RP_CALLBACK] });
  if (settings.mfaPolicy) await service.ctx.clients.setMfaPolicy(app.clientId, settings.mfaPolicy);
  if (settings.passkeyMfa) await service.ctx.clients.setPasskeyMfa(app.clientId, settings.passkeyMfa);
  return app;
}

/** Authorization request parameters of a registered app (redirect RP_CALLBACK). */
export const appParams = (clientId: string, pkce: { codeChallenge: string }, extra: Record<string, string> = {}) => ({
  response_type: 'code',
  client_id: clientId,
  redirect_uri: RP_CALLBACK,
  scope: 'openid',
  code_challenge: pkce.codeChallenge,
  code_challenge_method: 'S256',
  ...extra,
});

/** A browser's cookies for the service, as far as these tests need them. */
export class CookieJar {
  readonly cookies = new Map<string, string>();
  store(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      this.cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
  }
  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

/** GET /authorize with `params` (a list value: the parameter repeated, as RFC 8707 `resource`), not following the redirect. */
export async function authorize(service: TestService, params: Record<string, string | string[]>, jar = new CookieJar()) {
  const query = new URLSearchParams(Object.entries(params).flatMap(([name, value]) => [value].flat().map((v) => [name, v])));
  const response = await fetch(`${service.url}/authorize?${query}`, {
    redirect: 'manual',
    headers: { cookie: jar.header() },
  });
  jar.store(response);
  return { status: response.status, location: response.headers.get('location'), body: await response.text(), headers: response.headers };
}

/** A simulated browser for the hosted page: its IndexedDB (device keys) and cookie jar persist across sign-ins. */
export function hostedBrowser(service: TestService) {
  const indexedDB = new IDBFactory();
  const jar = new CookieJar();
  return {
    jar,
    /** Runs the hosted page for the pending request at `signInLocation` (/signin?request=…); returns the app's redirect. */
    async signIn(signInLocation: string, email: string, extra: Record<string, unknown> = {}) {
      const requestId = requestIdOf(signInLocation);
      const client = await hostedServiceClient(service, indexedDB, requestId, jar);
      const pkce = await createPkcePair();
      const started = await client.authenticate(email, {
        rememberDevice: true,
        code_challenge: pkce.codeChallenge,
        code_challenge_method: 'S256',
      });
      let code: string | undefined;
      if (started.status === 'SUCCESS') code = started.code;
      else if (started.status === 'OTP_NEEDED') {
        const verified = await client.verifyEmailOtp({ userid: email, otp: await service.latestOtp(email) });
        if (verified.status !== 'SUCCESS') throw new Error(`otp: ${JSON.stringify(verified)}`);
        const device = await client.verifyDevice({ userid: email });
        if (device.status === 'SUCCESS' || device.status === 'DEVICE_REGISTERED') code = device.code;
        else throw new Error(`device: ${JSON.stringify(device)}`);
      } else throw new Error(`authenticate: ${JSON.stringify(started)}`);
      return complete(service, jar, { request: requestId, code: code ?? '', codeVerifier: pkce.codeVerifier, ...extra });
    },
  };
}

/** service-web as the hosted page for `requestId` runs it: the page's key, our origin, the request header. */
export async function hostedServiceClient(service: TestService, indexedDB: IDBFactory, requestId: string, jar = new CookieJar()) {
  const page = await fetch(`${service.url}/signin?request=${requestId}`, { headers: { cookie: jar.header() } });
  const key = (await page.text()).match(/data-publishable-key="([^"]+)"/)?.[1] ?? '';
  const client = new ServiceClient({
    indexedDB,
    fetch: (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set('origin', service.url);
      headers.set('x-service-authorization-request', requestId);
      return fetch(input, { ...init, headers });
    },
  });
  const init = await client.init(key, service.url);
  if (init.status !== 'INITIALIZED') throw new Error(`init: ${JSON.stringify(init)}`);
  return client;
}

/** The pending request id of a /signin?request=… location. */
export const requestIdOf = (location: string | null) => new URL(location ?? '', 'http://x').searchParams.get('request') ?? '';

/** POST /signin/complete as the hosted page does. */
export async function complete(service: TestService, jar: CookieJar, body: Record<string, unknown>, origin = service.url) {
  const response = await fetch(`${service.url}/signin/complete`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin, cookie: jar.header() },
    body: JSON.stringify(body),
  });
  jar.store(response);
  const answer = await response.json();
  return { status: response.status, body: answer, location: answer.location as string | undefined, headers: response.headers };
}

/** The response parameters of a redirect to the client. */
export function paramsOf(location: string | null | undefined): Record<string, string> {
  return Object.fromEntries(new URL(location ?? 'about:blank').searchParams);
}

/** POST /oauth/token for an authorization-endpoint code. */
export async function redeem(service: TestService, params: Record<string, string>, headers: Record<string, string> = {}) {
  const response = await fetch(service.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams({ grant_type: 'authorization_code', ...params }),
  });
  return { status: response.status, body: await response.json() };
}

export function idTokenClaims(idToken: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(idToken.split('.')[1] ?? '', 'base64url').toString());
}
