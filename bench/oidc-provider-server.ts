/**
 * The comparison for the token endpoint: node-oidc-provider (panva, OpenID Certified) issuing
 * an RS256 ID token and an access token for an authorization_code exchange with
 * client_secret_post, in its own process like the service. Its codes are minted in-process
 * before the run (Grant + AuthorizationCode models, as its authorization endpoint saves them).
 *
 * Storage is a plain in-memory Map: the package's own memory adapter is an LRU of 1,000 entries,
 * too small for the codes of one run. That favours oidc-provider (no database at all, where the
 * service writes SQLite), which docs/performance.md notes beside the figure.
 *
 * The client_credentials comparison: a machine client (grant_types ['client_credentials'],
 * client_secret_post) and the clientCredentials and resourceIndicators features, so that the
 * token is, like the service's, an RS256 JWT access token (RFC 9068) for the API named by
 * `resource`, with its scope.
 */
import { generateKeyPairSync } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { serveRequests } from './child.js';
import { BENCH_API, type BenchMachine } from './flows.js';

const CLIENT_ID = 'bench-client';
const CLIENT_SECRET = 'bench-client-secret-0123456789abcdef';
const REDIRECT_URI = 'http://bench.test/callback';
const ACCOUNTS = 200;
const MACHINE: BenchMachine = {
  clientId: 'bench-machine',
  secretKey: 'bench-machine-secret-0123456789abcdef',
  resource: BENCH_API,
  scope: 'read:notes',
};

// oidc-provider ships no type declarations; the bench is run by tsx, which does not type-check.
type AdapterPayload = Record<string, unknown>;
const store = new Map<string, AdapterPayload>();
class MapAdapter {
  constructor(readonly model: string) {}
  key = (id: string) => `${this.model}:${id}`;
  async upsert(id: string, payload: AdapterPayload) {
    store.set(this.key(id), payload);
  }
  async find(id: string) {
    return store.get(this.key(id));
  }
  async findByUid() {
    return undefined;
  }
  async findByUserCode() {
    return undefined;
  }
  async consume(id: string) {
    const payload = store.get(this.key(id));
    if (payload) payload.consumed = Math.floor(Date.now() / 1000);
  }
  async destroy(id: string) {
    store.delete(this.key(id));
  }
  async revokeByGrantId() {}
}

const jwk = {
  ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }),
  kid: 'bench',
  alg: 'RS256',
  use: 'sig',
};
const provider = new Provider('http://127.0.0.1', {
  adapter: MapAdapter,
  clients: [
    {
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      redirect_uris: [REDIRECT_URI],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
      id_token_signed_response_alg: 'RS256',
    },
    {
      client_id: MACHINE.clientId,
      client_secret: MACHINE.secretKey,
      redirect_uris: [],
      grant_types: ['client_credentials'],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_post',
    },
  ],
  jwks: { keys: [jwk as never] },
  claims: { openid: ['sub'], email: ['email', 'email_verified'] },
  findAccount: (_ctx: unknown, id: string) => ({
    accountId: id,
    claims: () => ({ sub: id, email: `${id}@example.com`, email_verified: true }),
  }),
  // The ID token carries email like the service's (by default oidc-provider moves it to userinfo).
  conformIdTokenClaims: false,
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => BENCH_API,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx: unknown, resource: string) => {
        if (resource !== BENCH_API) throw new Error(`unknown resource ${resource}`);
        return {
          scope: MACHINE.scope,
          audience: BENCH_API,
          accessTokenTTL: 600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
  ttl: { AuthorizationCode: 60, Grant: 3600, AccessToken: 3600, IdToken: 3600, ClientCredentials: 600 },
  cookies: { keys: ['bench-cookie-key-0123456789abcdef'] },
});
const server = provider.listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const { port } = server.address() as AddressInfo;

const client = await provider.Client.find(CLIENT_ID);
if (!client) throw new Error('bench client missing');
const grants: string[] = [];
for (let i = 0; i < ACCOUNTS; i++) {
  const grant = new provider.Grant({ accountId: `usr_${i}`, clientId: CLIENT_ID });
  grant.addOIDCScope('openid email');
  grants.push(await grant.save());
}

serveRequests(
  {
    async mint(message: { count: number }) {
      const codes: string[] = [];
      for (let i = 0; i < message.count; i++) {
        const account = i % ACCOUNTS;
        const code = new provider.AuthorizationCode({
          accountId: `usr_${account}`,
          client,
          grantId: grants[account] as string,
          scope: 'openid email',
          redirectUri: REDIRECT_URI,
          authTime: Math.floor(Date.now() / 1000),
        });
        codes.push(await code.save());
      }
      return codes;
    },
  },
  async () => {
    server.close();
  },
);
process.send?.({
  type: 'ready',
  result: { url: `http://127.0.0.1:${port}`, clientId: CLIENT_ID, secretKey: CLIENT_SECRET, machine: JSON.stringify(MACHINE) },
});
