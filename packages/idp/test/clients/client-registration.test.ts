/**
 * Clients that register themselves (issue 39; RFC 7591, RFC 7592): off by default; `open`
 * registers public native clients, which are third-party (the consent page), marked
 * `registered`, read, changed and deleted with their registration access token (kept as a
 * keyed hash), and swept when left unused; both metadata documents name the endpoint when on.
 * On SQLite, and on PostgreSQL when SERVICE_TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { OPENAPI_PATH } from '../../src/http/openapi.js';
import { loadConfig, startService } from '../../src/index.js';
import { adminApi } from '../support/admin-api.js';
import { answerConsent, consentPage, isConsentPage, redeemAt, startSignIn } from '../support/consent-helpers.js';
import { runCli, startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import { hostedBrowser } from '../support/oidc-helpers.js';
import { manage, register } from '../support/registration-helpers.js';

const DAY_MS = 24 * 60 * 60 * 1000;

describe('client registration is off by default', () => {
  let service: TestService;
  before(async () => {
    service = await startTestService();
  });
  after(() => service.close());

  it('has no /oauth/register and no registration_endpoint in either metadata document', async () => {
    const answer = await register(service, { redirect_uris: ['http://127.0.0.1/cb'] });
    assert.equal(answer.status, 404);
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
      const metadata = await (await fetch(service.url + path)).json();
      assert.equal(metadata.registration_endpoint, undefined, path);
    }
  });
});

describe('open client registration (RFC 7591, RFC 7592)', () => {
  let service: TestService;
  let time = Date.now();
  before(async () => {
    service = await startTestService({ env: { SERVICE_IDP_CLIENT_REGISTRATION: 'open' }, now: () => time });
  });
  after(() => service.close());

  it('both metadata documents name the registration endpoint', async () => {
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
      const metadata = await (await fetch(service.url + path)).json();
      assert.equal(metadata.registration_endpoint, `${service.url}/oauth/register`, path);
    }
  });

  it('the OpenAPI document describes the four operations and their bearer tokens', async () => {
    const document = await (await fetch(service.url + OPENAPI_PATH)).json();
    const register = document.paths['/oauth/register'].post;
    assert.equal(register.operationId, 'registerClient');
    assert.deepEqual(register.security, [{ initialAccessToken: [] }, {}]);
    const managed = document.paths['/oauth/register/{client_id}'];
    assert.deepEqual(
      ['get', 'put', 'delete'].map((method) => [managed[method].operationId, managed[method].security]),
      [
        ['getClientRegistration', [{ registrationAccessToken: [] }]],
        ['updateClientRegistration', [{ registrationAccessToken: [] }]],
        ['deleteClientRegistration', [{ registrationAccessToken: [] }]],
      ],
    );
  });

  it('registers a public, third-party, registered client; its token is stored only as a hash; the event is recorded', async () => {
    const answer = await register(service, {
      client_name: 'Agent CLI',
      redirect_uris: ['http://127.0.0.1/callback', 'com.example.agent:/cb'],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      logo_uri: 'https://agent.example/logo.png',
    });
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    assert.equal(answer.headers.get('cache-control'), 'no-store');
    const info = answer.body;
    assert.match(info.client_id, /^cli_/);
    assert.equal(info.client_name, 'Agent CLI');
    assert.deepEqual(info.redirect_uris, ['http://127.0.0.1/callback', 'com.example.agent:/cb']);
    assert.equal(info.token_endpoint_auth_method, 'none');
    assert.equal(info.client_secret, undefined);
    assert.match(info.registration_access_token, /^rat_/);
    assert.equal(info.registration_client_uri, `${service.url}/oauth/register/${info.client_id}`);
    const client = await service.ctx.clients.findById(info.client_id);
    assert.equal(client?.type, 'public');
    assert.equal(client?.thirdParty, true);
    assert.equal(client?.registered, true);
    const row = await service.ctx.db.selectFrom('clients').selectAll().where('id', '=', info.client_id).executeTakeFirstOrThrow();
    assert.ok(row.registration_token_hash && !row.registration_token_hash.includes(info.registration_access_token));
    assert.ok(!JSON.stringify(row).includes(info.registration_access_token), 'the token itself is nowhere in the row');
    const { events } = await service.ctx.events.list({ type: 'client.registered', limit: 5 });
    assert.ok(events.some((event) => event.clientId === info.client_id));
  });

  it('a registered client signs a user in on a loopback port after the consent page, and redeems its code with PKCE', async () => {
    const { body: info } = await register(service, { client_name: 'Port Agent', redirect_uris: ['http://127.0.0.1/callback'] });
    const rp = { clientId: info.client_id, redirectUri: 'http://127.0.0.1:53682/callback' };
    const browser = hostedBrowser(service);
    const start = await startSignIn(service, rp, uniqueEmail('agent'), browser);
    assert.ok(isConsentPage(start.location), `the consent page first: ${start.location}`);
    const page = await consentPage(service, browser.jar, start.location);
    assert.match(
      page.html,
      /<h1>Port Agent asks for access <small class="unverified">\(unverified\)<\/small><\/h1>/,
      'its name marked unverified',
    );
    assert.match(page.html, /The application chose the name Port Agent itself; this service has not verified it\./);
    const allowed = await answerConsent(service, browser.jar, { request: page.request, csrf: page.csrf, decision: 'allow' });
    assert.ok(allowed.location?.startsWith(`${rp.redirectUri}?`), allowed.location ?? allowed.body);
    const tokens = await redeemAt(service, rp, allowed.location, start.codeVerifier);
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
  });

  it("the admin API's client shows it registered itself; an operator's client does not", async () => {
    const { body: info } = await register(service, { client_name: 'Listed', redirect_uris: ['http://127.0.0.1/listed'] });
    const admin = adminApi(service.url, (await service.ctx.adminKeys.create('ops', 'cli')).key);
    const read = await admin('GET', `/clients/${info.client_id}`);
    assert.equal(read.status, 200, JSON.stringify(read.body));
    assert.equal(read.body.registered, true);
    assert.equal(read.body.thirdParty, true);
    assert.equal(read.body.type, 'public');
    const listed = await admin('GET', '/clients?limit=100');
    const operators = listed.body.clients.find((client: { id: string }) => client.id === service.clientId);
    assert.equal(operators.registered, false);
  });

  it('reads, replaces and deletes its registration with its registration access token', async () => {
    const { body: info } = await register(service, { client_name: 'Managed', redirect_uris: ['http://127.0.0.1/a'] });
    const read = await manage(service, 'GET', info.registration_client_uri, info.registration_access_token);
    assert.equal(read.status, 200);
    assert.deepEqual(read.body, info);
    const updated = await manage(service, 'PUT', info.registration_client_uri, info.registration_access_token, {
      client_id: info.client_id,
      client_name: 'Managed 2',
      redirect_uris: ['http://[::1]/b'],
    });
    assert.equal(updated.status, 200, JSON.stringify(updated.body));
    assert.equal(updated.body.client_name, 'Managed 2');
    const client = await service.ctx.clients.findById(info.client_id);
    assert.deepEqual(client?.redirectUris, ['http://[::1]/b']);
    assert.equal(client?.name, 'Managed 2');
    const deleted = await manage(service, 'DELETE', info.registration_client_uri, info.registration_access_token);
    assert.equal(deleted.status, 204);
    assert.equal(await service.ctx.clients.findById(info.client_id), undefined);
    const { events } = await service.ctx.events.list({ type: 'client.deleted', limit: 5 });
    assert.ok(events.some((event) => event.clientId === info.client_id));
    const again = await manage(service, 'GET', info.registration_client_uri, info.registration_access_token);
    assert.equal(again.status, 401);
  });

  it('the sweep deletes a registered client unused for 30 days, and keeps one that made a token request', async () => {
    const unused = (await register(service, { redirect_uris: ['http://127.0.0.1/unused'] })).body;
    const used = (await register(service, { redirect_uris: ['http://127.0.0.1/used'] })).body;
    const operators = await service.ctx.clients.create({
      name: 'Operator app',
      origins: [],
      redirectUris: ['http://127.0.0.1/op'],
      public: true,
    });
    time += 20 * DAY_MS;
    // A token request authenticates the client (here a refused one: the client is still identified and used).
    await fetch(`${service.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'none', client_id: used.client_id }),
    });
    time += 11 * DAY_MS;
    await service.ctx.sweepExpired(time);
    assert.equal(await service.ctx.clients.findById(unused.client_id), undefined, 'unused for 31 days: swept');
    assert.ok(await service.ctx.clients.findById(used.client_id), 'used 11 days ago: kept');
    assert.ok(await service.ctx.clients.findById(operators.clientId), "an operator's client is never swept");
    const { events } = await service.ctx.events.list({ type: 'client.deleted', limit: 10 });
    assert.ok(events.some((event) => event.clientId === unused.client_id && event.detail?.reason === 'unused'));
  });
});

describe('clients registration-token (CLI)', () => {
  let data: string;
  before(() => {
    data = mkdtempSync(join(tmpdir(), 'service-idp-registration-'));
  });
  after(() => rmSync(data, { recursive: true, force: true }));

  it('prints an initial access token once, which registers one client with the service on that database', async () => {
    const made = await runCli(['clients', 'registration-token', '--hours', '2', '--json', '--data', data]);
    assert.equal(made.code, 0, made.stderr);
    const { token, expiresAt } = JSON.parse(made.stdout);
    assert.match(token, /^iat_/);
    assert.ok(Date.parse(expiresAt) > Date.now() + 60 * 60 * 1000);
    assert.match(made.stderr, /SERVICE_IDP_CLIENT_REGISTRATION is off/);
    const refused = await runCli(['clients', 'registration-token', '--hours', '0', '--data', data]);
    assert.equal(refused.code, 2);
    const running = await startService(loadConfig({ port: '0', data }, { SERVICE_IDP_CLIENT_REGISTRATION: 'initial-token' }), {});
    try {
      const service = { url: running.url } as TestService;
      const metadata = { redirect_uris: ['https://partner.example/cb'] };
      const answer = await register(service, metadata, { authorization: `Bearer ${token}` });
      assert.equal(answer.status, 201, JSON.stringify(answer.body));
      assert.equal((await register(service, metadata, { authorization: `Bearer ${token}` })).status, 401, 'spent');
    } finally {
      await running.close();
    }
  });
});
