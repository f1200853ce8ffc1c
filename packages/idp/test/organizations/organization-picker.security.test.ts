/**
 * Attack: the organization picker's form tampered with or replayed. A choice must be one of the
 * user's organizations (another's id is refused with access_denied, no code), the form answers
 * once (a replay is the expired page, nothing issued), only in the browser holding the request
 * (its binding cookie) with the form's own token, and only from our origin. Runs on SQLite and,
 * with SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createPkcePair } from 'service-web';
import { answerConsent, consentPage, isConsentPage, redeemAt, startSignIn } from '../support/consent-helpers.js';
import { type TestService, uniqueEmail } from '../support/helpers.js';
import { authorize, CookieJar, hostedBrowser, paramsOf } from '../support/oidc-helpers.js';
import { type RelyingParty, relyingParty } from '../support/oidc-token-helpers.js';
import { choose, claimsOf, memberOf, pickerPage, startWithOrganizations } from './organization-helpers.js';

describe('the organization picker under attack', () => {
  let service: TestService;
  let rp: RelyingParty;
  before(async () => {
    ({ service, rp } = await startWithOrganizations());
  });
  after(() => service.close());

  /** A member of Acme and Globex signed in for scope `organization`: the browser and the picker it was sent to. */
  async function atPicker(label: string) {
    const email = uniqueEmail(label);
    const { userId, orgId: acme } = await memberOf(service, email, 'Acme', ['editor']);
    const globex = await service.ctx.organizations.create({ name: 'Globex' }, 'test');
    await service.ctx.organizations.addMember(globex.id, userId, ['viewer'], 'test');
    const browser = hostedBrowser(service);
    const pkce = await createPkcePair();
    const begun = await authorize(
      service,
      {
        response_type: 'code',
        client_id: rp.clientId,
        redirect_uri: rp.redirectUri,
        scope: 'openid email organization',
        state: 'st',
        code_challenge: pkce.codeChallenge,
        code_challenge_method: 'S256',
      },
      browser.jar,
    );
    const signedIn = await browser.signIn(begun.location ?? '', email);
    const picker = await pickerPage(service, browser.jar, signedIn.location ?? '');
    assert.equal(picker.status, 200);
    return { browser, picker, acme, globex: globex.id };
  }

  it('picking an organization one is not a member of: access_denied, no code', async () => {
    const { browser, picker } = await atPicker('tamper');
    const stranger = await service.ctx.organizations.create({ name: 'Someone else’s' }, 'test');
    const chosen = await choose(service, browser.jar, { request: picker.requestId, csrf: picker.csrf, organization: stranger.id });
    assert.equal(chosen.status, 303);
    const params = paramsOf(chosen.location);
    assert.deepEqual([params.error, params.code, params.state], ['access_denied', undefined, 'st']);
    // An id that names no organization is refused alike.
    const again = await atPicker('tamper-unknown');
    const unknown = await choose(service, again.browser.jar, {
      request: again.picker.requestId,
      csrf: again.picker.csrf,
      organization: 'org_nope',
    });
    assert.deepEqual([paramsOf(unknown.location).error, paramsOf(unknown.location).code], ['access_denied', undefined]);
  });

  it('replaying a picker form: the second post is refused and issues nothing', async () => {
    const { browser, picker, acme, globex } = await atPicker('replay');
    const first = await choose(service, browser.jar, { request: picker.requestId, csrf: picker.csrf, organization: acme });
    assert.ok(paramsOf(first.location).code);
    const replayed = await choose(service, browser.jar, { request: picker.requestId, csrf: picker.csrf, organization: globex });
    assert.equal(replayed.status, 400);
    assert.equal(replayed.location, null);
    assert.match(replayed.body, /expired/i);
    // The page itself is gone too.
    assert.equal((await pickerPage(service, browser.jar, `/signin/organization?request=${picker.requestId}`)).status, 400);
  });

  it('a picker form from another browser, with another token or from another origin is refused, and the request stays answerable', async () => {
    const { browser, picker, acme } = await atPicker('csrf');
    const form = { request: picker.requestId, csrf: picker.csrf, organization: acme };
    const elsewhere = await choose(service, new CookieJar(), form);
    assert.equal(elsewhere.status, 400, 'no binding cookie: not this browser’s request');
    assert.equal((await pickerPage(service, new CookieJar(), `/signin/organization?request=${picker.requestId}`)).status, 400);
    const forged = await choose(service, browser.jar, { ...form, csrf: 'x'.repeat(43) });
    assert.equal(forged.status, 400, 'another token');
    const crossOrigin = await choose(service, browser.jar, form, 'https://evil.example');
    assert.equal(crossOrigin.status, 400, 'another origin');
    const honest = await choose(service, browser.jar, form);
    assert.ok(paramsOf(honest.location).code, 'none of the refusals spent the request');
  });

  it('a third-party application asking for scope organization is granted fewer: no picker, no organization in its tokens', async () => {
    const email = uniqueEmail('third-scope');
    const { userId } = await memberOf(service, email, 'Acme', ['editor']);
    const globex = await service.ctx.organizations.create({ name: 'Globex' }, 'test');
    await service.ctx.organizations.addMember(globex.id, userId, ['viewer'], 'test');
    const third = await relyingParty(service, { name: 'Third Scope', redirectUri: 'https://third-scope.example/cb' });
    await service.ctx.clients.setThirdParty(third.clientId, 'yes');
    const browser = hostedBrowser(service);
    const started = await startSignIn(service, third, email, browser, { scope: 'openid email organization' });
    assert.ok(isConsentPage(started.location), `the consent page, not the picker: ${started.location}`);
    const consent = await consentPage(service, browser.jar, started.location);
    const allowed = await answerConsent(service, browser.jar, { request: consent.request, csrf: consent.csrf, decision: 'allow' });
    const tokens = await redeemAt(service, third, allowed.location, started.codeVerifier);
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    assert.equal(tokens.body.scope, 'openid email');
    assert.equal(claimsOf(tokens.body.id_token).org_id, undefined);
  });

  it('a request waiting on the picker cannot be answered by the consent page or the hosted page’s continuation', async () => {
    const { browser, picker } = await atPicker('cross-page');
    const response = await fetch(`${service.url}/signin/consent`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: service.url, cookie: browser.jar.header() },
      body: new URLSearchParams({ request: picker.requestId, csrf: picker.csrf, decision: 'allow' }),
    });
    assert.equal(response.status, 400);
    assert.equal(response.headers.get('location'), null);
    // Nor by the hosted page's continuation of a held sign-in (the picker's request holds one too).
    const continued = await fetch(`${service.url}/signin/continue`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: service.url, cookie: browser.jar.header() },
      body: JSON.stringify({ request: picker.requestId }),
    });
    assert.equal(continued.status, 400);
    assert.equal((await continued.json()).location, undefined);
    assert.equal((await pickerPage(service, browser.jar, `/signin/organization?request=${picker.requestId}`)).status, 200, 'still waiting');
  });
});
