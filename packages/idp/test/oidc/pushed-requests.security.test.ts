/**
 * Pushed authorization requests (RFC 9126; issue 36), with openid-client's own PAR support as
 * the relying party: the request is pushed from the backend, the browser carries only a
 * request_uri, and the code comes back as usual. Threats: a request_uri used twice, after its
 * minute, or by another client; a push with the wrong secret, naming another client, or
 * smuggling its own request_uri; a client registered to push sending its request in the clear.
 * Runs on SQLite and PostgreSQL (helpers.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import { PUSHED_REQUEST_TTL_SECONDS } from '../../src/defaults.js';
import { startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import { authorize, hostedBrowser } from '../support/oidc-helpers.js';
import { type RelyingParty, relyingParty } from '../support/oidc-token-helpers.js';

describe('pushed authorization requests (PAR)', () => {
  let service: TestService;
  let rp: RelyingParty;
  let other: RelyingParty;
  let config: oidc.Configuration;
  let clock = Date.now();
  before(async () => {
    service = await startTestService({ now: () => clock });
    rp = await relyingParty(service, { name: 'PAR App', redirectUri: 'https://par-app.example/callback' });
    other = await relyingParty(service, { name: 'Other App', redirectUri: 'https://other.example/callback' });
    config = await oidc.discovery(new URL(service.url), rp.clientId, undefined, oidc.ClientSecretBasic(rp.secretKey ?? ''), {
      execute: [oidc.allowInsecureRequests],
    });
  });
  after(() => service.close());

  const pushedUrl = async (extra: Record<string, string> = {}) => {
    const verifier = oidc.randomPKCECodeVerifier();
    const url = await oidc.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: rp.redirectUri,
      scope: 'openid email',
      state: 'par-state',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      ...extra,
    });
    return { url, verifier };
  };
  const push = (body: Record<string, string>, headers: Record<string, string> = {}) =>
    fetch(`${service.url}/oauth/par`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(body),
    }).then(async (r) => ({ status: r.status, body: await r.json() }));
  const basic = (client: RelyingParty) => ({
    authorization: `Basic ${Buffer.from(`${client.clientId}:${client.secretKey}`).toString('base64')}`,
  });
  const authorizeWith = (url: URL, browser = hostedBrowser(service)) =>
    authorize(service, Object.fromEntries(url.searchParams), browser.jar);

  it('is published in discovery', async () => {
    assert.equal(config.serverMetadata().pushed_authorization_request_endpoint, `${service.url}/oauth/par`);
    assert.equal(config.serverMetadata().require_pushed_authorization_requests, false);
  });

  it('openid-client pushes, the browser carries only request_uri, and the code redeems', async () => {
    const { url, verifier } = await pushedUrl();
    assert.deepEqual([...url.searchParams.keys()].sort(), ['client_id', 'request_uri'], 'nothing of the request in the URL');
    assert.match(url.searchParams.get('request_uri') ?? '', /^urn:ietf:params:oauth:request_uri:/);
    const browser = hostedBrowser(service);
    const start = await authorizeWith(url, browser);
    assert.equal(start.status, 303);
    const done = await browser.signIn(start.location ?? '', uniqueEmail('par'));
    const back = new URL(done.location ?? '');
    assert.equal(back.origin + back.pathname, rp.redirectUri);
    const tokens = await oidc.authorizationCodeGrant(config, back, { pkceCodeVerifier: verifier, expectedState: 'par-state' });
    assert.ok(tokens.id_token);
  });

  it('a request_uri works once', async () => {
    const { url } = await pushedUrl();
    assert.equal((await authorizeWith(url)).status, 303);
    const again = await authorizeWith(url);
    assert.equal(again.status, 400, 'our error page, no redirect');
    assert.match(again.body, /request_uri/);
  });

  it('a request_uri is worth nothing after its minute', async () => {
    const { url } = await pushedUrl();
    clock += (PUSHED_REQUEST_TTL_SECONDS + 1) * 1000;
    try {
      assert.equal((await authorizeWith(url)).status, 400);
    } finally {
      clock = Date.now();
    }
  });

  it("another client cannot use a client's request_uri, which stays its owner's", async () => {
    const { url } = await pushedUrl();
    const stolen = new URL(url);
    stolen.searchParams.set('client_id', other.clientId);
    assert.equal((await authorizeWith(stolen)).status, 400);
    assert.equal((await authorizeWith(url)).status, 303, 'unspent by the attempt');
  });

  it('refuses a push with a wrong secret, for another client, or carrying a request_uri, storing nothing', async () => {
    const request = {
      response_type: 'code',
      redirect_uri: rp.redirectUri,
      scope: 'openid',
      code_challenge: 'x'.repeat(43),
      code_challenge_method: 'S256',
    };
    const before = await service.ctx.db.selectFrom('pushed_authorization_requests').select('id').execute();
    const wrong = await push(request, { authorization: `Basic ${Buffer.from(`${rp.clientId}:sk_wrong`).toString('base64')}` });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.error, 'invalid_client');
    const forOther = await push({ ...request, client_id: other.clientId }, basic(rp));
    assert.equal(forOther.status, 400);
    const smuggled = await push({ ...request, request_uri: 'urn:ietf:params:oauth:request_uri:abc' }, basic(rp));
    assert.equal(smuggled.status, 400);
    const unregistered = await push({ ...request, redirect_uri: 'https://evil.example/cb' }, basic(rp));
    assert.equal(unregistered.status, 400, 'the checks of /authorize, answered to the client');
    const after = await service.ctx.db.selectFrom('pushed_authorization_requests').select('id').execute();
    assert.equal(after.length, before.length);
  });

  it('a public client pushes with its client_id alone, and must use PKCE', async () => {
    const spa = await relyingParty(service, { name: 'PAR SPA', public: true, redirectUri: 'https://par-spa.example/cb' });
    const request = { response_type: 'code', client_id: spa.clientId, redirect_uri: spa.redirectUri, scope: 'openid' };
    const noPkce = await push(request);
    assert.equal(noPkce.status, 400);
    assert.match(noPkce.body.error_description, /PKCE/);
    const ok = await push({ ...request, code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' });
    assert.equal(ok.status, 201);
    assert.equal(ok.body.expires_in, PUSHED_REQUEST_TTL_SECONDS);
  });

  it('a client registered to push gets no code for a request sent in the clear', async () => {
    const strict = await relyingParty(service, { name: 'PAR Only', redirectUri: 'https://par-only.example/cb' });
    await service.ctx.clients.setPushedRequests(strict.clientId, 'required');
    const clear = await authorize(service, {
      response_type: 'code',
      client_id: strict.clientId,
      redirect_uri: strict.redirectUri,
      scope: 'openid',
      state: 's',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    });
    assert.equal(clear.status, 303);
    assert.equal(new URL(clear.location ?? '').searchParams.get('error'), 'invalid_request');
    const pushed = await push(
      {
        response_type: 'code',
        redirect_uri: strict.redirectUri,
        scope: 'openid',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      },
      basic(strict),
    );
    assert.equal(pushed.status, 201);
    const start = await authorize(service, { client_id: strict.clientId, request_uri: pushed.body.request_uri });
    assert.equal(start.status, 303);
    assert.match(start.location ?? '', /^\/signin\?request=/);
  });
});
