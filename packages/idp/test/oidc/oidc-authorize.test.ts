/**
 * The authorization endpoint and the hosted sign-in (issue 14): a code for the app's exact
 * redirect URI with state, iss and an ID token carrying the nonce; single sign-on from the
 * service's session; prompt=none, prompt=login and max_age; the app's MFA policy; the
 * session's idle and absolute lifetimes and its binding to the device.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createPkcePair } from 'service-web';
import { SESSION_ABSOLUTE_LIFETIME_SECONDS, SESSION_IDLE_TIMEOUT_SECONDS } from '../../src/defaults.js';
import { sendClock, startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import { authorize, hostedBrowser, idTokenClaims, paramsOf, RP_CALLBACK, redeem, registerApp } from '../support/oidc-helpers.js';

describe('authorization code flow through the hosted sign-in', () => {
  let service: TestService;
  const clock = sendClock();
  let rp: { clientId: string; secretKey?: string };
  let second: { clientId: string; secretKey?: string };
  before(async () => {
    service = await startTestService({ now: clock.now });
    rp = await registerApp(service, 'Research Portal');
    second = await service.ctx.clients.create({ name: 'Second App', origins: [], redirectUris: ['https://two.example/cb'], public: true });
  });
  after(() => service.close());

  const request = (clientId: string, pkce: { codeChallenge: string }, extra: Record<string, string> = {}) => ({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: RP_CALLBACK,
    scope: 'openid email',
    state: 'st-1',
    nonce: 'n-1',
    code_challenge: pkce.codeChallenge,
    code_challenge_method: 'S256',
    ...extra,
  });

  it('signs in, redirects with code, state and iss, and the token endpoint returns an ID token with the nonce', async () => {
    clock.tick();
    const email = uniqueEmail('authz');
    const browser = hostedBrowser(service);
    const pkce = await createPkcePair();
    const start = await authorize(service, request(rp.clientId, pkce, { login_hint: email }), browser.jar);
    assert.equal(start.status, 303);
    assert.match(start.location ?? '', /^\/signin\?request=/);
    const page = await fetch(new URL(start.location ?? '', service.url), { headers: { cookie: browser.jar.header() } });
    const html = await page.text();
    assert.match(html, /Sign in to Research Portal/);
    assert.match(html, new RegExp(`data-login-hint="${email.replace(/[.]/g, '\\.')}"`));

    const done = await browser.signIn(start.location ?? '', email);
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.ok(done.location?.startsWith(`${RP_CALLBACK}?`));
    const params = paramsOf(done.location);
    assert.equal(params.state, 'st-1');
    assert.equal(params.iss, service.url);
    const tokens = await redeem(service, {
      code: params.code ?? '',
      redirect_uri: RP_CALLBACK,
      code_verifier: pkce.codeVerifier,
      client_id: rp.clientId,
      client_secret: rp.secretKey ?? '',
    });
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    const claims = idTokenClaims(tokens.body.id_token);
    assert.equal(claims.nonce, 'n-1');
    assert.equal(claims.email, email);
    assert.equal(claims.aud, rp.clientId);
    assert.deepEqual(claims.amr, ['otp']);
    assert.equal(claims.auth_time, Math.floor(clock.at / 1000));
  });

  it('signs in to a second app from the session alone (SSO), and honours prompt=login and max_age', async () => {
    clock.tick();
    const email = uniqueEmail('sso');
    const browser = hostedBrowser(service);
    const first = await authorize(service, request(rp.clientId, await createPkcePair()), browser.jar);
    await browser.signIn(first.location ?? '', email);
    const sessionCookie = [...browser.jar.cookies.keys()].find((name) => name.includes('session'));
    assert.ok(sessionCookie, 'the sign-in set a session cookie');

    const pkce = await createPkcePair();
    const sso = await authorize(
      service,
      { ...request(second.clientId, pkce), redirect_uri: 'https://two.example/cb', state: 'two' },
      browser.jar,
    );
    assert.equal(sso.status, 303);
    assert.ok(sso.location?.startsWith('https://two.example/cb?'), `no UI: ${sso.location}`);
    const params = paramsOf(sso.location);
    const tokens = await redeem(service, {
      code: params.code ?? '',
      redirect_uri: 'https://two.example/cb',
      code_verifier: pkce.codeVerifier,
      client_id: second.clientId,
    });
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    assert.equal(idTokenClaims(tokens.body.id_token).email, email);

    // prompt=login and an exceeded max_age both ask for a fresh sign-in despite the session.
    const login = await authorize(service, request(rp.clientId, await createPkcePair(), { prompt: 'login' }), browser.jar);
    assert.match(login.location ?? '', /^\/signin\?request=/);
    clock.at += 120_000;
    const stale = await authorize(service, request(rp.clientId, await createPkcePair(), { max_age: '60' }), browser.jar);
    assert.match(stale.location ?? '', /^\/signin\?request=/);
    const fresh = await authorize(service, request(rp.clientId, await createPkcePair(), { max_age: '3600' }), browser.jar);
    assert.ok(fresh.location?.startsWith(RP_CALLBACK), 'a recent enough sign-in satisfies max_age');
    // max_age=0 is prompt=login (OIDC Core 3.1.2.1), even within the same second; prompt=none then says login_required.
    const zero = await authorize(service, request(rp.clientId, await createPkcePair(), { max_age: '0' }), browser.jar);
    assert.match(zero.location ?? '', /^\/signin\?request=/);
    const silent = await authorize(service, request(rp.clientId, await createPkcePair(), { max_age: '60', prompt: 'none' }), browser.jar);
    assert.equal(paramsOf(silent.location).error, 'login_required');

    // The remembered device signs in again with its key: a new auth_time, no email code.
    const again = await browser.signIn(stale.location ?? '', email);
    assert.equal(again.status, 200);
  });

  it('answers prompt=none with login_required when there is no session, without any page', async () => {
    const none = await authorize(service, request(rp.clientId, await createPkcePair(), { prompt: 'none' }));
    assert.equal(none.status, 303);
    assert.deepEqual(
      { ...paramsOf(none.location), error_description: undefined },
      { error: 'login_required', state: 'st-1', iss: service.url, error_description: undefined },
    );
  });

  it('ends the session after its idle timeout, its absolute lifetime, or when its device is revoked', async () => {
    clock.tick();
    const browser = hostedBrowser(service);
    const email = uniqueEmail('lifetime');
    const signIn = async () => {
      const start = await authorize(service, request(rp.clientId, await createPkcePair()), browser.jar);
      if (start.location?.startsWith('/signin')) await browser.signIn(start.location, email);
    };
    const ssoWorks = async () =>
      (await authorize(service, request(rp.clientId, await createPkcePair(), { prompt: 'none' }), browser.jar)).location?.includes('code=');
    await signIn();
    assert.ok(await ssoWorks());
    clock.at += (SESSION_IDLE_TIMEOUT_SECONDS + 1) * 1000;
    assert.ok(!(await ssoWorks()), 'idle timeout');

    await signIn();
    for (let t = 0; t < SESSION_ABSOLUTE_LIFETIME_SECONDS; t += SESSION_IDLE_TIMEOUT_SECONDS / 2) {
      clock.at += (SESSION_IDLE_TIMEOUT_SECONDS / 2) * 1000;
      if (!(await ssoWorks())) break;
    }
    assert.ok(!(await ssoWorks()), 'absolute lifetime');

    clock.tick();
    await signIn();
    assert.ok(await ssoWorks());
    const user = await service.ctx.enabledUsers.findByEmail(email);
    const devices = await service.ctx.db
      .selectFrom('devices')
      .select('id')
      .where('user_id', '=', user?.id ?? '')
      .execute();
    for (const { id } of devices) await service.ctx.devices.revokeById(id, clock.at);
    assert.ok(!(await ssoWorks()), 'device revoked');
  });

  it('enforces the app`s MFA policy: a session without MFA does not do, and prompt=none says interaction_required', async () => {
    clock.tick();
    const strict = await registerApp(service, 'Strict', { mfaPolicy: 'required' });
    const browser = hostedBrowser(service);
    const first = await authorize(service, request(rp.clientId, await createPkcePair()), browser.jar);
    await browser.signIn(first.location ?? '', uniqueEmail('mfa-policy'));
    const none = await authorize(service, request(strict.clientId, await createPkcePair(), { prompt: 'none' }), browser.jar);
    assert.equal(paramsOf(none.location).error, 'interaction_required');
    const withUi = await authorize(service, request(strict.clientId, await createPkcePair()), browser.jar);
    assert.match(withUi.location ?? '', /^\/signin\?request=/);
  });

  it('accepts the request as a POST form (OIDC Core 3.1.2.1)', async () => {
    const response = await fetch(`${service.url}/authorize`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(request(rp.clientId, await createPkcePair(), { prompt: 'none' })),
    });
    assert.equal(response.status, 303);
    assert.equal(paramsOf(response.headers.get('location')).error, 'login_required');
  });

  it('serves the QR encoder of the TOTP enrollment step from its own origin, as an ES module', async () => {
    const response = await fetch(`${service.url}/signin/qr.js`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/javascript/);
    const source = await response.text();
    assert.match(source, /export \{[^}]*\bencode\b/, 'it exports encode, which signin.js imports');
    assert.doesNotMatch(source, /^\s*import\s/m, 'self-contained: no further request');
    assert.match(await (await fetch(`${service.url}/signin/signin.js`)).text(), /import\(["']\/signin\/qr\.js["']\)/);
  });

  it('publishes the authorization endpoint in discovery', async () => {
    const metadata = await (await fetch(`${service.url}/.well-known/openid-configuration`)).json();
    assert.equal(metadata.authorization_endpoint, `${service.url}/authorize`);
    assert.deepEqual(metadata.code_challenge_methods_supported, ['S256']);
    assert.deepEqual(metadata.prompt_values_supported, ['none', 'login', 'consent']);
    assert.deepEqual(metadata.response_types_supported, ['code']);
    assert.equal(metadata.authorization_response_iss_parameter_supported, true);
  });
});
