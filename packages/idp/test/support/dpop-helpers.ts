/**
 * DPoP (RFC 9449) from a client's side, written with jose: a key, proofs with any claim set
 * (including the wrong ones a threat test needs), token requests and userinfo calls that carry
 * them, and a second node on the same database and server secret behind the same issuer.
 */
import { createHash, randomUUID } from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type CryptoKey as JoseKey, type JWK, SignJWT } from 'jose';
import { DB_POOL_SIZE, DB_STATEMENT_TIMEOUT_MS } from '../../src/defaults.js';
import { loadConfig, type RunningService, startService } from '../../src/index.js';
import { openPostgres } from '../../src/storage/database.js';
import { TEST_DATABASE_URL, type TestService } from './helpers.js';
import { testSigningKeys } from './signing-keys.js';

export interface DpopKey {
  privateKey: JoseKey;
  jwk: JWK;
  /** RFC 7638 thumbprint: what `cnf.jkt` names. */
  jkt: string;
  /** The `alg` its proofs name: an Ed25519 key signs as `EdDSA` (RFC 8037) or `Ed25519` (RFC 9864). */
  alg: string;
}

export async function dpopKey(alg: 'ES256' | 'ES512' | 'EdDSA' | 'Ed25519' = 'ES256'): Promise<DpopKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg === 'EdDSA' ? 'Ed25519' : alg);
  const jwk = await exportJWK(publicKey);
  return { privateKey, jwk, jkt: await calculateJwkThumbprint(jwk), alg };
}

export const athOf = (accessToken: string) => createHash('sha256').update(accessToken).digest('base64url');

export interface ProofClaims {
  htm: string;
  htu: string;
  nonce?: string;
  accessToken?: string;
  /** Seconds; now by default. */
  iat?: number;
  jti?: string;
  /** Sign with this key while the header names `key` (a forged proof). */
  signer?: JoseKey;
}

/** A DPoP proof JWT (RFC 9449 4.2). */
export function dpopProof(key: DpopKey, claims: ProofClaims): Promise<string> {
  return new SignJWT({
    jti: claims.jti ?? randomUUID(),
    htm: claims.htm,
    htu: claims.htu,
    iat: claims.iat ?? Math.floor(Date.now() / 1000),
    ...(claims.nonce ? { nonce: claims.nonce } : {}),
    ...(claims.accessToken ? { ath: athOf(claims.accessToken) } : {}),
  })
    .setProtectedHeader({ typ: 'dpop+jwt', alg: key.alg, jwk: key.jwk })
    .sign(claims.signer ?? key.privateKey);
}

/** The nonce the service hands out now (any answer of userinfo carries it, RFC 9449 9). */
export async function currentNonce(url: string): Promise<string> {
  const response = await fetch(`${url}/oauth/userinfo`);
  await response.arrayBuffer();
  const nonce = response.headers.get('dpop-nonce');
  if (!nonce) throw new Error('no DPoP-Nonce');
  return nonce;
}

export interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

async function answerOf(response: Response): Promise<Answer> {
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}

/** POST a form to `url` (a node's token or revocation endpoint) with an optional DPoP header. */
export async function formPost(url: string, params: Record<string, string>, proof?: string): Promise<Answer> {
  return answerOf(
    await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(proof ? { dpop: proof } : {}) },
      body: new URLSearchParams(params),
    }),
  );
}

/** GET userinfo on `url` with `Authorization: <scheme> <token>` and an optional proof. */
export async function userinfo(url: string, scheme: 'Bearer' | 'DPoP', accessToken: string, proof?: string): Promise<Answer> {
  return answerOf(
    await fetch(`${url}/oauth/userinfo`, { headers: { authorization: `${scheme} ${accessToken}`, ...(proof ? { dpop: proof } : {}) } }),
  );
}

/**
 * A second node for `service`: its own process state and connection pool, the same database
 * (the same SQLite connection in memory; a pool of its own on the PostgreSQL schema), the same
 * data folder (server secret) and the same public issuer (`now`: the first node's clock, if it has one). `url` is where it listens.
 */
export async function startSecondNode(
  service: TestService,
  options: { now?: () => number } = {},
): Promise<{ url: string; node: RunningService; close(): Promise<void> }> {
  const config = loadConfig({ port: '0', data: service.ctx.config.dataDir, issuer: service.url }, {});
  const db = service.schema
    ? openPostgres(
        { dataDir: '', databaseUrl: TEST_DATABASE_URL, dbPoolSize: DB_POOL_SIZE, dbStatementTimeoutMs: DB_STATEMENT_TIMEOUT_MS },
        { searchPath: service.schema },
      )
    : service.ctx.db;
  const node = await startService(config, { db, generateSigningKey: testSigningKeys(), ...(options.now ? { now: options.now } : {}) });
  return {
    url: `http://${node.ctx.config.host}:${node.ctx.config.port}`,
    node,
    // Closed before the first node (on SQLite it closes the shared connection, which the first node's close then finds closed).
    close: () => node.close(),
  };
}
