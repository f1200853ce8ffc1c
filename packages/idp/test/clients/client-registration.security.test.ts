/**
 * Threats to clients that register themselves (issue 39; RFC 7591, RFC 7592): a registration
 * that would send codes to someone else's site (a redirect URI off this machine under the open
 * policy, `javascript:`, `data:`, a fragment, a wildcard, a look-alike loopback host, user
 * info), a confidential client under the open policy, oversized metadata, another client's
 * registration access token, a missing, wrong, expired or spent initial access token, and a
 * flood of registrations from one network. Each refusal is a 4xx with nothing stored. On
 * SQLite, and on PostgreSQL when SERVICE_TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestService, type TestService } from '../support/helpers.js';
import { manage, register } from '../support/registration-helpers.js';

const clientCount = async (service: TestService) =>
  Number(
    (
      await service.ctx.db
        .selectFrom('clients')
        .select((e) => e.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

/**
 * Each request from its own address (the service trusts the loopback proxy's X-Forwarded-For
 * here), so the per-address rate limit, tested on its own below, does not refuse the others.
 */
let address = 0;
const fromNewAddress = () => ({ 'x-forwarded-for': `198.51.100.${++address}` });
const TRUSTING_PROXY = { SERVICE_IDP_TRUST_PROXY: '127.0.0.1,::1' };

/** Registers `metadata` and expects the refusal `error` with nothing stored. */
async function refused(service: TestService, metadata: unknown, error: string, headers: Record<string, string> = {}) {
  const before = await clientCount(service);
  const answer = await register(service, metadata, { ...fromNewAddress(), ...headers });
  assert.equal(answer.status, error === 'invalid_token' ? 401 : 400, JSON.stringify(answer.body));
  assert.equal(answer.body.error, error, JSON.stringify(answer.body));
  assert.equal(await clientCount(service), before, 'nothing stored');
  return answer;
}

describe('open client registration refuses what is not a native public client', () => {
  let service: TestService;
  before(async () => {
    service = await startTestService({ env: { SERVICE_IDP_CLIENT_REGISTRATION: 'open', ...TRUSTING_PROXY } });
  });
  after(() => service.close());

  it('open policy refusing a confidential client: token_endpoint_auth_method other than none', async () => {
    for (const method of ['client_secret_basic', 'client_secret_post', 'private_key_jwt'])
      await refused(service, { redirect_uris: ['http://127.0.0.1/cb'], token_endpoint_auth_method: method }, 'invalid_client_metadata');
    await refused(service, { redirect_uris: ['http://127.0.0.1/cb'], grant_types: ['client_credentials'] }, 'invalid_client_metadata');
    await refused(service, { redirect_uris: ['http://127.0.0.1/cb'], jwks: { keys: [] } }, 'invalid_client_metadata');
  });

  const REDIRECTS: Array<[string, string]> = [
    ['http://evil.example/cb', 'a non-loopback http redirect'],
    ['https://evil.example/cb', 'https under the open policy (a web site, not a native app)'],
    ['http://localhost.evil.example/cb', 'a host that begins with localhost'],
    ['http://127.0.0.1.evil.example/cb', 'a host that begins with 127.0.0.1'],
    ['http://127.0.0.1@evil.example/cb', 'user info: the host is evil.example'],
    ['javascript:alert(1)', 'javascript:'],
    ['data:text/html,<script>alert(1)</script>', 'data:'],
    ['http://127.0.0.1/cb#frag', 'a fragment'],
    ['http://127.0.0.1/*', 'a wildcard'],
    ['com.example.app:/cb\t.evil', 'a character outside RFC 3986'],
    ['/relative/cb', 'a relative URI'],
  ];
  for (const [uri, why] of REDIRECTS) {
    it(`open policy refusing a redirect URI: ${why}`, async () => {
      await refused(service, { redirect_uris: ['http://127.0.0.1/ok', uri] }, 'invalid_redirect_uri');
    });
  }

  it('a client name that spoofs the consent page: line breaks, controls, bidirectional overrides', async () => {
    for (const name of ['Acme\nSign-in by Google', 'Acme\u0000', 'elgooG\u202e', 'Bank\u2066 evil\u2069'])
      await refused(service, { redirect_uris: ['http://127.0.0.1/cb'], client_name: name }, 'invalid_client_metadata');
  });

  it('refuses a registration without redirect URIs, or with one that is not a string', async () => {
    await refused(service, {}, 'invalid_redirect_uri');
    await refused(service, { redirect_uris: [] }, 'invalid_redirect_uri');
    await refused(service, { redirect_uris: 'http://127.0.0.1/cb' }, 'invalid_redirect_uri');
  });

  it('size limits on every field: name, any string, any list, the whole body', async () => {
    await refused(service, { redirect_uris: ['http://127.0.0.1/cb'], client_name: 'n'.repeat(101) }, 'invalid_client_metadata');
    await refused(
      service,
      { redirect_uris: ['http://127.0.0.1/cb'], logo_uri: `https://a.example/${'x'.repeat(2000)}` },
      'invalid_client_metadata',
    );
    await refused(
      service,
      { redirect_uris: ['http://127.0.0.1/cb'], contacts: Array(21).fill('a@example.com') },
      'invalid_client_metadata',
    );
    await refused(service, { redirect_uris: Array.from({ length: 21 }, (_, i) => `http://127.0.0.1/cb${i}`) }, 'invalid_client_metadata');
    await refused(service, { redirect_uris: ['http://127.0.0.1/cb'], policy_uri: { nested: true } }, 'invalid_client_metadata');
    const before = await clientCount(service);
    const huge = await register(service, { redirect_uris: ['http://127.0.0.1/cb'], software_id: 'x'.repeat(9000) }, fromNewAddress());
    // Over the 8 KiB body limit: refused before parsing (an OAuth endpoint's refusal is 400 invalid_request, as the token endpoint's).
    assert.equal(huge.status, 400);
    assert.equal(huge.body.error, 'invalid_request');
    assert.equal(await clientCount(service), before);
  });

  it('registration token of another client: read, update and delete are refused alike, and nothing changes', async () => {
    const mine = (await register(service, { client_name: 'Mine', redirect_uris: ['http://127.0.0.1/mine'] }, fromNewAddress())).body;
    const theirs = (await register(service, { client_name: 'Theirs', redirect_uris: ['http://127.0.0.1/theirs'] }, fromNewAddress())).body;
    const uri = theirs.registration_client_uri;
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', { client_id: theirs.client_id, redirect_uris: ['http://127.0.0.1/stolen'] }],
      ['DELETE', undefined],
    ] as const) {
      for (const token of [mine.registration_access_token, undefined, `${theirs.registration_access_token}x`]) {
        const answer = await manage(service, method, uri, token, body);
        assert.equal(answer.status, 401, `${method} ${JSON.stringify(answer.body)}`);
        assert.equal(answer.body.error, 'invalid_token');
        assert.equal(answer.headers.get('www-authenticate'), 'Bearer error="invalid_token"');
      }
    }
    const unknown = await manage(service, 'GET', `${service.url}/oauth/register/cli_unknown`, mine.registration_access_token);
    assert.equal(unknown.status, 401, 'an unknown client looks like a wrong token');
    const client = await service.ctx.clients.findById(theirs.client_id);
    assert.deepEqual(client?.redirectUris, ['http://127.0.0.1/theirs']);
  });

  it("registration token of a client for an operator's client: never managed through /oauth/register", async () => {
    const operators = await service.ctx.clients.create({ name: 'Op', origins: [], redirectUris: ['http://127.0.0.1/op'], public: true });
    const mine = (await register(service, { redirect_uris: ['http://127.0.0.1/x'] }, fromNewAddress())).body;
    const answer = await manage(service, 'DELETE', `${service.url}/oauth/register/${operators.clientId}`, mine.registration_access_token);
    assert.equal(answer.status, 401);
    assert.ok(await service.ctx.clients.findById(operators.clientId));
  });

  it('an update that names another client, or sends a secret, or a bad redirect URI, changes nothing', async () => {
    const mine = (await register(service, { client_name: 'Stable', redirect_uris: ['http://127.0.0.1/stable'] }, fromNewAddress())).body;
    const other = (await register(service, { redirect_uris: ['http://127.0.0.1/other'] }, fromNewAddress())).body;
    for (const body of [
      { client_id: other.client_id, redirect_uris: ['http://127.0.0.1/x'] },
      { client_id: mine.client_id, client_secret: 's', redirect_uris: ['http://127.0.0.1/x'] },
      { client_id: mine.client_id, redirect_uris: ['https://evil.example/cb'] },
    ]) {
      const answer = await manage(service, 'PUT', mine.registration_client_uri, mine.registration_access_token, body);
      assert.equal(answer.status, 400, JSON.stringify(answer.body));
    }
    assert.deepEqual((await service.ctx.clients.findById(mine.client_id))?.redirectUris, ['http://127.0.0.1/stable']);
  });
});

describe('client registration with an initial access token', () => {
  let service: TestService;
  let time = Date.now();
  before(async () => {
    service = await startTestService({ env: { SERVICE_IDP_CLIENT_REGISTRATION: 'initial-token', ...TRUSTING_PROXY }, now: () => time });
  });
  after(() => service.close());

  const metadata = { client_name: 'Partner', redirect_uris: ['https://partner.example/cb'] };

  it('initial token missing or wrong: 401, nothing stored', async () => {
    const missing = await refused(service, metadata, 'invalid_token');
    assert.equal(missing.headers.get('www-authenticate'), 'Bearer error="invalid_token"');
    await refused(service, metadata, 'invalid_token', { authorization: 'Bearer iat_wrong' });
    const { token } = await service.ctx.clientRegistration.issueInitialToken(24);
    await refused(service, metadata, 'invalid_token', { authorization: `Bearer ${token}x` });
    await refused(service, metadata, 'invalid_token', { authorization: `Basic ${token}` });
  });

  it('an initial token registers one client (https allowed), is spent by it, and is kept only as a hash', async () => {
    const { token } = await service.ctx.clientRegistration.issueInitialToken(24);
    const rows = await service.ctx.db.selectFrom('client_registration_tokens').selectAll().execute();
    assert.ok(rows.every((row) => row.token_hash !== token && !row.token_hash.includes(token)));
    const answer = await register(service, metadata, { ...fromNewAddress(), authorization: `Bearer ${token}` });
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    assert.equal((await service.ctx.clients.findById(answer.body.client_id))?.registered, true);
    await refused(service, metadata, 'invalid_token', { authorization: `Bearer ${token}` });
  });

  it('an initial token presented by two registrations at once registers one client', async () => {
    const { token } = await service.ctx.clientRegistration.issueInitialToken(24);
    const before = await clientCount(service);
    const answers = await Promise.all(
      [1, 2, 3].map(() => register(service, metadata, { ...fromNewAddress(), authorization: `Bearer ${token}` })),
    );
    assert.deepEqual(answers.map((answer) => answer.status).sort(), [201, 401, 401]);
    assert.equal(await clientCount(service), before + 1);
  });

  it('invalid metadata with a good initial token refuses without spending the token', async () => {
    const { token } = await service.ctx.clientRegistration.issueInitialToken(24);
    await refused(service, { redirect_uris: ['javascript:alert(1)'] }, 'invalid_redirect_uri', { authorization: `Bearer ${token}` });
    const answer = await register(service, metadata, { ...fromNewAddress(), authorization: `Bearer ${token}` });
    assert.equal(answer.status, 201);
  });

  it('an expired initial token is refused', async () => {
    const { token } = await service.ctx.clientRegistration.issueInitialToken(1);
    time += 61 * 60 * 1000;
    await refused(service, metadata, 'invalid_token', { authorization: `Bearer ${token}` });
  });
});

describe('client registration rate limit', () => {
  let service: TestService;
  before(async () => {
    service = await startTestService({ env: { SERVICE_IDP_CLIENT_REGISTRATION: 'open' } });
  });
  after(() => service.close());

  it('rate limit: the 11th registration from one address in an hour gets 429 with Retry-After, and is not stored', async () => {
    for (let i = 0; i < 10; i++) {
      const answer = await register(service, { redirect_uris: [`http://127.0.0.1/cb${i}`] });
      assert.equal(answer.status, 201, JSON.stringify(answer.body));
    }
    const before = await clientCount(service);
    const flood = await register(service, { redirect_uris: ['http://127.0.0.1/cb-flood'] });
    assert.equal(flood.status, 429);
    assert.ok(Number(flood.headers.get('retry-after')) > 0);
    assert.equal(await clientCount(service), before);
  });
});
