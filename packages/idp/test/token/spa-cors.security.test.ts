/**
 * A single-page app calls the OAuth endpoints itself (issue 36): discovery and the JWKS answer
 * any origin; the token, revocation and userinfo endpoints answer a page only on an origin its
 * own client registered. Threats: a page on an origin nobody (or another client) registered
 * spends a stolen code or refresh token and reads the answer; a confidential client's secret
 * used from a page; a page reading userinfo with another app's token. Each refusal happens
 * before anything is spent. Runs on SQLite and PostgreSQL (helpers.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import { credentials, type RelyingParty, relyingParty, signInForCode } from '../support/oidc-token-helpers.js';

const SPA_ORIGIN = 'https://spa.example';
const OTHER_ORIGIN = 'https://other-app.example';
const NOBODYS_ORIGIN = 'https://evil.example';

async function post(url: string, params: Record<string, string>, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(params),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}

const preflight = (url: string, origin: string, method = 'POST') =>
  fetch(url, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'content-type, dpop' },
  });

describe('the OAuth endpoints from a page on another origin (CORS)', () => {
  let service: TestService;
  let spa: RelyingParty;
  let confidential: RelyingParty;
  before(async () => {
    service = await startTestService();
    spa = await relyingParty(service, { name: 'SPA', public: true, redirectUri: `${SPA_ORIGIN}/cb`, origins: [SPA_ORIGIN] });
    // Another app's page: its origin is registered, but not for the SPA.
    await relyingParty(service, {
      name: 'Other SPA',
      public: true,
      redirectUri: `${OTHER_ORIGIN}/cb`,
      origins: [OTHER_ORIGIN],
    });
    confidential = await relyingParty(service, {
      name: 'Web App',
      redirectUri: 'https://web.example/cb',
      origins: ['https://web.example'],
    });
  });
  after(() => service.close());

  const redeemFrom = (origin: string | undefined, rp: RelyingParty, code: string, codeVerifier: string) =>
    post(
      service.tokenUrl,
      { grant_type: 'authorization_code', code, code_verifier: codeVerifier, redirect_uri: rp.redirectUri, ...credentials(rp) },
      origin ? { origin } : {},
    );

  it('discovery and the JWKS answer every origin, preflight included', async () => {
    for (const path of ['/.well-known/openid-configuration', '/.well-known/jwks.json']) {
      const answer = await fetch(service.url + path, { headers: { origin: NOBODYS_ORIGIN } });
      await answer.arrayBuffer();
      assert.equal(answer.status, 200);
      assert.equal(answer.headers.get('access-control-allow-origin'), '*', path);
      const options = await preflight(service.url + path, NOBODYS_ORIGIN, 'GET');
      assert.equal(options.status, 204);
      assert.equal(options.headers.get('access-control-allow-origin'), '*', path);
    }
  });

  it("the token endpoint's preflight allows a registered origin (with the DPoP header) and no other", async () => {
    const allowed = await preflight(service.tokenUrl, SPA_ORIGIN);
    assert.equal(allowed.status, 204);
    assert.equal(allowed.headers.get('access-control-allow-origin'), SPA_ORIGIN);
    assert.match(allowed.headers.get('access-control-allow-headers') ?? '', /dpop/);
    assert.match(allowed.headers.get('vary') ?? '', /Origin/);
    const refused = await preflight(service.tokenUrl, NOBODYS_ORIGIN);
    assert.equal(refused.headers.get('access-control-allow-origin'), null);
  });

  it('a public client on its own origin redeems, refreshes, reads userinfo and revokes, each answer readable by its page', async () => {
    const { code, codeVerifier } = await signInForCode(service, spa, uniqueEmail('spa-cors'));
    const tokens = await redeemFrom(SPA_ORIGIN, spa, code, codeVerifier);
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    assert.equal(tokens.headers.get('access-control-allow-origin'), SPA_ORIGIN);
    assert.match(tokens.headers.get('access-control-expose-headers') ?? '', /DPoP-Nonce/);

    const refreshed = await post(
      service.tokenUrl,
      { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, client_id: spa.clientId },
      { origin: SPA_ORIGIN },
    );
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
    assert.equal(refreshed.headers.get('access-control-allow-origin'), SPA_ORIGIN);

    const claims = await fetch(`${service.url}/oauth/userinfo`, {
      headers: { authorization: `Bearer ${refreshed.body.access_token}`, origin: SPA_ORIGIN },
    });
    assert.equal(claims.status, 200);
    assert.equal(claims.headers.get('access-control-allow-origin'), SPA_ORIGIN);
    await claims.arrayBuffer();

    const revoked = await post(
      `${service.url}/oauth/revoke`,
      { token: refreshed.body.refresh_token, client_id: spa.clientId },
      { origin: SPA_ORIGIN },
    );
    assert.equal(revoked.status, 200);
    assert.equal(revoked.headers.get('access-control-allow-origin'), SPA_ORIGIN);
  });

  it('a stolen code taken to the token endpoint from a page on an unregistered origin is refused unread and stays unspent', async () => {
    const { code, codeVerifier } = await signInForCode(service, spa, uniqueEmail('spa-cors-stolen'));
    for (const origin of [NOBODYS_ORIGIN, OTHER_ORIGIN]) {
      const refused = await redeemFrom(origin, spa, code, codeVerifier);
      assert.equal(refused.status, 401, origin);
      assert.equal(refused.body.error, 'invalid_client');
      assert.equal(refused.headers.get('access-control-allow-origin'), null, `${origin} may not read the answer`);
    }
    // Nothing was spent: the app's own page still redeems the code.
    const tokens = await redeemFrom(SPA_ORIGIN, spa, code, codeVerifier);
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
  });

  it("a confidential client's secret sent from a page is refused with a reason the page can read, and the code stays unspent", async () => {
    const { code, codeVerifier } = await signInForCode(service, confidential, uniqueEmail('spa-cors-secret'));
    const refused = await redeemFrom('https://web.example', confidential, code, codeVerifier);
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error, 'invalid_client');
    assert.match(refused.body.error_description, /confidential client's secret never belongs in a page/);
    assert.equal(refused.headers.get('access-control-allow-origin'), 'https://web.example');
    // The same from the app's backend (no Origin) still works.
    const tokens = await redeemFrom(undefined, confidential, code, codeVerifier);
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    // And its refresh token from a page is refused the same way, unspent.
    const fromPage = await post(
      service.tokenUrl,
      { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, ...credentials(confidential) },
      { origin: 'https://web.example' },
    );
    assert.equal(fromPage.status, 401);
    const fromBackend = await post(service.tokenUrl, {
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token,
      ...credentials(confidential),
    });
    assert.equal(fromBackend.status, 200, JSON.stringify(fromBackend.body));
  });

  it("a page cannot read userinfo with another app's access token, nor revoke another app's token from its origin", async () => {
    const { code, codeVerifier } = await signInForCode(service, spa, uniqueEmail('spa-cors-userinfo'));
    const tokens = await redeemFrom(SPA_ORIGIN, spa, code, codeVerifier);
    const claims = await fetch(`${service.url}/oauth/userinfo`, {
      headers: { authorization: `Bearer ${tokens.body.access_token}`, origin: OTHER_ORIGIN },
    });
    await claims.arrayBuffer();
    assert.equal(claims.headers.get('access-control-allow-origin'), null);
    const revoked = await post(
      `${service.url}/oauth/revoke`,
      { token: tokens.body.refresh_token, client_id: spa.clientId },
      { origin: OTHER_ORIGIN },
    );
    assert.equal(revoked.status, 401);
    // Unrevoked: the app itself still refreshes.
    const refreshed = await post(
      service.tokenUrl,
      { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token, client_id: spa.clientId },
      { origin: SPA_ORIGIN },
    );
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
  });
});
