/**
 * OAuth Client ID Metadata Documents (issue 39, clients/metadata-document.ts): off by default;
 * when the operator turns them on, a client_id that is a URL is fetched (here from a real HTTP
 * server on loopback, which development allows) and signs a user in as a public third-party
 * client: the consent page every time, its name marked unverified and its host shown; its code
 * redeemed with PKCE and no secret; its refresh token works; PAR takes it too. On SQLite, and on
 * PostgreSQL when SERVICE_TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createPkcePair } from 'service-web';
import { answerConsent, consentPage, isConsentPage, redeemAt, startSignIn } from '../support/consent-helpers.js';
import { startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import { startDocumentServer } from '../support/metadata-document-server.js';
import { authorize, hostedBrowser } from '../support/oidc-helpers.js';
import { refresh } from '../support/oidc-token-helpers.js';

const METADATA_PATHS = ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server'];

describe('client ID metadata documents are off by default', () => {
  let service: TestService;
  let documents: Awaited<ReturnType<typeof startDocumentServer>>;
  before(async () => {
    service = await startTestService();
    documents = await startDocumentServer();
  });
  after(async () => {
    await service.close();
    await documents.close();
  });

  it('neither metadata document says they are supported, and a URL client_id is no client: nothing is fetched', async () => {
    for (const path of METADATA_PATHS) {
      const metadata = await (await fetch(service.url + path)).json();
      assert.equal(metadata.client_id_metadata_document_supported, undefined, path);
    }
    const clientId = documents.url('/agent.json');
    documents.publish('/agent.json', { client_id: clientId, client_name: 'Agent', redirect_uris: ['http://127.0.0.1/callback'] });
    const answer = await authorize(service, {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: 'http://127.0.0.1:4000/callback',
      scope: 'openid',
    });
    assert.equal(answer.status, 400);
    assert.match(answer.body, /not registered/);
    assert.equal(documents.requests('/agent.json'), 0);
  });
});

describe('client ID metadata documents, on', () => {
  let service: TestService;
  let documents: Awaited<ReturnType<typeof startDocumentServer>>;
  let clientId = '';
  before(async () => {
    service = await startTestService({ env: { SERVICE_IDP_CLIENT_ID_METADATA_DOCUMENTS: 'on' } });
    documents = await startDocumentServer();
    clientId = documents.url('/agents/notes-cli.json');
    documents.publish('/agents/notes-cli.json', {
      client_id: clientId,
      client_name: 'Notes CLI',
      logo_uri: 'https://agent.example/logo.png',
      redirect_uris: ['http://127.0.0.1/callback'],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
  });
  after(async () => {
    await service.close();
    await documents.close();
  });

  it('both metadata documents say client_id_metadata_document_supported', async () => {
    for (const path of METADATA_PATHS) {
      const metadata = await (await fetch(service.url + path)).json();
      assert.equal(metadata.client_id_metadata_document_supported, true, path);
    }
  });

  it('signs a user in: consent page with the name unverified and the host, code with PKCE, refresh; the next sign-in asks again', async () => {
    const rp = { clientId, redirectUri: 'http://127.0.0.1:53682/callback' };
    const email = uniqueEmail('cimd');
    const browser = hostedBrowser(service);
    const pkce = await createPkcePair();
    const toSignIn = await authorize(service, {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: rp.redirectUri,
      scope: 'openid',
      code_challenge: pkce.codeChallenge,
      code_challenge_method: 'S256',
    });
    const signInPage = await (await fetch(new URL(toSignIn.location ?? '', service.url))).text();
    assert.match(
      signInPage,
      /<h1>Sign in to Notes CLI <small class="unverified">\(unverified\)<\/small><\/h1>/,
      'the hosted page marks it too',
    );
    const start = await startSignIn(service, rp, email, browser, { scope: 'openid email offline_access' });
    assert.ok(isConsentPage(start.location), `the consent page first: ${start.location}`);
    const page = await consentPage(service, browser.jar, start.location);
    assert.match(page.html, /<h1>Notes CLI asks for access <small class="unverified">\(unverified\)<\/small><\/h1>/);
    assert.match(page.html, new RegExp(`This application is published at 127\\.0\\.0\\.1:${documents.port}\\.`));
    const allowed = await answerConsent(service, browser.jar, { request: page.request, csrf: page.csrf, decision: 'allow' });
    assert.ok(allowed.location?.startsWith(`${rp.redirectUri}?`), allowed.location ?? allowed.body);
    const tokens = await redeemAt(service, rp, allowed.location, start.codeVerifier);
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    assert.ok(tokens.body.refresh_token);
    const refreshed = await refresh(service, { refresh_token: tokens.body.refresh_token, client_id: clientId });
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
    const withSecret = await refresh(service, { refresh_token: refreshed.body.refresh_token, client_id: clientId, client_secret: 'x' });
    assert.equal(withSecret.status, 401, 'a public client sending a secret is refused');

    const again = await startSignIn(service, rp, email, browser, { scope: 'openid email offline_access' });
    assert.ok(isConsentPage(again.location), `allowed before, asked again all the same: ${again.location}`);
    assert.equal(documents.requests('/agents/notes-cli.json'), 1, 'one fetch: the document was cached for its max-age');
  });

  it('a pushed authorization request (PAR) by the URL client is taken', async () => {
    const pkce = await createPkcePair();
    const response = await fetch(`${service.url}/oauth/par`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        client_id: clientId,
        response_type: 'code',
        redirect_uri: 'http://127.0.0.1:53682/callback',
        scope: 'openid',
        code_challenge: pkce.codeChallenge,
        code_challenge_method: 'S256',
      }),
    });
    const body = await response.json();
    assert.equal(response.status, 201, JSON.stringify(body));
    assert.match(body.request_uri, /^urn:ietf:params:oauth:request_uri:/);
  });
});
