/**
 * The hosted organization picker (docs/organizations.md, "The organization picker"): an app asks
 * for scope `organization` without naming one; after the sign-in a user of one organization gets
 * it without a page, a user of several chooses on the picker, a user of none gets no organization.
 * Runs on SQLite and, with SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createPkcePair } from 'service-web';
import { type TestService, uniqueEmail } from '../support/helpers.js';
import { authorize, hostedBrowser, paramsOf, redeem } from '../support/oidc-helpers.js';
import { credentials, type RelyingParty } from '../support/oidc-token-helpers.js';
import { choose, claimsOf, memberOf, pickerPage, startWithOrganizations } from './organization-helpers.js';

describe('the organization picker', () => {
  let service: TestService;
  let rp: RelyingParty;
  before(async () => {
    ({ service, rp } = await startWithOrganizations());
  });
  after(() => service.close());

  /** /authorize for scope `organization` in `browser`, signing in on the hosted page when it asks: where the browser is sent. */
  async function start(browser: ReturnType<typeof hostedBrowser>, email: string, extra: Record<string, string> = {}) {
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
        ...extra,
      },
      browser.jar,
    );
    let location = begun.location ?? '';
    if (location.startsWith('/signin?')) location = (await browser.signIn(location, email)).location ?? '';
    return { location, pkce, status: begun.status };
  }

  const tokensOf = async (location: string, codeVerifier: string) => {
    const code = paramsOf(location).code;
    assert.ok(code, `a code: ${location}`);
    const tokens = await redeem(service, { code, redirect_uri: rp.redirectUri, code_verifier: codeVerifier, ...credentials(rp) });
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    return tokens.body as Record<string, string>;
  };

  it('a member of several organizations chooses one on the picker, and the ID token names it with their roles there', async () => {
    const email = uniqueEmail('several');
    const { userId, orgId: acme } = await memberOf(service, email, 'Acme', ['editor']);
    const globex = await service.ctx.organizations.create({ name: 'Globex' }, 'test');
    await service.ctx.organizations.addMember(globex.id, userId, ['viewer'], 'test');
    const browser = hostedBrowser(service);
    const { location, pkce } = await start(browser, email);
    assert.match(location, /^\/signin\/organization\?request=/);
    const picker = await pickerPage(service, browser.jar, location);
    assert.equal(picker.status, 200);
    assert.match(picker.html, /Choose an organization/);
    assert.match(picker.html, /Acme<\/span> <small>Your roles: editor/);
    assert.match(picker.html, /Globex<\/span> <small>Your roles: viewer/);
    // The strict policy of every page, its form allowed to lead to the app's redirect URI only.
    const csp = picker.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /form-action 'self' https:\/\/rp\.example/);
    const chosen = await choose(service, browser.jar, { request: picker.requestId, csrf: picker.csrf, organization: globex.id });
    assert.equal(chosen.status, 303, chosen.body);
    const tokens = await tokensOf(chosen.location ?? '', pkce.codeVerifier);
    const id = claimsOf(tokens.id_token as string);
    assert.deepEqual([id.org_id, id.org_name, id.org_roles], [globex.id, 'Globex', ['viewer']]);
    assert.equal(tokens.scope, 'openid email organization');
    // The picker's organization is the sign-in's: the same browser's live session is asked again.
    const again = await start(browser, email);
    assert.match(again.location, /^\/signin\/organization\?request=/, 'a live session shows the picker without a sign-in');
    const second = await pickerPage(service, browser.jar, again.location);
    const acmeChosen = await choose(service, browser.jar, { request: second.requestId, csrf: second.csrf, organization: acme });
    assert.equal(claimsOf((await tokensOf(acmeChosen.location ?? '', again.pkce.codeVerifier)).id_token as string).org_id, acme);
  });

  it('a member of one organization gets it without a page', async () => {
    const email = uniqueEmail('one');
    const { orgId } = await memberOf(service, email, 'Initech', ['viewer']);
    const { location, pkce } = await start(hostedBrowser(service), email);
    assert.ok(location.startsWith(rp.redirectUri), location);
    const id = claimsOf((await tokensOf(location, pkce.codeVerifier)).id_token as string);
    assert.deepEqual([id.org_id, id.org_name, id.org_roles], [orgId, 'Initech', ['viewer']]);
  });

  it('a user of no organization gets tokens without organization claims', async () => {
    const email = uniqueEmail('none');
    const { location, pkce } = await start(hostedBrowser(service), email);
    assert.ok(location.startsWith(rp.redirectUri), location);
    const id = claimsOf((await tokensOf(location, pkce.codeVerifier)).id_token as string);
    assert.deepEqual([id.org_id, id.org_name, id.org_roles], [undefined, undefined, undefined]);
  });

  it('speaks the browser’s language (French)', async () => {
    const email = uniqueEmail('french');
    const { userId } = await memberOf(service, email, 'Acme FR', ['editor']);
    const other = await service.ctx.organizations.create({ name: 'Autre' }, 'test');
    await service.ctx.organizations.addMember(other.id, userId, [], 'test');
    const browser = hostedBrowser(service);
    const { location } = await start(browser, email);
    const picker = await fetch(new URL(location, service.url), { headers: { cookie: browser.jar.header(), 'accept-language': 'fr' } });
    const html = await picker.text();
    assert.match(html, /<html lang="fr"/);
    assert.match(html, /Choisissez une organisation/);
    assert.match(html, /Aucun rôle/);
  });

  it('prompt=none with several organizations and a live session answers interaction_required, no page', async () => {
    const email = uniqueEmail('silent');
    const { userId } = await memberOf(service, email, 'Acme', ['editor']);
    const other = await service.ctx.organizations.create({ name: 'Hooli' }, 'test');
    await service.ctx.organizations.addMember(other.id, userId, ['viewer'], 'test');
    const browser = hostedBrowser(service);
    const first = await start(browser, email);
    assert.match(first.location, /^\/signin\/organization/);
    const silent = await start(browser, email, { prompt: 'none' });
    assert.ok(silent.location.startsWith(rp.redirectUri), silent.location);
    assert.equal(paramsOf(silent.location).error, 'interaction_required');
    assert.equal(paramsOf(silent.location).code, undefined);
  });
});
