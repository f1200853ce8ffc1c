/**
 * Threat: a `__Host-` cookie a browser drops. RFC 6265bis 4.1.3.2 takes a `__Host-` cookie only
 * with `Secure`, no `Domain` and `Path=/`; Chromium refuses any other, so with an https issuer a
 * cookie set with `Path=/account` or `Path=/upstream` never comes back: the account center keeps
 * no session and every upstream sign-in fails at its callback. The service runs here with an https
 * issuer (its listener is plain http: the test's fetch goes to it directly, as a TLS front would),
 * every flow that sets a cookie is driven (the hosted sign-in with the page's key, the language
 * switcher, the account center, the console, an upstream sign-in, the logout), and every
 * `Set-Cookie` it answers is recorded: each `__Host-` one must pass the prefix's rules. Runs on
 * SQLite and, with SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { UpstreamPaths } from 'service-protocol';
import { ACCOUNT_CLIENT_ID, CONSOLE_CLIENT_ID } from '../../src/clients/service.js';
import { connect, signInWith } from '../factors/upstream/upstream-helpers.js';
import { browserKey, hostedSignIn } from '../support/dbsc-helpers.js';
import { registerRawDevice, startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import { relyingParty } from '../support/oidc-token-helpers.js';
import { startUpstream, type TestUpstream } from '../support/upstream.js';

/** Every Set-Cookie the service answered, with the request that got it. */
const seen: { url: string; line: string }[] = [];
const realFetch = globalThis.fetch;

/** https://localhost:PORT is the service's plain listener on 127.0.0.1:PORT; its answers' cookies are recorded. */
const throughFront: typeof fetch = async (input, init) => {
  const url = input instanceof Request ? input.url : String(input);
  if (!url.startsWith('https://localhost:')) return realFetch(input, init);
  const plain = url.replace('https://localhost:', 'http://127.0.0.1:');
  const response = await realFetch(input instanceof Request ? new Request(plain, input) : plain, init);
  for (const line of response.headers.getSetCookie()) seen.push({ url, line });
  return response;
};

const cookiePair = (line: string) => (line.split(';')[0] ?? '').trim();
const nameOf = (line: string) => cookiePair(line).split('=')[0] ?? '';
const cookieValueOf = (line: string) => cookiePair(line).split('=').slice(1).join('=');
const attributes = (line: string) =>
  line
    .split(';')
    .slice(1)
    .map((a) => a.trim().toLowerCase());

describe('__Host- cookies with an https issuer', () => {
  let service: TestService;
  let upstream: TestUpstream;
  before(async () => {
    globalThis.fetch = throughFront;
    service = await startTestService({ testMode: true, env: { SERVICE_IDP_ISSUER: 'https://localhost:0' } });
    upstream = await startUpstream(`${service.url}${UpstreamPaths.callback}`);
  });
  after(async () => {
    globalThis.fetch = realFetch;
    await upstream?.close();
    await service?.close();
  });

  /** A first-party sign-in's two ends (account center or console): the start's cookies, then the callback's with a code issued for `who`. */
  async function firstPartySignIn(base: string, clientId: string, who: { userId: string; deviceId: string | null }, amr: string[]) {
    const start = await fetch(`${base}/signin`, { redirect: 'manual' });
    const login = start.headers.getSetCookie().find((line) => /^__Host-service_(account|console)_login=/.test(line)) ?? '';
    const [state = '', verifier = ''] = cookieValueOf(login).split('.');
    const redirectUri = new URL(start.headers.get('location') ?? '').searchParams.get('redirect_uri') ?? '';
    const code = await service.ctx.codes.issue({
      clientId,
      userId: who.userId,
      codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
      amr,
      authTime: Math.floor(Date.now() / 1000),
      deviceId: who.deviceId,
      redirectUri,
    });
    const callback = new URL(redirectUri);
    callback.search = new URLSearchParams({ code, state, iss: service.url }).toString();
    const answer = await fetch(callback, { redirect: 'manual', headers: { cookie: cookiePair(login) } });
    assert.equal(answer.status, 303, await answer.text());
    return answer;
  }

  it('a __Host- cookie a browser drops: every one the service sets has Path=/, Secure and no Domain', async () => {
    assert.ok(service.url.startsWith('https://localhost:'));
    // The hosted sign-in, its session bound to the page's key; the language switcher; the logout.
    const rp = await relyingParty(service);
    const email = uniqueEmail('host-cookies');
    const { jwk } = await browserKey();
    const { jar } = await hostedSignIn(service, rp, email, { sessionKey: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y } });
    const locale = await fetch(`${service.url}/locale`, {
      method: 'POST',
      redirect: 'manual',
      headers: { origin: service.url, 'content-type': 'application/x-www-form-urlencoded', cookie: jar.header() },
      body: new URLSearchParams({ locale: 'de', return: '/' }),
    });
    assert.equal(locale.status, 303);

    // The account center: the start (with a language: its ui cookie), the callback, the sign-out.
    const member = uniqueEmail('host-cookies-account');
    const { deviceId } = await registerRawDevice(service, member);
    const user = await service.ctx.users.find(member);
    await fetch(`${service.url}/account/signin?ui_locales=de`, { redirect: 'manual' });
    const account = await firstPartySignIn(`${service.url}/account`, ACCOUNT_CLIENT_ID, { userId: user.id, deviceId }, ['hwk']);
    const session = account.headers.getSetCookie().find((line) => nameOf(line) === '__Host-service_account') ?? '';
    const info = await fetch(`${service.url}/account/session`, { headers: { cookie: cookiePair(session) } });
    assert.equal(info.status, 200, 'the account session cookie opens the session');
    const { csrfToken } = (await info.json()) as { csrfToken: string };
    const signOut = await fetch(`${service.url}/account/signout`, {
      method: 'POST',
      headers: {
        cookie: cookiePair(session),
        origin: service.url,
        'sec-fetch-site': 'same-origin',
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ csrf: csrfToken }),
    });
    assert.equal(signOut.status, 200);

    // The operator console on the issuer (a sign-in with an authenticator app as its second factor).
    await service.ctx.operators.add({ email: member, role: 'admin' }, 'cli');
    await firstPartySignIn(`${service.url}/admin`, CONSOLE_CLIENT_ID, { userId: user.id, deviceId }, ['hwk', 'mfa', 'totp']);

    // An upstream sign-in: the flow cookie set at the start and cleared at the callback.
    const connection = (await connect(service, upstream)).id;
    const other = uniqueEmail('host-cookies-upstream');
    upstream.signInAs({ sub: `sub-${other}`, email: other, email_verified: true });
    const { result } = await signInWith(service, connection);
    assert.equal(result.status, 'SUCCESS', JSON.stringify(result));

    const logout = await fetch(`${service.url}/logout?client_id=${rp.clientId}`, { redirect: 'manual', headers: { cookie: jar.header() } });
    await logout.text();

    const hostCookies = seen.filter(({ line }) => nameOf(line).startsWith('__Host-'));
    for (const { url, line } of hostCookies) {
      const attrs = attributes(line);
      const where = `${new URL(url).pathname}: ${line.replace(/=[^;]*/, '=…')}`;
      assert.ok(attrs.includes('path=/'), `Path=/ ${where}`);
      assert.equal(attrs.filter((a) => a.startsWith('path=')).length, 1, where);
      assert.ok(attrs.includes('secure'), `Secure ${where}`);
      assert.ok(!attrs.some((a) => a.startsWith('domain=')), `no Domain ${where}`);
    }
    // Each cookie the service has was seen (set, or cleared) at least once; none went unprefixed over https.
    assert.deepEqual([...new Set(hostCookies.map(({ line }) => nameOf(line)))].sort(), [
      '__Host-service_account',
      '__Host-service_account_login',
      '__Host-service_account_ui',
      '__Host-service_authorization',
      '__Host-service_console',
      '__Host-service_console_login',
      '__Host-service_locale',
      '__Host-service_session',
      '__Host-service_session_bound',
      '__Host-service_upstream',
    ]);
    assert.deepEqual(
      seen.filter(({ line }) => !nameOf(line).startsWith('__Host-')).map(({ line }) => nameOf(line)),
      [],
      'with an https issuer every cookie is __Host-',
    );
  });
});
