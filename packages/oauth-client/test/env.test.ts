import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { exchangeCodeForClaims } from '../src/index.js';
import { CLIENT_ID, CLIENT_SECRET, clearExchangeEnv, type FakeIdp, ISSUER, signIdToken, standardClaims, startFakeIdp } from './fake-idp.js';

let idp: FakeIdp;
let restore: () => void;
let dir: string;
before(async () => {
  idp = await startFakeIdp();
  dir = await mkdtemp(join(tmpdir(), 'oauth-env-'));
});
after(async () => {
  await idp.close();
  await rm(dir, { recursive: true, force: true });
});
beforeEach(() => {
  restore = clearExchangeEnv();
  idp.requests.length = 0;
});
afterEach(() => restore());

function setFullEnv(overrides: Record<string, string> = {}) {
  Object.assign(process.env, {
    SERVICE_API_KEY: CLIENT_SECRET,
    OAUTH_TOKEN_ENDPOINT: idp.tokenUrl,
    OAUTH_CLIENT_ID: CLIENT_ID,
    OAUTH_PUBLIC_KEY: idp.key.publicPem,
    OAUTH_ISSUER: ISSUER,
    ...overrides,
  });
}

describe('environment variable fallback', () => {
  it('runs the whole exchange from the environment with only the code given', async () => {
    setFullEnv();
    const claims = await exchangeCodeForClaims({ code: 'good-code' });
    assert.equal(claims.sub, 'user-1');
    assert.deepEqual(idp.requests[0]?.form, {
      grant_type: 'authorization_code',
      code: 'good-code',
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
    });
  });

  it('reads OAUTH_PUBLIC_KEY as a file path', async () => {
    const path = join(dir, 'idp.pem');
    await writeFile(path, idp.key.publicPem);
    setFullEnv({ OAUTH_PUBLIC_KEY: path });
    assert.equal((await exchangeCodeForClaims({ code: 'good-code' })).sub, 'user-1');
  });

  it('reads OAUTH_PUBLIC_KEY written on one line with \\n escapes', async () => {
    setFullEnv({ OAUTH_PUBLIC_KEY: idp.key.publicPem.trim().replaceAll('\n', '\\n') });
    assert.equal((await exchangeCodeForClaims({ code: 'good-code' })).sub, 'user-1');
  });

  it('prefers JWKS_URL over OAUTH_PUBLIC_KEY', async () => {
    setFullEnv({ JWKS_URL: idp.jwksUrl, OAUTH_PUBLIC_KEY: 'not a key at all' });
    assert.equal((await exchangeCodeForClaims({ code: 'good-code' })).sub, 'user-1');
  });

  it('lets explicit options win over the environment', async () => {
    setFullEnv({
      SERVICE_API_KEY: 'env-secret',
      OAUTH_TOKEN_ENDPOINT: 'https://env.invalid/token',
      OAUTH_CLIENT_ID: 'env-client',
      JWKS_URL: 'https://env.invalid/jwks',
      OAUTH_ISSUER: 'https://env-issuer.invalid',
      OAUTH_AUDIENCE: 'env-audience',
    });
    const claims = await exchangeCodeForClaims({
      code: 'good-code',
      oauthTokenUrl: idp.tokenUrl,
      clientId: CLIENT_ID,
      apiKey: CLIENT_SECRET,
      publicKey: idp.key.publicPem,
      issuer: ISSUER,
      audience: CLIENT_ID,
    });
    assert.equal(claims.sub, 'user-1');
    assert.equal(idp.requests[0]?.form.client_secret, CLIENT_SECRET);
    assert.equal(idp.requests[0]?.form.client_id, CLIENT_ID);
  });

  it('checks OAUTH_ISSUER', async () => {
    setFullEnv({ OAUTH_ISSUER: 'https://other-issuer.test' });
    await assert.rejects(exchangeCodeForClaims({ code: 'good-code' }), { code: 'ERR_JWT_CLAIM_INVALID', claim: 'iss' });
  });

  it('checks OAUTH_AUDIENCE instead of the client ID', async () => {
    setFullEnv({ OAUTH_AUDIENCE: 'api://backend' });
    await assert.rejects(exchangeCodeForClaims({ code: 'good-code' }), { code: 'ERR_JWT_CLAIM_INVALID', claim: 'aud' });
    const saved = idp.respond;
    idp.respond = async () => ({
      status: 200,
      body: { token_type: 'Bearer', id_token: await signIdToken(idp.key, standardClaims({ aud: 'api://backend' })) },
    });
    try {
      assert.equal((await exchangeCodeForClaims({ code: 'good-code' })).aud, 'api://backend');
    } finally {
      idp.respond = saved;
    }
  });

  for (const name of ['SERVICE_API_KEY', 'OAUTH_TOKEN_ENDPOINT', 'OAUTH_CLIENT_ID']) {
    it(`names ${name} when it is missing`, async () => {
      setFullEnv();
      delete process.env[name];
      await assert.rejects(exchangeCodeForClaims({ code: 'good-code' }), {
        name: 'OAuthExchangeError',
        code: 'ERR_OAUTH_EXCHANGE_CONFIG',
        message: new RegExp(name),
      });
      assert.equal(idp.requests.length, 0);
    });
  }

  it('treats an empty variable as unset', async () => {
    setFullEnv({ SERVICE_API_KEY: '' });
    await assert.rejects(exchangeCodeForClaims({ code: 'good-code' }), { code: 'ERR_OAUTH_EXCHANGE_CONFIG' });
  });
});
