/**
 * Attacks on the client types of RFC 6749 2.1. A public client (a single-page or native app)
 * has no secret, so anyone can send its client_id: PKCE S256 is what binds a code to the app
 * that asked for it (RFC 9700 2.1.1), and a code of a public client without a code challenge is
 * refused (a PKCE downgrade). A confidential client must always authenticate: leaving its
 * secret out does not turn it into a public one. Redirect URIs are registered verbatim and only
 * from safe schemes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createPkcePair } from 'service-web';
import { APP_ORIGIN, runCli, startTestService, type TestService, uniqueEmail } from '../support/helpers.js';

describe('public and confidential clients at the token endpoint', () => {
  let service: TestService;
  let publicClient: { clientId: string; publishableKey: string; secretKey?: string };
  before(async () => {
    service = await startTestService({ testMode: true });
    publicClient = await service.ctx.clients.create({
      name: 'Single-page app',
      origins: [APP_ORIGIN],
      redirectUris: ['http://app.test:3000/callback'],
      public: true,
    });
  });
  after(() => service.close());

  /** A code from the browser flow (test mode), for the client of `publishableKey`. */
  async function codeFor(publishableKey: string, codeChallenge?: string): Promise<string> {
    const post = async (path: string, body: unknown) => {
      const response = await fetch(service.url + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: APP_ORIGIN, 'x-service-key': publishableKey },
        body: JSON.stringify(body),
      });
      return response.json();
    };
    const email = uniqueEmail('client-type');
    const a = await post('/v1/authenticate', {
      userid: email,
      cryptoVersion: 'v1',
      ...(codeChallenge ? { codeChallenge, codeChallengeMethod: 'S256' } : {}),
    });
    await post('/v1/email-otp/verify', { userid: email, deviceToken: a.deviceToken, otp: a.code });
    return (await post('/v1/devices', { userid: email, deviceToken: a.deviceToken })).code;
  }

  const token = (params: Record<string, string>, headers: Record<string, string> = {}) =>
    fetch(service.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams({ grant_type: 'authorization_code', ...params }),
    }).then(async (r) => ({ status: r.status, body: await r.json() }));

  it('creates a public client without a secret key', () => {
    assert.equal(publicClient.secretKey, undefined);
  });

  it('redeems a public client`s code with client_id and code_verifier alone (token_endpoint_auth_method none)', async () => {
    const pkce = await createPkcePair();
    const code = await codeFor(publicClient.publishableKey, pkce.codeChallenge);
    const r = await token({ code, client_id: publicClient.clientId, code_verifier: pkce.codeVerifier });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(typeof r.body.id_token, 'string');
  });

  it('refuses a public client`s code issued without a code challenge (PKCE downgrade)', async () => {
    const code = await codeFor(publicClient.publishableKey);
    const r = await token({ code, client_id: publicClient.clientId });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, { error: 'invalid_grant', error_description: 'A public client must use PKCE (S256).' });
  });

  it('refuses a public client`s code without its code_verifier', async () => {
    const pkce = await createPkcePair();
    const code = await codeFor(publicClient.publishableKey, pkce.codeChallenge);
    const r = await token({ code, client_id: publicClient.clientId });
    assert.equal(r.status, 400);
    assert.equal(r.body.error, 'invalid_grant');
  });

  it('refuses a confidential client that leaves its secret out, and spends nothing', async () => {
    const code = await codeFor(service.publishableKey);
    const r = await token({ code, client_id: service.clientId });
    assert.equal(r.status, 401);
    assert.equal(r.body.error, 'invalid_client');
    // The code was not consumed: client authentication comes first.
    const ok = await token({ code, client_id: service.clientId, client_secret: service.secretKey });
    assert.equal(ok.status, 200);
  });

  it('refuses a public client that sends a secret (it has none that could match)', async () => {
    const pkce = await createPkcePair();
    const code = await codeFor(publicClient.publishableKey, pkce.codeChallenge);
    for (const headers of [{}, { authorization: `Basic ${Buffer.from(`${publicClient.clientId}:guess`).toString('base64')}` }]) {
      const r = await token(
        {
          code,
          code_verifier: pkce.codeVerifier,
          ...('authorization' in headers ? {} : { client_id: publicClient.clientId, client_secret: 'guess' }),
        },
        headers,
      );
      assert.equal(r.status, 401);
      assert.equal(r.body.error, 'invalid_client');
    }
  });

  it('refuses a public client redeeming a confidential client`s code (code injection across clients)', async () => {
    const pkce = await createPkcePair();
    const code = await codeFor(service.publishableKey, pkce.codeChallenge);
    const r = await token({ code, client_id: publicClient.clientId, code_verifier: pkce.codeVerifier });
    assert.equal(r.status, 400);
    assert.equal(r.body.error, 'invalid_grant');
  });

  it('says so in discovery (private_key_jwt: machine clients with registered keys, token/client-credentials.test.ts)', async () => {
    const metadata = await (await fetch(`${service.url}/.well-known/openid-configuration`)).json();
    assert.deepEqual(metadata.token_endpoint_auth_methods_supported, [
      'client_secret_basic',
      'client_secret_post',
      'none',
      'private_key_jwt',
    ]);
  });
});

describe('redirect URI registration', () => {
  let service: TestService;
  before(async () => {
    service = await startTestService();
  });
  after(() => service.close());

  for (const [uri, why] of [
    ['javascript:alert(1)//', 'script scheme'],
    ['data:text/html,hi', 'data scheme'],
    ['/callback', 'relative'],
    ['https://app.example.com/cb#frag', 'fragment (RFC 6749 3.1.2)'],
    ['https://user:pw@app.example.com/cb', 'credentials'],
    ['myapp:/callback', 'private-use scheme without a dot (RFC 8252 7.1)'],
  ]) {
    it(`refuses ${why}: ${uri}`, async () => {
      await assert.rejects(service.ctx.clients.create({ name: 'X', origins: [], redirectUris: [uri as string] }), /redirect URI/);
    });
  }

  it('keeps a redirect URI verbatim and accepts a private-use scheme for native apps', async () => {
    const uris = ['https://App.example.com:443/cb?x=1', 'com.example.app:/oauth2redirect'];
    const { clientId } = await service.ctx.clients.create({ name: 'Native', origins: [], redirectUris: uris });
    assert.deepEqual((await service.ctx.clients.findById(clientId))?.redirectUris, uris);
  });

  it('needs an origin or a redirect URI', async () => {
    await assert.rejects(service.ctx.clients.create({ name: 'X', origins: [] }), /at least one --origin or --redirect-uri/);
  });

  it('is listed with its type and redirect URIs', async () => {
    const { clientId } = await service.ctx.clients.create({
      name: 'Listed',
      origins: [],
      redirectUris: ['https://a.example/cb'],
      public: true,
    });
    const listed = (await service.ctx.clients.list()).find((c) => c.id === clientId);
    assert.deepEqual([listed?.type, listed?.redirectUris], ['public', ['https://a.example/cb']]);
  });
});

describe('service-idp clients create --redirect-uri --public', () => {
  it('creates a public client with its redirect URIs and lists them', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const data = mkdtempSync(join(tmpdir(), 'service-idp-cli-'));
    try {
      const created = await runCli([
        'clients',
        'create',
        '--data',
        data,
        '--name',
        'SPA',
        '--redirect-uri',
        'https://spa.example/cb',
        '--redirect-uri',
        'https://spa.example/cb2',
        '--public',
        '--json',
      ]);
      assert.equal(created.code, 0, created.stderr);
      const keys = JSON.parse(created.stdout);
      assert.equal(keys.secretKey, undefined);
      const listed = await runCli(['clients', 'list', '--data', data]);
      assert.match(listed.stdout, /REDIRECT URIS/);
      assert.match(
        listed.stdout,
        new RegExp(`${keys.clientId}\\s+SPA\\s+public\\s+optional\\s+https://spa.example/cb https://spa.example/cb2`),
      );
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });
});
