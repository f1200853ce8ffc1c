/**
 * Upstream identity providers for the tests of factors/upstream/: a real OpenID Connect
 * provider (node-oidc-provider, OpenID Certified) on loopback, whose login step signs in
 * whichever account the test names, and a browser stand-in that follows redirects with a
 * cookie jar per origin (the HTTP-level tests; examples/demo/test drives Chromium).
 */
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
// oidc-provider ships no type declarations; tests are run by tsx, which does not type-check.
import Provider from 'oidc-provider';

export interface UpstreamAccount {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
}

export interface TestUpstream {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Who signs in at the provider's login step. */
  signInAs(account: UpstreamAccount): void;
  /** Requests its token endpoint has answered (a code is sent there only to be exchanged). */
  tokenRequests(): number;
  close(): Promise<void>;
}

export interface UpstreamOptions {
  clientId?: string;
  pkceRequired?: boolean;
  /**
   * oidc-provider's default claims behaviour (`conformIdTokenClaims`: the scope's claims only at
   * the UserInfo endpoint when an access token is issued, OIDC Core 5.4), as Zitadel's default;
   * otherwise they are in the ID token too.
   */
  claimsInUserinfoOnly?: boolean;
  /** The subject its UserInfo endpoint names, when not the signed-in account's (a substituted answer). */
  userinfoSubject?: string;
  /** Signs its ID tokens with a key its JWKS does not hold (the published one has the same `kid`). */
  signsWithUnpublishedKey?: boolean;
}

/** A real OpenID Connect provider on 127.0.0.1 with one confidential client whose redirect URI is the service's callback. */
export async function startUpstream(callback: string, options: UpstreamOptions = {}): Promise<TestUpstream> {
  const clientId = options.clientId ?? `rp-${randomBytes(4).toString('hex')}`;
  const clientSecret = randomBytes(24).toString('base64url');
  let current: UpstreamAccount = { sub: 'nobody' };
  const accounts = new Map<string, UpstreamAccount>();
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const rsaJwk = () => ({
    ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }),
    kid: 'k1',
    alg: 'RS256',
    use: 'sig',
  });
  const jwk = rsaJwk();
  // What /jwks serves instead when the provider signs with a key it does not publish.
  const published = options.signsWithUnpublishedKey
    ? (({ kty, n, e, kid, alg, use }) => ({ kty, n, e, kid, alg, use }))(rsaJwk() as Record<string, string>)
    : undefined;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [callback],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    jwks: { keys: [jwk] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    findAccount: (_ctx: unknown, id: string, token?: { kind?: string }) => {
      const account = accounts.get(id);
      // oidc-provider's UserInfo names the account its access token loads: the substitute's, when asked.
      const accountId = token?.kind === 'AccessToken' && options.userinfoSubject !== undefined ? options.userinfoSubject : id;
      return account && { accountId, claims: () => ({ ...account, sub: accountId }) };
    },
    conformIdTokenClaims: options.claimsInUserinfoOnly ?? false,
    pkce: { required: () => options.pkceRequired ?? true },
    features: { devInteractions: { enabled: false } },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    ttl: { AuthorizationCode: 60, Grant: 3600, AccessToken: 600, IdToken: 600, Interaction: 600, Session: 3600 },
  });
  const handle = provider.callback();
  // The login and consent steps: the account the test named signs in and grants what was asked.
  let tokenRequests = 0;
  server.on('request', async (req, res) => {
    if (req.url?.startsWith('/token')) tokenRequests++;
    if (published && req.url?.startsWith('/jwks')) {
      res.writeHead(200, { 'content-type': 'application/jwk-set+json' });
      return res.end(JSON.stringify({ keys: [published] }));
    }
    if (!req.url?.startsWith('/interaction/')) return handle(req, res);
    try {
      const details = await provider.interactionDetails(req, res);
      if (details.prompt.name === 'login') {
        accounts.set(current.sub, current);
        return await provider.interactionFinished(req, res, { login: { accountId: current.sub } }, { mergeWithLastSubmission: false });
      }
      const grant = details.grantId
        ? await provider.Grant.find(details.grantId)
        : new provider.Grant({ accountId: details.session.accountId, clientId });
      grant.addOIDCScope('openid email profile');
      const grantId = await grant.save();
      return await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
    } catch (error) {
      res.statusCode = 500;
      res.end(String(error));
    }
  });
  return {
    issuer,
    clientId,
    clientSecret,
    signInAs(account) {
      current = account;
    },
    tokenRequests: () => tokenRequests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A PKCE pair, as a page makes one. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/**
 * A browser without a page: follows redirects (GET, and a 303 after a POST), keeping cookies per
 * origin, until a URL `stop` accepts (the application's page: not fetched) or an answer that is no redirect.
 */
export class RedirectBrowser {
  readonly jar = new Map<string, Map<string, string>>();

  cookieHeader(url: URL): string {
    return [...(this.jar.get(url.origin) ?? new Map()).entries()].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  store(url: URL, setCookies: string[]): void {
    const jar = this.jar.get(url.origin) ?? new Map<string, string>();
    for (const line of setCookies) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const gone = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)) || /expires=thu, 01 jan 1970/i.test(line);
      if (gone || value === '') jar.delete(name);
      else jar.set(name, value);
    }
    this.jar.set(url.origin, jar);
  }

  /** Follows from `start`; the last URL reached, and the answer there when it was fetched. */
  async go(
    start: string,
    stop: (url: URL) => boolean,
    first?: { method: 'POST'; body: URLSearchParams },
  ): Promise<{ url: URL; status?: number; body?: string }> {
    let url = new URL(start);
    let init: RequestInit | undefined = first && { method: 'POST', body: first.body };
    for (let hops = 0; hops < 20; hops++) {
      if (stop(url)) return { url };
      const headers = new Headers(init?.headers);
      const cookie = this.cookieHeader(url);
      if (cookie) headers.set('cookie', cookie);
      const response = await fetch(url, { ...init, headers, redirect: 'manual' });
      this.store(url, response.headers.getSetCookie());
      const location = response.headers.get('location');
      if (response.status < 300 || response.status >= 400 || !location)
        return { url, status: response.status, body: await response.text() };
      await response.body?.cancel();
      url = new URL(location, url);
      init = undefined;
    }
    throw new Error('too many redirects');
  }
}

/** The result a page reads from its return URL's fragment. */
export const fragmentOf = (url: URL) => Object.fromEntries(new URLSearchParams(url.hash.slice(1)));
