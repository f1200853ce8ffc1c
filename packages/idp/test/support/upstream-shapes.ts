/**
 * Small local servers (node:http) that answer as upstream providers document their endpoints:
 * OpenID Connect discovery, JWKS and a token endpoint whose ID token the test shapes (Google's,
 * Microsoft's multi-tenant issuer, Apple's), and GitHub's OAuth token endpoint and REST user
 * API. The browser stops at the provider's authorization URL (the test reads its state and
 * nonce there and makes the provider's answer itself); the service reaches the token endpoint
 * through `upstreamFetch`, which routes the providers' real hosts here.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';

export interface TokenRequest {
  params: URLSearchParams;
  headers: IncomingMessage['headers'];
}

export interface ShapedProvider {
  /** The loopback base the fixed hosts are routed to. */
  base: string;
  /** The issuer the documents name (a provider's real one, or `base`). */
  issuer: string;
  /** The claims of the next ID token (merged over iss, aud, iat, exp). */
  next: Record<string, unknown>;
  /** GitHub: the next /user and /user/emails answers. */
  github: { user: Record<string, unknown>; emails: Record<string, unknown>[] };
  /** Every token request, in order. */
  tokenRequests: TokenRequest[];
  /** The discovery document (a test may change it before the service first reads it). */
  metadata: Record<string, unknown>;
  /** Routes https://{host}/… of the providers' real hosts to this server. */
  fetch: typeof fetch;
  close(): Promise<void>;
}

const REAL_HOSTS = ['accounts.google.com', 'login.microsoftonline.com', 'appleid.apple.com', 'github.com', 'api.github.com'];

/** `issuer`: the issuer its documents name; omitted, the server's own loopback base. `clientId`: the ID token's default `aud`. */
export async function startShapedProvider(options: {
  issuer?: string;
  clientId: string;
  metadataIssuer?: string;
}): Promise<ShapedProvider> {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'shape-1', alg: 'RS256', use: 'sig' };
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const issuer = options.issuer ?? base;
  const state: ShapedProvider = {
    base,
    issuer,
    next: {},
    github: { user: {}, emails: [] },
    tokenRequests: [],
    metadata: {
      issuer: options.metadataIssuer ?? issuer,
      authorization_endpoint: `${issuer.replace(/\/v2\.0$/, '')}/oauth2/v2.0/authorize`,
      token_endpoint: `${issuer.replace(/\/v2\.0$/, '')}/oauth2/v2.0/token`,
      jwks_uri: `${issuer.replace(/\/v2\.0$/, '')}/discovery/v2.0/keys`,
      response_types_supported: ['code'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['RS256'],
    },
    fetch: (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (REAL_HOSTS.includes(url.hostname)) return fetch(`${base}/${url.hostname}${url.pathname}${url.search}`, init);
      return fetch(input, init);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const pathOf = (url: string) => {
    const path = new URL(url, base).pathname;
    // /{real host}/path (routed by fetch), or the path itself (an issuer on the loopback base).
    const host = REAL_HOSTS.find((h) => path.startsWith(`/${h}/`));
    return host ? path.slice(host.length + 1) : path;
  };
  const metadataPath = `${new URL(issuer).pathname.replace(/\/$/, '')}/.well-known/openid-configuration`;
  server.on('request', async (req, res) => {
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const path = pathOf(req.url ?? '/');
    if (req.method === 'GET' && path === metadataPath) return json(200, state.metadata);
    if (req.method === 'GET' && path.endsWith('/keys')) return json(200, { keys: [jwk] });
    if (req.method === 'POST' && (path.endsWith('/token') || path === '/login/oauth/access_token')) {
      let body = '';
      for await (const chunk of req) body += chunk;
      const params = new URLSearchParams(body);
      state.tokenRequests.push({ params, headers: req.headers });
      if (path === '/login/oauth/access_token')
        return json(200, { access_token: 'gho_shape', token_type: 'bearer', scope: 'read:user,user:email' });
      const now = Math.floor(Date.now() / 1000);
      const idToken = await new SignJWT({ iss: issuer, aud: options.clientId, iat: now, exp: now + 600, ...state.next })
        .setProtectedHeader({ alg: 'RS256', kid: 'shape-1' })
        .sign(privateKey);
      return json(200, { access_token: 'at_shape', token_type: 'Bearer', expires_in: 600, id_token: idToken });
    }
    if (req.method === 'GET' && path === '/user') return json(200, state.github.user);
    if (req.method === 'GET' && path === '/user/emails') return json(200, state.github.emails);
    json(404, { error: 'not_found' });
  });
  return state;
}
