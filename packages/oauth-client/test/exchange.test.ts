import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import {
  type Claims,
  exchangeCodeForClaims,
  InvalidPublicKeyError,
  JWTVerificationError,
  OAuthExchangeError,
  ServiceOAuthError,
} from '../src/index.js';
import {
  baseOptions,
  CLIENT_ID,
  CLIENT_SECRET,
  clearExchangeEnv,
  type FakeIdp,
  ISSUER,
  signIdToken,
  standardClaims,
  startFakeIdp,
} from './fake-idp.js';

let idp: FakeIdp;
let dir: string;
let restoreEnv: () => void;
const defaultRespond = () => idp.respond;
let originalRespond: FakeIdp['respond'];

before(async () => {
  idp = await startFakeIdp();
  originalRespond = defaultRespond();
  dir = await mkdtemp(join(tmpdir(), 'oauth-client-'));
});
after(async () => {
  await idp.close();
  await rm(dir, { recursive: true, force: true });
});
beforeEach(() => {
  restoreEnv = clearExchangeEnv();
  idp.requests.length = 0;
  idp.respond = originalRespond;
});
afterEach(() => restoreEnv());

function assertClaims(claims: Claims) {
  assert.equal(claims.sub, 'user-1');
  assert.equal(claims.email, 'ann@example.com');
  assert.equal(claims.email_verified, true);
  assert.equal(claims.aud, CLIENT_ID);
  assert.equal(claims.iss, ISSUER);
  assert.equal(typeof claims.iat, 'number');
  assert.equal(typeof claims.exp, 'number');
}

describe('exchangeCodeForClaims: success', () => {
  it('verifies with a PEM string and posts a client_secret_post form', async () => {
    assertClaims(await exchangeCodeForClaims(baseOptions(idp)));
    assert.equal(idp.requests.length, 1);
    const [request] = idp.requests;
    assert.equal(request?.contentType, 'application/x-www-form-urlencoded');
    assert.equal(request?.accept, 'application/json');
    assert.deepEqual(request?.form, {
      grant_type: 'authorization_code',
      code: 'good-code',
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
    });
  });

  it('verifies with a Buffer holding PEM', async () => {
    assertClaims(await exchangeCodeForClaims({ ...baseOptions(idp), publicKey: Buffer.from(idp.key.publicPem) }));
  });

  it('verifies with a path to a PEM file', async () => {
    const path = join(dir, 'idp.pem');
    await writeFile(path, idp.key.publicPem);
    assertClaims(await exchangeCodeForClaims({ ...baseOptions(idp), publicKey: path }));
  });

  it('verifies with a jwksUrl', async () => {
    const { publicKey: _unused, ...options } = baseOptions(idp);
    assertClaims(await exchangeCodeForClaims({ ...options, jwksUrl: idp.jwksUrl }));
  });

  it('forwards codeVerifier as code_verifier', async () => {
    const verifier = 'v'.repeat(43);
    await exchangeCodeForClaims({ ...baseOptions(idp), codeVerifier: verifier });
    assert.equal(idp.requests[0]?.form.code_verifier, verifier);
  });

  it('accepts the code_verifier alias', async () => {
    const verifier = 'w'.repeat(64);
    await exchangeCodeForClaims({ ...baseOptions(idp), code_verifier: verifier });
    assert.equal(idp.requests[0]?.form.code_verifier, verifier);
  });

  it('accepts a token expired within leeway', async () => {
    const now = Math.floor(Date.now() / 1000);
    idp.respond = async () => ({
      status: 200,
      body: { token_type: 'Bearer', id_token: await signIdToken(idp.key, standardClaims({ iat: now - 100, exp: now - 5 })) },
    });
    assertClaims(await exchangeCodeForClaims({ ...baseOptions(idp), leeway: 30 }));
    await assert.rejects(exchangeCodeForClaims(baseOptions(idp)), { name: 'JWTVerificationError', code: 'ERR_JWT_EXPIRED' });
  });
});

describe('exchangeCodeForClaims: token endpoint errors', () => {
  it('maps invalid_grant to OAuthExchangeError with error, description and status', async () => {
    const err = await exchangeCodeForClaims({ ...baseOptions(idp), code: 'used-code' }).catch((e: unknown) => e);
    assert.ok(err instanceof OAuthExchangeError);
    assert.ok(err instanceof ServiceOAuthError);
    assert.equal(err.code, 'ERR_OAUTH_EXCHANGE_FAILED');
    assert.equal(err.error, 'invalid_grant');
    assert.equal(err.description, 'code is invalid or expired');
    assert.equal(err.status, 400);
    assert.ok(!err.message.includes(CLIENT_SECRET));
    assert.ok(!err.message.includes('used-code'));
  });

  it('maps a non-JSON error answer', async () => {
    idp.respond = async () => ({ status: 502, body: '<html>bad gateway</html>' });
    await assert.rejects(exchangeCodeForClaims(baseOptions(idp)), {
      name: 'OAuthExchangeError',
      code: 'ERR_OAUTH_EXCHANGE_FAILED',
      error: undefined,
      status: 502,
    });
  });

  it('refuses a 200 answer without id_token', async () => {
    idp.respond = async () => ({ status: 200, body: { access_token: 'at', token_type: 'Bearer', expires_in: 300 } });
    await assert.rejects(exchangeCodeForClaims(baseOptions(idp)), {
      name: 'OAuthExchangeError',
      code: 'ERR_OAUTH_EXCHANGE_RESPONSE_INVALID',
    });
  });

  it('refuses a 200 answer that is not JSON', async () => {
    idp.respond = async () => ({ status: 200, body: 'not json' });
    await assert.rejects(exchangeCodeForClaims(baseOptions(idp)), { code: 'ERR_OAUTH_EXCHANGE_RESPONSE_INVALID' });
  });

  it('times out after timeoutMs', async () => {
    idp.respond = async () => ({ status: 200, body: {}, delayMs: 500 });
    await assert.rejects(exchangeCodeForClaims({ ...baseOptions(idp), timeoutMs: 50 }), {
      name: 'OAuthExchangeError',
      code: 'ERR_OAUTH_EXCHANGE_TIMEOUT',
    });
  });

  it('reports an unreachable endpoint as a network error', async () => {
    const closed = await startFakeIdp(idp.key);
    await closed.close();
    await assert.rejects(exchangeCodeForClaims({ ...baseOptions(idp), oauthTokenUrl: closed.tokenUrl }), {
      name: 'OAuthExchangeError',
      code: 'ERR_OAUTH_EXCHANGE_NETWORK',
    });
  });
});

describe('exchangeCodeForClaims: ID token checks', () => {
  async function respondWith(claims: Record<string, unknown>) {
    idp.respond = async () => ({ status: 200, body: { token_type: 'Bearer', id_token: await signIdToken(idp.key, claims) } });
  }

  it('refuses an ID token for another client (audience defaults to clientId)', async () => {
    await respondWith(standardClaims({ aud: 'other-client' }));
    await assert.rejects(exchangeCodeForClaims(baseOptions(idp)), {
      name: 'JWTVerificationError',
      code: 'ERR_JWT_CLAIM_INVALID',
      claim: 'aud',
    });
  });

  it('checks an explicit audience instead of clientId', async () => {
    await respondWith(standardClaims({ aud: 'api://backend' }));
    assert.equal((await exchangeCodeForClaims({ ...baseOptions(idp), audience: 'api://backend' })).aud, 'api://backend');
  });

  it('refuses a wrong issuer', async () => {
    await respondWith(standardClaims({ iss: 'https://evil.test' }));
    await assert.rejects(exchangeCodeForClaims(baseOptions(idp)), { code: 'ERR_JWT_CLAIM_INVALID', claim: 'iss' });
  });

  it('refuses an ID token without sub', async () => {
    const { sub: _sub, ...claims } = standardClaims();
    await respondWith(claims);
    await assert.rejects(exchangeCodeForClaims(baseOptions(idp)), { code: 'ERR_JWT_CLAIM_INVALID', claim: 'sub', reason: 'missing' });
  });

  it('refuses a token signed by another key', async () => {
    const other = await startFakeIdp();
    try {
      await assert.rejects(exchangeCodeForClaims({ ...baseOptions(idp), publicKey: other.key.publicPem }), {
        name: 'JWTVerificationError',
        code: 'ERR_JWT_SIGNATURE_INVALID',
      });
    } finally {
      await other.close();
    }
  });
});

describe('exchangeCodeForClaims: configuration', () => {
  for (const name of ['code', 'oauthTokenUrl', 'clientId', 'apiKey'] as const) {
    it(`refuses a missing ${name} before any request`, async () => {
      const options = { ...baseOptions(idp), [name]: undefined } as unknown as Parameters<typeof exchangeCodeForClaims>[0];
      await assert.rejects(exchangeCodeForClaims(options), { name: 'OAuthExchangeError', code: 'ERR_OAUTH_EXCHANGE_CONFIG' });
      assert.equal(idp.requests.length, 0);
    });
  }

  it('refuses neither publicKey nor jwksUrl', async () => {
    const { publicKey: _unused, ...options } = baseOptions(idp);
    await assert.rejects(exchangeCodeForClaims(options), { code: 'ERR_OAUTH_EXCHANGE_CONFIG', message: /publicKey or jwksUrl/ });
    assert.equal(idp.requests.length, 0);
  });

  it('refuses both publicKey and jwksUrl', async () => {
    await assert.rejects(exchangeCodeForClaims({ ...baseOptions(idp), jwksUrl: idp.jwksUrl }), { code: 'ERR_OAUTH_EXCHANGE_CONFIG' });
  });

  it('refuses plain http to a non-loopback host', async () => {
    await assert.rejects(exchangeCodeForClaims({ ...baseOptions(idp), oauthTokenUrl: 'http://idp.example.com/oauth/token' }), {
      code: 'ERR_OAUTH_EXCHANGE_CONFIG',
      message: /https/,
    });
  });

  it('refuses a malformed publicKey with InvalidPublicKeyError, without spending the code', async () => {
    const pem = '-----BEGIN PUBLIC KEY-----\nnot base64 at all\n-----END PUBLIC KEY-----\n';
    await assert.rejects(exchangeCodeForClaims({ ...baseOptions(idp), publicKey: pem }), (err: unknown) => {
      assert.ok(err instanceof InvalidPublicKeyError);
      assert.equal(err.code, 'ERR_PUBLIC_KEY_INVALID');
      return true;
    });
    assert.equal(idp.requests.length, 0);
  });

  it('refuses differing codeVerifier and code_verifier', async () => {
    await assert.rejects(exchangeCodeForClaims({ ...baseOptions(idp), codeVerifier: 'a'.repeat(43), code_verifier: 'b'.repeat(43) }), {
      code: 'ERR_OAUTH_EXCHANGE_CONFIG',
    });
  });

  it('exposes JWTVerificationError as a ServiceOAuthError', () => {
    assert.ok(new JWTVerificationError('x') instanceof ServiceOAuthError);
    assert.equal(JWTVerificationError.code, 'ERR_JWT_INVALID');
    assert.equal(OAuthExchangeError.code, 'ERR_OAUTH_EXCHANGE_FAILED');
    assert.equal(InvalidPublicKeyError.code, 'ERR_PUBLIC_KEY_INVALID');
  });
});
