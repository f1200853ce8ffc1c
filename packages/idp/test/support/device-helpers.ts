/** The device authorization grant (RFC 8628) as a device, and its verification page as a browser drives it (issue 39). */
import assert from 'node:assert/strict';
import type { TestService } from './helpers.js';
import { type CookieJar, hostedBrowser } from './oidc-helpers.js';
import { type RelyingParty, relyingParty } from './oidc-token-helpers.js';

export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** A client allowed the device grant: public (client_id alone) unless `confidential`. */
export async function deviceClient(
  service: TestService,
  options: { name?: string; confidential?: boolean; thirdParty?: boolean } = {},
): Promise<RelyingParty> {
  const keys = await service.ctx.clients.create({
    name: options.name ?? 'Living Room App',
    origins: [],
    redirectUris: ['https://tv.example/cb'],
    ...(options.confidential ? {} : { public: true }),
    deviceCodeGrant: true,
    ...(options.thirdParty ? { thirdParty: true } : {}),
  });
  return { clientId: keys.clientId, ...(keys.secretKey ? { secretKey: keys.secretKey } : {}), redirectUri: 'https://tv.example/cb' };
}

export const deviceCredentials = (client: RelyingParty): Record<string, string> => ({
  client_id: client.clientId,
  ...(client.secretKey ? { client_secret: client.secretKey } : {}),
});

/** POST a form; the status, JSON body and headers. */
export async function postForm(url: string, params: Record<string, string>, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(params),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}

/** RFC 8628 3.1 for `client`: the device authorization response. */
export async function startDevice(service: TestService, client: RelyingParty, params: Record<string, string> = {}) {
  const answer = await postForm(`${service.url}/oauth/device_authorization`, { ...deviceCredentials(client), ...params });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body as {
    device_code: string;
    user_code: string;
    verification_uri: string;
    verification_uri_complete: string;
    expires_in: number;
    interval: number;
  };
}

/** RFC 8628 3.4: one token request of the device. */
export const pollToken = (service: TestService, client: RelyingParty, deviceCode: string, headers: Record<string, string> = {}) =>
  postForm(`${service.url}/oauth/token`, { grant_type: DEVICE_CODE_GRANT, device_code: deviceCode, ...deviceCredentials(client) }, headers);

/** A browser signed in at the hosted pages (a session, a remembered device): its cookie jar. */
export async function signedInBrowser(service: TestService, email: string): Promise<CookieJar> {
  const rp = await relyingParty(service, { name: 'Session Maker', redirectUri: 'https://session.example/cb' });
  const browser = hostedBrowser(service);
  const { authorize } = await import('./oidc-helpers.js');
  const start = await authorize(
    service,
    {
      response_type: 'code',
      client_id: rp.clientId,
      redirect_uri: rp.redirectUri,
      scope: 'openid email',
      state: 'st',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    },
    browser.jar,
  );
  const done = await browser.signIn(start.location ?? '', email);
  assert.equal(done.status, 200, JSON.stringify(done.body));
  return browser.jar;
}

/** GET or POST a page of the service with the browser's cookies, not following redirects. */
export async function page(
  service: TestService,
  jar: CookieJar,
  path: string,
  form?: Record<string, string>,
  origin = service.url,
  headers: Record<string, string> = {},
) {
  const response = await fetch(new URL(path, service.url), {
    method: form ? 'POST' : 'GET',
    redirect: 'manual',
    headers: {
      ...headers,
      cookie: jar.header(),
      ...(form ? { 'content-type': 'application/x-www-form-urlencoded', origin } : {}),
    },
    ...(form ? { body: new URLSearchParams(form) } : {}),
  });
  jar.store(response);
  return { status: response.status, location: response.headers.get('location'), html: await response.text(), headers: response.headers };
}

/**
 * Enters `userCode` on /device in a signed-in browser and follows the sign-in round trip (the
 * session answers /authorize at once): the confirmation page, with its CSRF token.
 */
export async function confirmationPage(service: TestService, jar: CookieJar, userCode: string, headers: Record<string, string> = {}) {
  const entered = await page(service, jar, '/device', { user_code: userCode }, service.url, headers);
  assert.equal(entered.status, 303, entered.html);
  const authorized = await page(service, jar, entered.location ?? '');
  assert.equal(authorized.status, 303, authorized.html);
  assert.ok(authorized.location?.includes('/device/callback?'), authorized.location ?? '');
  const back = await page(service, jar, new URL(authorized.location ?? '', service.url).toString());
  assert.equal(back.status, 303, back.html);
  const confirm = await page(service, jar, back.location ?? '');
  const csrf = confirm.html.match(/name="csrf" value="([^"]+)"/)?.[1] ?? '';
  return { ...confirm, csrf };
}

/** Answers the confirmation page (same origin, the browser's cookies). */
export const answer = (service: TestService, jar: CookieJar, csrf: string, decision: 'approve' | 'deny', origin = service.url) =>
  page(service, jar, '/device/confirm', { csrf, decision }, origin);
