/**
 * Attacks on a passkey sign-in through the hosted pages and the SSO session it opens.
 * Session fixation: a session cookie planted in the victim's browser before the sign-in is
 * ended, and the sign-in gets a new value. Cross-site POST: another site's page cannot finish
 * the sign-in (/signin/complete checks Origin) nor run the passkey ceremony as the hosted page
 * (the hosted key only works from the issuer's origin), and a refused attempt changes nothing.
 * Assertion for another pending request: the hosted page's ceremony is bound to its pending
 * request and that request to this browser (its binding cookie), so an assertion captured
 * before it was sent is refused for another request or from another browser; a sent one is
 * refused as a replay; the hosted code a passkey earned finishes nothing without the page's PKCE
 * verifier, nor, in the same browser, the request of an app that does not count a passkey as MFA
 * when the passkey counted as MFA for the first app.
 * Runs on SQLite and, with SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Paths } from 'service-protocol';
import { createPkcePair } from 'service-web';
import { sessionCookieName } from '../../src/oidc/routes.js';
import type { TestService } from '../support/helpers.js';
import { type App, appParams, authorize, CookieJar, complete, paramsOf, registerApp, requestIdOf } from '../support/oidc-helpers.js';
import {
  hostedPasskeySignIn,
  hostedPost,
  hostedUserWithPasskey,
  passkeyToApp,
  startHostedPasskeyService,
} from '../support/oidc-passkey-helpers.js';
import { getAssertion } from '../support/webauthn-authenticator.js';

describe('attacks on the hosted passkey sign-in and its session', () => {
  let service: TestService;
  let app: App;
  let strict: App;
  let cookieName: string;
  before(async () => {
    service = await startHostedPasskeyService();
    app = await registerApp(service, 'App');
    strict = await registerApp(service, 'Strict', { passkeyMfa: 'no' });
    cookieName = sessionCookieName(service.url);
  });
  after(() => service.close());

  /** A new pending request of `client` in the browser `jar`: its id. */
  const pending = async (jar: CookieJar, client: App = app) => {
    const start = await authorize(service, appParams(client.clientId, await createPkcePair()), jar);
    return requestIdOf(start.location);
  };
  const silentCode = async (jar: CookieJar) =>
    paramsOf((await authorize(service, appParams(app.clientId, await createPkcePair(), { prompt: 'none' }), jar)).location);

  it('session fixation: a planted session cookie is ended by the passkey sign-in, which gets a new value', async () => {
    // The attacker signs in with their own passkey and plants their session cookie in the victim's browser.
    const attacker = await hostedUserWithPasskey(service, app.clientId);
    const attackerJar = new CookieJar();
    await passkeyToApp(service, attackerJar, app.clientId, attacker.credential);
    const planted = attackerJar.cookies.get(cookieName) ?? '';
    assert.ok(planted);
    const victim = await hostedUserWithPasskey(service, app.clientId);
    const victimJar = new CookieJar();
    victimJar.cookies.set(cookieName, planted);
    // With a live session the request would be answered by SSO: prompt=login makes the page show.
    await passkeyToApp(service, victimJar, app.clientId, victim.credential, { prompt: 'login' });
    const fresh = victimJar.cookies.get(cookieName);
    assert.ok(fresh && fresh !== planted, 'a new session value');
    assert.equal((await silentCode(attackerJar)).error, 'login_required', 'the planted value no longer signs anyone in');
    assert.ok((await silentCode(victimJar)).code);
  });

  it('cross-site POST: another origin cannot finish the sign-in, and the refused attempt leaves the request and code usable', async () => {
    const { credential } = await hostedUserWithPasskey(service, app.clientId);
    const jar = new CookieJar();
    const requestId = await pending(jar);
    const signedIn = await hostedPasskeySignIn(service, jar, requestId, credential);
    assert.equal(signedIn.body.status, 'SUCCESS');
    const body = { request: requestId, code: signedIn.body.code, codeVerifier: signedIn.codeVerifier };
    const forged = await complete(service, jar, body, 'https://evil.example');
    assert.equal(forged.status, 400);
    assert.equal(forged.body.code, 'ERR_REQUEST_INVALID');
    assert.equal(jar.cookies.get(cookieName), undefined, 'no session opened');
    const done = await complete(service, jar, body);
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.ok(paramsOf(done.location).code);
  });

  it('cross-site POST: the passkey ceremony with the hosted key from another origin is refused', async () => {
    const jar = new CookieJar();
    const requestId = await pending(jar);
    const asked = await hostedPost(service, requestId, jar, 'https://evil.example')(Paths.passkeyAuthenticationOptions, {});
    assert.ok(asked.status === 401 || asked.status === 403, `${asked.status} ${JSON.stringify(asked.body)}`);
    assert.equal(asked.body.options, undefined);
  });

  it('the hosted passkey routes refuse a call naming no live pending request (ERR_SESSION_INVALID)', async () => {
    const asked = await hostedPost(service, 'no-such-request')(Paths.passkeyAuthenticationOptions, {});
    assert.equal(asked.status, 400);
    assert.equal(asked.body.code, 'ERR_SESSION_INVALID');
  });

  it('assertion for another pending request: an assertion captured before it was sent is refused for another request and from another browser', async () => {
    const { credential } = await hostedUserWithPasskey(service, app.clientId);
    const victimJar = new CookieJar();
    const victimRequest = await pending(victimJar);
    const attackerJar = new CookieJar();
    const attackerRequest = await pending(attackerJar);
    const asked = await hostedPost(service, victimRequest, victimJar)(Paths.passkeyAuthenticationOptions, {});
    assert.equal(asked.status, 200);
    const captured = getAssertion(asked.body.options, credential, { origin: service.url });
    const sent = async (requestId: string, jar: CookieJar) =>
      hostedPost(
        service,
        requestId,
        jar,
      )(Paths.passkeyAuthentication, {
        credential: captured,
        codeChallenge: (await createPkcePair()).codeChallenge,
        codeChallengeMethod: 'S256',
      });
    // For the attacker's own pending request: the challenge was made for the victim's.
    const forOther = await sent(attackerRequest, attackerJar);
    assert.equal(forOther.status, 400);
    assert.equal(forOther.body.code, 'ERR_SESSION_INVALID');
    // For the victim's request, from the attacker's browser (not the request's binding cookie).
    const fromOther = await sent(victimRequest, attackerJar);
    assert.equal(fromOther.status, 400);
    assert.equal(fromOther.body.code, 'ERR_SESSION_INVALID');
    // Neither attempt spent the challenge: the victim's own browser still signs in with it.
    const own = await sent(victimRequest, victimJar);
    assert.equal(own.body.status, 'SUCCESS', JSON.stringify(own.body));
  });

  it('assertion for another pending request: a replayed assertion is refused (its challenge is spent), a hosted code without its verifier finishes nothing', async () => {
    const { credential } = await hostedUserWithPasskey(service, app.clientId);
    const victimJar = new CookieJar();
    const victimRequest = await pending(victimJar);
    const attackerJar = new CookieJar();
    const attackerRequest = await pending(attackerJar);
    const signedIn = await hostedPasskeySignIn(service, victimJar, victimRequest, credential);
    assert.equal(signedIn.body.status, 'SUCCESS');
    // The victim's assertion, seen on the wire, sent again for the attacker's pending request.
    const replayed = await hostedPost(
      service,
      attackerRequest,
      attackerJar,
    )(Paths.passkeyAuthentication, {
      credential: signedIn.assertion,
      codeChallenge: (await createPkcePair()).codeChallenge,
      codeChallengeMethod: 'S256',
    });
    assert.equal(replayed.status, 400);
    assert.equal(replayed.body.code, 'ERR_SESSION_INVALID');
    // The hosted code it earned, without the page's PKCE verifier, finishes the attacker's request nowhere.
    const stolen = await complete(service, attackerJar, {
      request: attackerRequest,
      code: signedIn.body.code,
      codeVerifier: (await createPkcePair()).codeVerifier,
    });
    assert.equal(stolen.status, 400);
    assert.equal(stolen.body.code, 'ERR_SESSION_INVALID');
    assert.equal(attackerJar.cookies.get(cookieName), undefined);
    // The attacker's request is still pending: a refused completion did not spend it.
    const stillPending = await fetch(`${service.url}${Paths.signIn}?request=${attackerRequest}`);
    assert.equal(stillPending.status, 200);
  });

  it('assertion for another pending request: a passkey counted as MFA for one app cannot finish the request of an app that does not count it', async () => {
    const { credential } = await hostedUserWithPasskey(service, app.clientId, { mfaMethod: 'email' });
    const jar = new CookieJar();
    const lenientRequest = await pending(jar, app);
    const strictRequest = await pending(jar, strict);
    const signedIn = await hostedPasskeySignIn(service, jar, lenientRequest, credential);
    assert.equal(signedIn.body.status, 'SUCCESS', 'the lenient app counts the passkey as MFA');
    const swapped = await complete(service, jar, { request: strictRequest, code: signedIn.body.code, codeVerifier: signedIn.codeVerifier });
    assert.equal(swapped.status, 400);
    assert.equal(swapped.body.code, 'ERR_SESSION_INVALID');
    assert.equal(jar.cookies.get(cookieName), undefined, 'no session opened');
    // The strict app's request (a new one: the refused completion spent it), on its own page, asks for the second factor.
    const own = await hostedPasskeySignIn(service, jar, await pending(jar, strict), credential);
    assert.equal(own.body.status, 'MFA_REQUIRED');
  });
});
