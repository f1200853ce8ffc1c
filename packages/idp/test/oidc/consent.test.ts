/**
 * Consent for third-party clients (issue 37): a first-party client's user sees no consent page;
 * a third-party client's first sign-in shows one listing the app's name and what it asks, Allow
 * issues the code (the token carries the permissions), the next sign-in asks nothing, a new
 * permission asks again; Deny answers access_denied; prompt=none answers consent_required and
 * prompt=consent shows the page again. On SQLite, and on PostgreSQL when SERVICE_TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { NOTES, startWithApis, userWithRoles } from '../support/api-helpers.js';
import { answerConsent, consentPage, isConsentPage, redeemAt, startSignIn } from '../support/consent-helpers.js';
import { sendClock, type TestService, uniqueEmail } from '../support/helpers.js';
import { hostedBrowser, paramsOf } from '../support/oidc-helpers.js';
import { type RelyingParty, relyingParty } from '../support/oidc-token-helpers.js';

describe('consent for third-party clients', () => {
  let service: TestService;
  let firstParty: RelyingParty;
  let thirdParty: RelyingParty;
  const clock = sendClock();
  before(async () => {
    ({ service, rp: firstParty } = await startWithApis(clock.now));
    thirdParty = await relyingParty(service, { name: 'Partner Planner', redirectUri: 'https://planner.example/cb' });
    await service.ctx.clients.setThirdParty(thirdParty.clientId, 'yes');
  });
  after(() => service.close());

  const asking = { scope: 'openid email offline_access read:notes', extra: { resource: NOTES } };

  it('a first-party client asking offline_access and a permission gets its code with no consent page', async () => {
    clock.tick();
    const email = uniqueEmail('first-party');
    await userWithRoles(service, email, ['reader']);
    const { location } = await startSignIn(service, firstParty, email, hostedBrowser(service), asking);
    assert.ok(location.startsWith(firstParty.redirectUri), location);
    assert.ok(paramsOf(location).code);
  });

  it('first sign-in shows the consent page; Allow issues the code, the token carries the permission; the next sign-in asks nothing', async () => {
    clock.tick();
    const email = uniqueEmail('third-party');
    const userId = await userWithRoles(service, email, ['reader']);
    const browser = hostedBrowser(service);
    const first = await startSignIn(service, thirdParty, email, browser, asking);
    assert.ok(isConsentPage(first.location), `the consent page, not the app: ${first.location}`);
    const page = await consentPage(service, browser.jar, first.location);
    assert.equal(page.status, 200);
    assert.match(page.html, /<h1>Partner Planner asks for access<\/h1>/, 'an operator`s client: its name is not marked unverified');
    assert.doesNotMatch(page.html, /unverified/);
    assert.match(page.html, /See your email address/);
    assert.match(page.html, /Keep you signed in/);
    assert.match(page.html, /Notes: read:notes/);
    assert.match(page.headers.get('content-security-policy') ?? '', /form-action 'self' https:\/\/planner\.example;/);
    assert.equal(await service.ctx.consents.find(userId, thirdParty.clientId), undefined, 'nothing granted before Allow');

    const allowed = await answerConsent(service, browser.jar, { request: page.request, csrf: page.csrf, decision: 'allow' });
    assert.equal(allowed.status, 303, allowed.body);
    assert.ok(allowed.location?.startsWith(`${thirdParty.redirectUri}?`));
    assert.equal(paramsOf(allowed.location).state, 'st-consent');
    assert.equal(paramsOf(allowed.location).iss, service.url);
    const tokens = await redeemAt(service, thirdParty, allowed.location, first.codeVerifier);
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    assert.equal(tokens.body.scope, 'openid email offline_access read:notes');
    assert.ok(tokens.body.refresh_token);
    const jwks = createRemoteJWKSet(new URL(`${service.url}/.well-known/jwks.json`));
    const { payload } = await jwtVerify(tokens.body.access_token, jwks, { audience: NOTES, currentDate: new Date(clock.now()) });
    assert.equal(payload.scope, 'read:notes');
    assert.deepEqual(await service.ctx.consents.find(userId, thirdParty.clientId), {
      scope: ['email', 'offline_access', 'openid'],
      permissions: [[NOTES, 'read:notes']],
    });
    const { events } = await service.ctx.events.list({ userId, type: 'consent.granted', limit: 5 });
    assert.equal(events[0]?.clientId, thirdParty.clientId);
    assert.equal(events[0]?.detail?.scope, `openid email offline_access ${NOTES} read:notes`);

    // Again from the browser's session: everything asked is granted, so straight back to the app.
    clock.tick();
    const second = await startSignIn(service, thirdParty, email, browser, asking);
    assert.ok(second.location.startsWith(`${thirdParty.redirectUri}?`), second.location);
    assert.equal((await redeemAt(service, thirdParty, second.location, second.codeVerifier)).status, 200);
    // Less than granted asks nothing either.
    const narrower = await startSignIn(service, thirdParty, email, browser, { scope: 'openid email' });
    assert.ok(narrower.location.startsWith(`${thirdParty.redirectUri}?`), narrower.location);

    // A permission not granted yet: the page again, listing it; Allow merges it with the earlier grant.
    const wider = await startSignIn(service, thirdParty, email, browser, {
      scope: 'openid email read:notes write:notes',
      extra: { resource: NOTES },
    });
    assert.ok(isConsentPage(wider.location), wider.location);
    const again = await consentPage(service, browser.jar, wider.location);
    assert.match(again.html, /Notes: write:notes/);
    assert.equal((await answerConsent(service, browser.jar, { request: again.request, csrf: again.csrf, decision: 'allow' })).status, 303);
    assert.deepEqual((await service.ctx.consents.find(userId, thirdParty.clientId))?.permissions, [
      [NOTES, 'read:notes'],
      [NOTES, 'write:notes'],
    ]);
  });

  it('Deny answers access_denied with state and iss to the redirect URI, and records no consent', async () => {
    clock.tick();
    const email = uniqueEmail('deny');
    const userId = await userWithRoles(service, email, []);
    const browser = hostedBrowser(service);
    const start = await startSignIn(service, thirdParty, email, browser);
    const page = await consentPage(service, browser.jar, start.location);
    const denied = await answerConsent(service, browser.jar, { request: page.request, csrf: page.csrf, decision: 'deny' });
    assert.equal(denied.status, 303);
    assert.ok(denied.location?.startsWith(`${thirdParty.redirectUri}?`));
    const params = paramsOf(denied.location);
    assert.equal(params.error, 'access_denied');
    assert.equal(params.state, 'st-consent');
    assert.equal(params.iss, service.url);
    assert.equal(params.code, undefined);
    assert.equal(await service.ctx.consents.find(userId, thirdParty.clientId), undefined);
    const replay = await answerConsent(service, browser.jar, { request: page.request, csrf: page.csrf, decision: 'allow' });
    assert.equal(replay.status, 400, 'the answered request is used up');
  });

  it('prompt=none when consent is needed answers consent_required; prompt=consent shows the page though all is granted', async () => {
    clock.tick();
    const email = uniqueEmail('prompt');
    await userWithRoles(service, email, []);
    const browser = hostedBrowser(service);
    // Signed in to the first-party app: the browser has a session, the third-party app no consent.
    await startSignIn(service, firstParty, email, browser);
    const none = await startSignIn(service, thirdParty, email, browser, { extra: { prompt: 'none' } });
    const params = paramsOf(none.location);
    assert.equal(params.error, 'consent_required', none.location);
    assert.equal(params.state, 'st-consent');
    assert.equal(params.iss, service.url);

    const first = await startSignIn(service, thirdParty, email, browser);
    const page = await consentPage(service, browser.jar, first.location);
    await answerConsent(service, browser.jar, { request: page.request, csrf: page.csrf, decision: 'allow' });
    const silent = await startSignIn(service, thirdParty, email, browser, { extra: { prompt: 'none' } });
    assert.ok(paramsOf(silent.location).code, 'granted: prompt=none gets its code');
    const forced = await startSignIn(service, thirdParty, email, browser, { extra: { prompt: 'consent' } });
    assert.ok(isConsentPage(forced.location), forced.location);
    // With a live session the consent page is the first page: the app's ui_locales reaches it.
    const german = await startSignIn(service, thirdParty, email, browser, { extra: { prompt: 'consent', ui_locales: 'de' } });
    assert.match((await consentPage(service, browser.jar, german.location)).html, /<html lang="de"/, german.location);
    const firstPartyForced = await startSignIn(service, firstParty, email, browser, { extra: { prompt: 'consent' } });
    assert.ok(paramsOf(firstPartyForced.location).code, 'a first-party client: prompt=consent is satisfied without a page');
  });

  it('the flag: settable on confidential and public clients, refused for a machine client, false by default', async () => {
    const machine = await service.ctx.clients.create({ name: 'Job', origins: [], machine: true });
    await assert.rejects(service.ctx.clients.setThirdParty(machine.clientId, 'yes'), /machine/);
    await assert.rejects(service.ctx.clients.create({ name: 'Job 2', origins: [], machine: true, thirdParty: true }), /machine/);
    const spa = await service.ctx.clients.create({
      name: 'SPA',
      origins: [],
      redirectUris: ['https://spa.example/cb'],
      public: true,
      thirdParty: true,
    });
    assert.equal((await service.ctx.clients.findById(spa.clientId))?.thirdParty, true);
    assert.equal((await service.ctx.clients.findById(firstParty.clientId))?.thirdParty, false, 'first-party by default');
    await service.ctx.clients.setThirdParty(spa.clientId, 'no');
    assert.equal((await service.ctx.clients.findById(spa.clientId))?.thirdParty, false);
  });
});
