/**
 * The resource server's side as an API uses it: the README's example run as written, the
 * adapters in real Express and Fastify apps and on a Fetch `Request`, and the same tokens
 * verified by a third party with plain jose (`jwtVerify` with `createRemoteJWKSet`). Tokens are
 * signed with jose; the key set is served on 127.0.0.1 (fake-idp.ts), which is the issuer here.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import express from 'express';
import fastify from 'fastify';
import {
  calculateJwkThumbprint,
  createRemoteJWKSet,
  exportJWK,
  generateKeyPair,
  type CryptoKey as JoseKey,
  type JWK,
  jwtVerify,
  SignJWT,
} from 'jose';
import {
  AccessTokenError,
  accessTokenMiddleware,
  accessTokenPreHandler,
  accessTokenRefusal,
  type VerifiedAccessToken,
  verifyAccessTokenRequest,
} from '../src/index.js';
import { CLIENT_ID, type FakeIdp, newSigningKey, type SigningKey, signIdToken, standardClaims, startFakeIdp } from './fake-idp.js';

const API = 'https://api.example';
const HERE = fileURLToPath(new URL('.', import.meta.url));

let idp: FakeIdp;
let key: SigningKey;
let holder: { privateKey: JoseKey; jwk: JWK; jkt: string };
before(async () => {
  key = await newSigningKey('rsa-rs');
  idp = await startFakeIdp(key);
  const pair = await generateKeyPair('ES256');
  const jwk = await exportJWK(pair.publicKey);
  holder = { privateKey: pair.privateKey, jwk, jkt: await calculateJwkThumbprint(jwk) };
});
after(() => idp.close());

const now = () => Math.floor(Date.now() / 1000);

function accessToken(overrides: Record<string, unknown> = {}): Promise<string> {
  return new SignJWT({
    iss: idp.origin,
    sub: 'usr_ann',
    aud: API,
    client_id: CLIENT_ID,
    scope: 'read:notes',
    iat: now(),
    exp: now() + 300,
    jti: randomUUID(),
    ...overrides,
  })
    .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'at+jwt' })
    .sign(key.privateKey);
}

function proof(token: string, htu: string, htm = 'GET', jti = randomUUID()): Promise<string> {
  return new SignJWT({ jti, htm, htu, iat: now(), ath: createHash('sha256').update(token).digest('base64url') })
    .setProtectedHeader({ typ: 'dpop+jwt', alg: 'ES256', jwk: holder.jwk })
    .sign(holder.privateKey);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
    server.once('error', reject);
  });
}

/** The first ```ts block after `heading` in the package README. */
function readmeSnippet(heading: string): string {
  const text = readFileSync(join(HERE, '../README.md'), 'utf8');
  const section = text.indexOf(`\n${heading}\n`);
  assert.ok(section >= 0, `README has "${heading}"`);
  const open = text.indexOf('```ts\n', section);
  return text.slice(open + 6, text.indexOf('\n```', open) + 1);
}

describe('the README`s "DPoP-bound tokens" example, run as written', () => {
  let dir: string;
  let server: ChildProcess | undefined;
  let origin: string;
  let output = '';
  before(async () => {
    const snippet = readmeSnippet('### DPoP-bound tokens');
    assert.match(snippet, /from 'service-oauth-client'/);
    dir = mkdtempSync(join(HERE, '.readme-'));
    // As written, but for the import specifier: the package's source, so no build is needed.
    writeFileSync(join(dir, 'server.ts'), snippet.replace("'service-oauth-client'", JSON.stringify(join(HERE, '../src/index.ts'))));
    const port = await freePort();
    origin = `http://127.0.0.1:${port}`;
    server = spawn(process.execPath, ['--import', 'tsx', 'server.ts'], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', PORT: String(port), OAUTH_ISSUER: idp.origin, API_IDENTIFIER: API, API_ORIGIN: API },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    server.stdout?.on('data', (d) => {
      output += d;
    });
    server.stderr?.on('data', (d) => {
      output += d;
    });
    const deadline = Date.now() + 30_000;
    while (
      !(await fetch(`${origin}/notes`).then(
        () => true,
        () => false,
      ))
    ) {
      assert.equal(server.exitCode, null, `the snippet exited:\n${output}`);
      assert.ok(Date.now() < deadline, `the snippet did not listen:\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  });
  after(() => {
    if (server?.pid) process.kill(server.pid, 'SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  const call = (headers: Record<string, string>) => fetch(`${origin}/notes?page=1`, { headers });

  it('serves a bearer token with read:notes, and refuses one without it (403 insufficient_scope)', async () => {
    const ok = await call({ authorization: `Bearer ${await accessToken()}` });
    assert.equal(ok.status, 200, output);
    assert.deepEqual(await ok.json(), { user: 'usr_ann', client: CLIENT_ID, scopes: ['read:notes'] });
    const scoped = await call({ authorization: `Bearer ${await accessToken({ scope: 'write:notes' })}` });
    assert.equal(scoped.status, 403);
    assert.match(scoped.headers.get('www-authenticate') ?? '', /^Bearer error="insufficient_scope".*scope="read:notes"$/);
    assert.equal(((await scoped.json()) as { error: string }).error, 'insufficient_scope');
  });

  it('serves a DPoP-bound token with its proof, and refuses it as Bearer, with a replayed proof, or for an ID token', async () => {
    const bound = await accessToken({ cnf: { jkt: holder.jkt } });
    const once = await proof(bound, `${API}/notes`);
    const ok = await call({ authorization: `DPoP ${bound}`, dpop: once });
    assert.equal(ok.status, 200, output);
    assert.equal(((await ok.json()) as { user: string }).user, 'usr_ann');
    const replayed = await call({ authorization: `DPoP ${bound}`, dpop: once });
    assert.equal(replayed.status, 401);
    assert.match(replayed.headers.get('www-authenticate') ?? '', /^DPoP error="invalid_dpop_proof"/);
    const asBearer = await call({ authorization: `Bearer ${bound}` });
    assert.equal(asBearer.status, 401);
    assert.match(asBearer.headers.get('www-authenticate') ?? '', /^DPoP error="invalid_token"/);
    const idToken = await signIdToken(key, standardClaims({ iss: idp.origin, aud: API }));
    const confused = await call({ authorization: `Bearer ${idToken}` });
    assert.equal(confused.status, 401);
    assert.match(confused.headers.get('www-authenticate') ?? '', /^Bearer error="invalid_token"/);
  });
});

const settings = () => ({ issuer: idp.origin, audience: API, requiredScopes: ['read:notes'] });

describe('the adapters', () => {
  it('Express middleware: req.auth on success; 401 without a token, 403 without the scope; DPoP with the origin', async () => {
    const app = express();
    app.get('/notes', accessTokenMiddleware({ ...settings(), origin: API }), (req, res) => {
      res.json((req as unknown as { auth: VerifiedAccessToken }).auth.claims.sub);
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      const missing = await fetch(`${base}/notes`);
      assert.equal(missing.status, 401);
      assert.match(missing.headers.get('www-authenticate') ?? '', /^Bearer, DPoP algs="/);
      const ok = await fetch(`${base}/notes`, { headers: { authorization: `Bearer ${await accessToken()}` } });
      assert.deepEqual([ok.status, await ok.json()], [200, 'usr_ann']);
      const scoped = await fetch(`${base}/notes`, { headers: { authorization: `Bearer ${await accessToken({ scope: '' })}` } });
      assert.equal(scoped.status, 403);
      const bound = await accessToken({ cnf: { jkt: holder.jkt } });
      const dpop = await fetch(`${base}/notes`, { headers: { authorization: `DPoP ${bound}`, dpop: await proof(bound, `${API}/notes`) } });
      assert.equal(dpop.status, 200);
      const elsewhere = await fetch(`${base}/notes`, {
        headers: { authorization: `DPoP ${bound}`, dpop: await proof(bound, `${API}/admin`) },
      });
      assert.equal(elsewhere.status, 401);
      assert.equal(((await elsewhere.json()) as { error: string }).error, 'invalid_dpop_proof');
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('Fastify preHandler: request.auth on success; 401 with the challenge; use_dpop_nonce with the DPoP-Nonce header', async () => {
    const app = fastify();
    app.get(
      '/notes',
      { preHandler: accessTokenPreHandler({ ...settings(), origin: API, nonce: () => ['n-2', 'n-1'] }) },
      async (request) => {
        return (request as unknown as { auth: VerifiedAccessToken }).auth.scopes;
      },
    );
    try {
      const ok = await app.inject({ url: '/notes', headers: { authorization: `Bearer ${await accessToken()}` } });
      assert.deepEqual([ok.statusCode, ok.json()], [200, ['read:notes']]);
      const expired = await app.inject({ url: '/notes', headers: { authorization: `Bearer ${await accessToken({ exp: now() - 60 })}` } });
      assert.equal(expired.statusCode, 401);
      assert.equal(expired.headers['www-authenticate'], 'Bearer error="invalid_token", error_description="The access token has expired."');
      const bound = await accessToken({ cnf: { jkt: holder.jkt } });
      const nonceless = await app.inject({
        url: '/notes',
        headers: { authorization: `DPoP ${bound}`, dpop: await proof(bound, `${API}/notes`) },
      });
      assert.equal(nonceless.statusCode, 401);
      assert.match(String(nonceless.headers['www-authenticate']), /^DPoP error="use_dpop_nonce"/);
      assert.equal(nonceless.headers['dpop-nonce'], 'n-2');
    } finally {
      await app.close();
    }
  });

  it('verifyAccessTokenRequest on a Fetch Request (absolute URL, Headers), and accessTokenRefusal for its errors', async () => {
    const bound = await accessToken({ cnf: { jkt: holder.jkt } });
    const request = new Request(`${API}/notes?x=1`, {
      method: 'POST',
      headers: { authorization: `DPoP ${bound}`, dpop: await proof(bound, `${API}/notes`, 'POST') },
    });
    assert.equal((await verifyAccessTokenRequest(request, settings())).jkt, holder.jkt);
    const error = await verifyAccessTokenRequest(
      new Request(`${API}/notes`, { headers: { authorization: 'Basic Zm9vOmJhcg==' } }),
      settings(),
    ).catch((e: unknown) => e);
    assert.ok(error instanceof AccessTokenError && error.code === 'ERR_ACCESS_TOKEN_MISSING');
    assert.deepEqual(accessTokenRefusal(error)?.status, 401);
    assert.equal(accessTokenRefusal(new Error('yours')), undefined);
    await assert.rejects(verifyAccessTokenRequest({ url: '/notes', headers: {} }, settings()), /origin is required/);
  });
});

describe('third-party verification: plain jose, as the README shows', () => {
  it('jwtVerify with createRemoteJWKSet takes the same tokens, and refuses an ID token and another API`s', async () => {
    const jwks = createRemoteJWKSet(new URL(idp.jwksUrl));
    const verify = (token: string, audience = API) =>
      jwtVerify(token, jwks, {
        typ: 'at+jwt',
        issuer: idp.origin,
        audience,
        algorithms: ['RS256', 'ES256', 'EdDSA'],
        requiredClaims: ['sub', 'client_id', 'jti', 'iat', 'exp'],
        clockTolerance: 5,
      });
    const { payload } = await verify(await accessToken({ cnf: { jkt: holder.jkt } }));
    assert.equal(payload.client_id, CLIENT_ID);
    assert.deepEqual(payload.cnf, { jkt: holder.jkt });
    await assert.rejects(verify(await signIdToken(key, standardClaims({ iss: idp.origin, aud: API }))), {
      code: 'ERR_JWT_CLAIM_VALIDATION_FAILED',
    });
    await assert.rejects(verify(await accessToken({ aud: 'https://billing.example' })), { code: 'ERR_JWT_CLAIM_VALIDATION_FAILED' });
  });
});
