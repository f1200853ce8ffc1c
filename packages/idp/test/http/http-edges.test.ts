/**
 * The transport's promises: CORS only for registered origins, the token endpoint never
 * CORS, every malformed body a 4xx with no state change, RFC 6749 errors from /oauth/token.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import helmet from '@fastify/helmet';
import Fastify from 'fastify';
import { SECURITY_HEADERS } from '../../src/http/security-headers.js';
import { APP_ORIGIN, startTestService, type TestService, uniqueEmail } from '../support/helpers.js';

describe('HTTP edges', () => {
  let service: TestService;
  before(async () => {
    service = await startTestService();
  });
  after(() => service.close());

  const preflight = (path: string, origin: string) =>
    fetch(service.url + path, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-service-key' },
    });

  describe('CORS', () => {
    it('answers a preflight from a registered origin, allowing the key header', async () => {
      const r = await preflight('/v1/authenticate', APP_ORIGIN);
      assert.equal(r.headers.get('access-control-allow-origin'), APP_ORIGIN);
      assert.match(r.headers.get('access-control-allow-headers') ?? '', /x-service-key/);
    });

    it('gives an unregistered origin no CORS headers, and refuses its requests', async () => {
      const r = await preflight('/v1/authenticate', 'https://evil.test');
      assert.equal(r.headers.get('access-control-allow-origin'), null);
      const post = await service.post('/v1/authenticate', { userid: uniqueEmail(), cryptoVersion: 'v1' }, 'https://evil.test');
      assert.equal(post.status, 403);
      assert.equal(post.body.code, 'ERR_CLIENT_ORIGIN_NOT_ALLOWED');
      assert.equal(post.headers.get('access-control-allow-origin'), null);
    });

    it("refuses a registered origin that belongs to another client's key", async () => {
      await service.ctx.clients.create({ name: 'Other', origins: ['http://other.test'] });
      const post = await service.post('/v1/authenticate', { userid: uniqueEmail(), cryptoVersion: 'v1' }, 'http://other.test');
      assert.equal(post.status, 403);
    });

    it('answers CORS on the token endpoint only once the calling client is known to own the origin (the rest: token/spa-cors.security.test.ts)', async () => {
      // A preflight names no client: a registered origin passes it, an unknown one does not.
      assert.equal((await preflight('/oauth/token', APP_ORIGIN)).headers.get('access-control-allow-origin'), APP_ORIGIN);
      assert.equal((await preflight('/oauth/token', 'https://evil.test')).headers.get('access-control-allow-origin'), null);
      // A request with no client to check the origin against: the page may not read the refusal.
      const post = await fetch(service.tokenUrl, {
        method: 'POST',
        headers: { origin: APP_ORIGIN, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=authorization_code&code=x',
      });
      assert.equal(post.headers.get('access-control-allow-origin'), null);
    });

    it('answers an unknown /v1 path with a 404 the page can read, and marks answers no-store', async () => {
      const missing = await fetch(`${service.url}/v1/nope`, { headers: { origin: APP_ORIGIN, 'x-service-key': service.publishableKey } });
      assert.equal(missing.status, 404);
      assert.equal(missing.headers.get('access-control-allow-origin'), APP_ORIGIN);
      assert.equal((await missing.json()).code, 'ERR_NOT_FOUND');
      const ok = await service.post('/v1/device-challenges', {});
      assert.equal(ok.status, 200);
      assert.equal(ok.headers.get('cache-control'), 'no-store');
    });

    it("sends helmet's headers, as @fastify/helmet with the service's options set them, on every answer", async () => {
      const reference = Fastify({ logger: false });
      await reference.register(helmet, { contentSecurityPolicy: false, crossOriginResourcePolicy: { policy: 'cross-origin' } });
      reference.get('/', async () => ({}));
      const { headers } = await reference.inject('/');
      const expected = Object.fromEntries(Object.keys(SECURITY_HEADERS).map((name) => [name, String(headers[name])]));
      // Nothing helmet sets is missing here (x-powered-by is one it removes).
      assert.deepEqual(
        Object.keys(headers).filter(
          (name) => !(name in SECURITY_HEADERS) && !['content-type', 'content-length', 'date', 'connection', 'keep-alive'].includes(name),
        ),
        [],
      );
      assert.deepEqual(SECURITY_HEADERS, expected);
      await reference.close();
      const answers = [
        await fetch(`${service.url}/healthz`),
        await fetch(`${service.url}/v1/client`, { headers: { origin: APP_ORIGIN, 'x-service-key': 'pk_wrong' } }),
        await fetch(`${service.url}/nope`),
        await preflight('/v1/authenticate', APP_ORIGIN),
        await fetch(`${service.url}/.well-known/jwks.json`),
      ];
      for (const answer of answers) {
        for (const [name, value] of Object.entries(SECURITY_HEADERS))
          assert.equal(answer.headers.get(name), value, `${answer.url} ${name}`);
      }
      assert.deepEqual(
        answers.map((a) => a.headers.get('cache-control')),
        ['no-store', 'no-store', 'no-store', 'no-store', 'public, max-age=300'],
      );
    });

    it('refuses an unknown or missing publishable key', async () => {
      const r = await fetch(`${service.url}/v1/client`, { headers: { origin: APP_ORIGIN, 'x-service-key': 'pk_wrong' } });
      assert.equal(r.status, 401);
      assert.equal((await r.json()).code, 'ERR_CLIENT_KEY_INVALID');
    });
  });

  describe('validation', () => {
    const bad: Array<[string, string, unknown]> = [
      ['/v1/authenticate', 'missing cryptoVersion', { userid: 'a@example.com' }],
      ['/v1/authenticate', 'unknown field', { userid: 'a@example.com', cryptoVersion: 'v1', admin: true }],
      ['/v1/authenticate', 'wrong type', { userid: 42, cryptoVersion: 'v1' }],
      ['/v1/authenticate', 'unknown crypto version', { userid: 'a@example.com', cryptoVersion: 'v9' }],
      [
        '/v1/authenticate',
        'plain PKCE',
        { userid: 'a@example.com', cryptoVersion: 'v1', codeChallenge: 'x'.repeat(43), codeChallengeMethod: 'plain' },
      ],
      ['/v1/authenticate', 'challenge without method', { userid: 'a@example.com', cryptoVersion: 'v1', codeChallenge: 'x'.repeat(43) }],
      [
        '/v1/authenticate',
        'short challenge',
        { userid: 'a@example.com', cryptoVersion: 'v1', codeChallenge: 'abc', codeChallengeMethod: 'S256' },
      ],
      ['/v1/authenticate', 'not JSON', '{"userid":'],
      ['/v1/email-otp/verify', '5-digit OTP', { userid: 'a@example.com', deviceToken: 'dt_xxxxxxxxxxxx', otp: '12345' }],
      [
        '/v1/devices',
        'RSA device key',
        { userid: 'a@example.com', deviceToken: 'dt_xxxxxxxxxxxx', devicePublicKey: { kty: 'RSA', n: 'x', e: 'AQAB' } },
      ],
      ['/v1/authenticate', 'oversized body', { userid: 'a@example.com', cryptoVersion: 'v1', deviceProof: 'x'.repeat(40_000) }],
    ];
    for (const [path, label, body] of bad) {
      it(`${path}: ${label} → 4xx, nothing stored, nothing sent`, async () => {
        const mailBefore = (await service.ctx.mailbox.list(1000)).length;
        const r = await service.post(path, body);
        assert.ok(r.status >= 400 && r.status < 500, `status ${r.status}`);
        assert.equal(r.body.code, 'ERR_REQUEST_INVALID');
        assert.equal((await service.ctx.mailbox.list(1000)).length, mailBefore);
        const registrations = await service.ctx.db
          .selectFrom('registrations')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow();
        assert.equal(Number(registrations.n), 0);
      });
    }
  });

  describe('token endpoint errors (RFC 6749 5.2)', () => {
    const token = (body: string, headers: Record<string, string> = {}) =>
      fetch(service.tokenUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body }).then(
        async (r) => ({
          status: r.status,
          body: await r.json(),
          headers: r.headers,
        }),
      );

    it('unsupported_grant_type', async () => {
      const r = await token('grant_type=password&username=a&password=b');
      assert.equal(r.status, 400);
      assert.equal(r.body.error, 'unsupported_grant_type');
      assert.equal(r.headers.get('cache-control'), 'no-store');
    });

    it('invalid_request without a code, and for a JSON body', async () => {
      assert.equal((await token('grant_type=authorization_code')).body.error, 'invalid_request');
      const json = await fetch(service.tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"grant_type":"authorization_code","code":"x"}',
      });
      assert.equal(json.status, 400);
      assert.equal((await json.json()).error, 'invalid_request');
    });

    it('invalid_client with a WWW-Authenticate challenge for bad Basic credentials', async () => {
      const basic = Buffer.from(`${service.clientId}:wrong`).toString('base64');
      const r = await token('grant_type=authorization_code&code=abc', { authorization: `Basic ${basic}` });
      assert.equal(r.status, 401);
      assert.equal(r.body.error, 'invalid_client');
      assert.match(r.headers.get('www-authenticate') ?? '', /^Basic/);
    });

    it('invalid_client, not a 500, for undecodable Basic credentials', async () => {
      const basic = Buffer.from(`${service.clientId}:%E0%A4%A`).toString('base64');
      const r = await token('grant_type=authorization_code&code=abc', { authorization: `Basic ${basic}` });
      assert.equal(r.status, 401);
      assert.equal(r.body.error, 'invalid_client');
      const noColon = await token('grant_type=authorization_code&code=abc', {
        authorization: `Basic ${Buffer.from('nocolon').toString('base64')}`,
      });
      assert.equal(noColon.body.error, 'invalid_client');
    });

    it('invalid_grant for an unknown code', async () => {
      const r = await token(
        new URLSearchParams({
          grant_type: 'authorization_code',
          code: 'ac_unknown',
          client_id: service.clientId,
          client_secret: service.secretKey,
        }).toString(),
      );
      assert.equal(r.status, 400);
      assert.equal(r.body.error, 'invalid_grant');
    });
  });

  it('answers unknown paths with a typed 404 and rejects bad bearer tokens at userinfo', async () => {
    const missing = await fetch(`${service.url}/nope`);
    assert.equal(missing.status, 404);
    assert.equal((await missing.json()).code, 'ERR_NOT_FOUND');
    const userinfo = await fetch(`${service.url}/oauth/userinfo`, { headers: { authorization: 'Bearer forged' } });
    assert.equal(userinfo.status, 401);
  });

  it('publishes a discovery document and JWKS that agree with each other', async () => {
    const discovery = await (await fetch(`${service.url}/.well-known/openid-configuration`)).json();
    assert.equal(discovery.issuer, service.url);
    assert.deepEqual(discovery.code_challenge_methods_supported, ['S256']);
    const jwks = await (await fetch(discovery.jwks_uri)).json();
    // One current key per algorithm a client may register (RS256 is the default).
    assert.deepEqual(jwks.keys.map((k: { alg: string }) => k.alg).sort(), ['ES256', 'EdDSA', 'RS256']);
    assert.deepEqual([...discovery.id_token_signing_alg_values_supported].sort(), ['ES256', 'EdDSA', 'RS256']);
    for (const key of jwks.keys) assert.equal(key.d, undefined, 'no private parts in the JWKS');
  });

  it('serves the script-tag build of service-web', async () => {
    const r = await fetch(`${service.url}/sdk/v1/service-web.js`);
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /javascript/);
    assert.match(await r.text(), /ServiceWeb/);
  });
});
