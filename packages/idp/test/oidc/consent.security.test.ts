/**
 * Threats to the consent page of third-party clients (issue 37; docs/security.md): a consent
 * forged by a POST without the binding cookie, without or with a wrong CSRF token, from another
 * origin, or for another pending request; a consent to client A reused by client B; the app's
 * and the permissions' names rendered as text (HTML injection); the consent step skipped by
 * calling the completion endpoints directly. Each refusal issues no code and records no consent.
 * On SQLite, and on PostgreSQL when SERVICE_TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { NOTES, startWithApis, userWithRoles } from '../support/api-helpers.js';
import { answerConsent, consentPage, isConsentPage, startSignIn } from '../support/consent-helpers.js';
import { sendClock, type TestService, uniqueEmail } from '../support/helpers.js';
import { CookieJar, complete, hostedBrowser, paramsOf, requestIdOf } from '../support/oidc-helpers.js';
import { type RelyingParty, relyingParty } from '../support/oidc-token-helpers.js';

describe('consent page threats', () => {
  let service: TestService;
  let appA: RelyingParty;
  let appB: RelyingParty;
  const clock = sendClock();
  before(async () => {
    ({ service } = await startWithApis(clock.now));
    appA = await relyingParty(service, { name: 'App A', redirectUri: 'https://a.example/cb' });
    appB = await relyingParty(service, { name: 'App B', redirectUri: 'https://b.example/cb' });
    for (const app of [appA, appB]) await service.ctx.clients.setThirdParty(app.clientId, 'yes');
  });
  after(() => service.close());

  /** A user signed in on the hosted page of `app`, now on its consent page. */
  async function onConsentPage(app: RelyingParty, browser = hostedBrowser(service), email = uniqueEmail('threat')) {
    clock.tick();
    const userId = await userWithRoles(service, email, []);
    const start = await startSignIn(service, app, email, browser);
    assert.ok(isConsentPage(start.location), start.location);
    return { userId, email, browser, location: start.location, page: await consentPage(service, browser.jar, start.location) };
  }

  const refusedWithoutCode = (answer: { status: number; location: string | null }) => {
    assert.equal(answer.status, 400);
    assert.equal(answer.location, null, 'no redirect, no code');
  };

  it('consent forged by a POST without the binding cookie, without or with a wrong CSRF token, or from another origin: refused', async () => {
    const { userId, browser, page } = await onConsentPage(appA);
    const form = { request: page.request, csrf: page.csrf, decision: 'allow' };
    refusedWithoutCode(await answerConsent(service, new CookieJar(), form));
    refusedWithoutCode(await answerConsent(service, browser.jar, { ...form, csrf: '' }));
    refusedWithoutCode(await answerConsent(service, browser.jar, { request: page.request, decision: 'allow' } as never));
    refusedWithoutCode(await answerConsent(service, browser.jar, { ...form, csrf: `${page.csrf.slice(0, -2)}AA` }));
    refusedWithoutCode(await answerConsent(service, browser.jar, form, { origin: 'https://attacker.example' }));
    const stranger = await consentPage(service, new CookieJar(), `/signin/consent?request=${page.request}`);
    assert.equal(stranger.status, 400, 'another browser does not even see the page');
    assert.equal(await service.ctx.consents.find(userId, appA.clientId), undefined);
    // The genuine form still works: the refusals consumed nothing.
    const allowed = await answerConsent(service, browser.jar, form);
    assert.equal(allowed.status, 303);
    assert.ok(paramsOf(allowed.location).code);
  });

  it('consent forged for another pending request: the CSRF token of one request does not answer another', async () => {
    const browser = hostedBrowser(service);
    const first = await onConsentPage(appA, browser);
    const second = await onConsentPage(appB, browser);
    refusedWithoutCode(
      await answerConsent(service, browser.jar, { request: second.page.request, csrf: first.page.csrf, decision: 'allow' }),
    );
    assert.equal(await service.ctx.consents.find(second.userId, appB.clientId), undefined);
  });

  it('a consent for client A reused by client B: B still asks, and its page names B', async () => {
    const browser = hostedBrowser(service);
    const email = uniqueEmail('reuse');
    const a = await onConsentPage(appA, browser, email);
    assert.equal(
      (await answerConsent(service, browser.jar, { request: a.page.request, csrf: a.page.csrf, decision: 'allow' })).status,
      303,
    );
    const b = await startSignIn(service, appB, email, browser);
    assert.ok(isConsentPage(b.location), `B asks for itself: ${b.location}`);
    const page = await consentPage(service, browser.jar, b.location);
    assert.match(page.html, /App B asks for access/);
    assert.equal(await service.ctx.consents.find(a.userId, appB.clientId), undefined);
  });

  it('the consent page`s app name and permission names are rendered as text (HTML injection)', async () => {
    const hostile = await relyingParty(service, { name: '<img src=x onerror=alert(1)>', redirectUri: 'https://h.example/cb' });
    await service.ctx.clients.setThirdParty(hostile.clientId, 'yes');
    const api = 'https://hostile-api.example';
    await service.ctx.apis.createApi({ identifier: api, name: '<script>alert(2)</script>', permissions: ['read:x'] }, 'test');
    clock.tick();
    const email = uniqueEmail('inject');
    await userWithRoles(service, email, []);
    const browser = hostedBrowser(service);
    const start = await startSignIn(service, hostile, email, browser, { scope: 'openid email read:x', extra: { resource: api } });
    const page = await consentPage(service, browser.jar, start.location);
    assert.equal(page.status, 200);
    assert.doesNotMatch(page.html, /<img src=x/);
    assert.doesNotMatch(page.html, /<script>alert/);
    assert.match(page.html, /&lt;img src=x onerror=alert\(1\)&gt; asks for access/);
    assert.match(page.html, /&lt;script&gt;alert\(2\)&lt;\/script&gt;: read:x/);
    assert.doesNotMatch(page.headers.get('content-security-policy') ?? '', /unsafe-inline/);
  });

  it('consent step skipped by calling the completion endpoints directly: no code', async () => {
    const browser = hostedBrowser(service);
    clock.tick();
    const email = uniqueEmail('skip');
    const userId = await userWithRoles(service, email, []);
    const start = await startSignIn(service, appA, email, browser, { extra: {} });
    assert.ok(isConsentPage(start.location));
    const consentRequest = requestIdOf(start.location);
    // The held-sign-in continuation (recovery codes, passkey offer) does not finish a request waiting on consent.
    const continued = await fetch(`${service.url}/signin/continue`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: service.url, cookie: browser.jar.header() },
      body: JSON.stringify({ request: consentRequest }),
    });
    assert.equal(continued.status, 400);
    assert.equal((await continued.json()).location, undefined, 'no code');
    // Nor does the completion with a hosted code.
    const completed = await complete(service, browser.jar, { request: consentRequest, code: 'x'.repeat(43), codeVerifier: 'y'.repeat(43) });
    assert.notEqual(completed.status, 200);
    assert.equal(completed.location, undefined);
    // The hosted sign-in page does not serve it either.
    const signInPage = await fetch(`${service.url}/signin?request=${consentRequest}`, { headers: { cookie: browser.jar.header() } });
    assert.equal(signInPage.status, 400);
    assert.equal(await service.ctx.consents.find(userId, appA.clientId), undefined);
    // The consent page still answers it.
    const page = await consentPage(service, browser.jar, start.location);
    assert.equal(page.status, 200);
  });
});
