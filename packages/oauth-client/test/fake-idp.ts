/**
 * Unit-test fake of the service: a token endpoint and a JWKS endpoint on 127.0.0.1 (random
 * port) that sign RS256 ID tokens with jose. Not the real service.
 */
import { createHmac, createSign, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, exportSPKI, generateKeyPair, type JWK, SignJWT } from 'jose';

export const CLIENT_ID = 'client-123';
export const CLIENT_SECRET = 'sk_test_secret_value';
export const ISSUER = 'https://idp.test';

export interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  publicPem: string;
  jwk: JWK;
}

export async function newSigningKey(kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  const { KeyObject } = await import('node:crypto');
  return {
    kid,
    privateKey: KeyObject.from(privateKey),
    publicKey: KeyObject.from(publicKey),
    publicPem: await exportSPKI(publicKey),
    jwk,
  };
}

/** An RSA key below the 2048-bit floor; jose refuses to make or use one, so node:crypto does. */
export function weakRsaKey(kid: string) {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
  return {
    kid,
    privateKey,
    publicKey,
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    jwk: { ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' } as JWK,
  };
}

export function standardClaims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  return {
    iss: ISSUER,
    sub: 'user-1',
    aud: CLIENT_ID,
    email: 'ann@example.com',
    email_verified: true,
    iat: now,
    exp: now + 300,
    ...overrides,
  };
}

export async function signIdToken(
  key: { kid: string; privateKey: KeyObject },
  claims: Record<string, unknown> = standardClaims(),
  header: Record<string, unknown> = {},
): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'JWT', ...header }).sign(key.privateKey);
}

const b64url = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/** Builds a compact JWS by hand, for tokens jose would refuse to make. */
export function rawJwt(
  header: Record<string, unknown>,
  claims: Record<string, unknown>,
  sign: { rsa?: KeyObject; hmacSecret?: string | Buffer } = {},
): string {
  const input = `${b64url(header)}.${b64url(claims)}`;
  let signature = '';
  if (sign.rsa) signature = createSign('RSA-SHA256').update(input).sign(sign.rsa).toString('base64url');
  if (sign.hmacSecret !== undefined) signature = createHmac('sha256', sign.hmacSecret).update(input).digest('base64url');
  return `${input}.${signature}`;
}

export interface TokenRequestRecord {
  contentType: string | undefined;
  accept: string | undefined;
  form: Record<string, string>;
}

export type TokenResponder = (form: Record<string, string>) => Promise<{ status: number; body: unknown; delayMs?: number }>;

export interface FakeIdp {
  origin: string;
  tokenUrl: string;
  jwksUrl: string;
  key: SigningKey;
  requests: TokenRequestRecord[];
  jwks: { keys: JWK[] };
  jwksHits: number;
  /** HTTP status of the JWKS endpoint; set 500 to simulate an outage. */
  jwksStatus: number;
  respond: TokenResponder;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startFakeIdp(key?: SigningKey): Promise<FakeIdp> {
  const signingKey = key ?? (await newSigningKey('key-1'));
  const idp: FakeIdp = {
    origin: '',
    tokenUrl: '',
    jwksUrl: '',
    key: signingKey,
    requests: [],
    jwks: { keys: [signingKey.jwk] },
    jwksHits: 0,
    jwksStatus: 200,
    respond: async (form) => {
      if (form.code !== 'good-code') {
        return { status: 400, body: { error: 'invalid_grant', error_description: 'code is invalid or expired' } };
      }
      return {
        status: 200,
        body: {
          access_token: 'at',
          token_type: 'Bearer',
          expires_in: 300,
          id_token: await signIdToken(idp.key),
          scope: 'openid email',
        },
      };
    },
    close: async () => {},
  };
  const server: Server = createServer(async (req, res) => {
    try {
      if (req.method === 'GET' && req.url === '/.well-known/jwks.json') {
        idp.jwksHits++;
        res.writeHead(idp.jwksStatus, { 'content-type': 'application/json' }).end(JSON.stringify(idp.jwks));
        return;
      }
      if (req.method === 'POST' && req.url === '/oauth/token') {
        const raw = await readBody(req);
        const form = Object.fromEntries(new URLSearchParams(raw));
        idp.requests.push({ contentType: req.headers['content-type'], accept: req.headers.accept, form });
        const { status, body, delayMs } = await idp.respond(form);
        if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
        if (res.destroyed) return;
        res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
        res.end(typeof body === 'string' ? body : JSON.stringify(body));
        return;
      }
      res.writeHead(404).end();
    } catch (err) {
      res.writeHead(500).end(String(err));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  idp.origin = `http://127.0.0.1:${port}`;
  idp.tokenUrl = `${idp.origin}/oauth/token`;
  idp.jwksUrl = `${idp.origin}/.well-known/jwks.json`;
  idp.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return idp;
}

/** Options that make a valid exchange against `idp` with a static key. */
export function baseOptions(idp: FakeIdp) {
  return {
    code: 'good-code',
    oauthTokenUrl: idp.tokenUrl,
    clientId: CLIENT_ID,
    apiKey: CLIENT_SECRET,
    publicKey: idp.key.publicPem,
    issuer: ISSUER,
  };
}

/** Env variables read by the library; tests clear them so the machine's env cannot leak in. */
export const EXCHANGE_ENV_NAMES = [
  'SERVICE_API_KEY',
  'OAUTH_TOKEN_ENDPOINT',
  'OAUTH_CLIENT_ID',
  'JWKS_URL',
  'OAUTH_PUBLIC_KEY',
  'OAUTH_ISSUER',
  'OAUTH_AUDIENCE',
];

export function clearExchangeEnv(): () => void {
  const saved = new Map(EXCHANGE_ENV_NAMES.map((n) => [n, process.env[n]]));
  for (const n of EXCHANGE_ENV_NAMES) delete process.env[n];
  return () => {
    for (const [n, v] of saved) {
      if (v === undefined) delete process.env[n];
      else process.env[n] = v;
    }
  };
}
