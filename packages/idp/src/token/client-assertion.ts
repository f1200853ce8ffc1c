import { createLocalJWKSet, createRemoteJWKSet, type JWTVerifyGetKey, jwtVerify } from 'jose';
import type { ClientKeys } from '../clients/store.js';
import type { SecretHasher } from '../crypto/secrets.js';
import { CLIENT_ASSERTION_MAX_LIFETIME_SECONDS, CLIENT_JWKS_CACHE_SECONDS, CLIENT_JWKS_FETCH_TIMEOUT_MS } from '../defaults.js';
import { OAuthError } from '../errors.js';
import type { SpentTokenStore } from '../spent-tokens/store.js';

/** RFC 7523 2.2: the client_assertion_type of a JWT client assertion. */
export const JWT_BEARER_ASSERTION = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** The algorithms a client assertion may be signed with: asymmetric only (never none, never HS256 with a public key as the secret). */
export const ASSERTION_ALGS = ['RS256', 'PS256', 'ES256', 'EdDSA'] as const;

/** Checks a machine client's signed assertion (private_key_jwt) and spends its jti. */
export interface ClientAssertions {
  /** The client the assertion authenticates, or invalid_client; `keys` are the client's registered ones. */
  verify(assertion: string, client: { id: string; keys: ClientKeys }): Promise<void>;
}

/**
 * private_key_jwt (RFC 7523 3, OIDC Core 9): a JWT the client signs with one of its registered
 * keys, `iss` and `sub` its client_id, `aud` this service's issuer or token endpoint, a short
 * `exp` and a `jti` used once. jose checks the signature, the algorithm, the times; the `jti`
 * is spent in the one replay table, on whichever node it reaches first.
 */
export function createClientAssertions(deps: {
  issuer: string;
  tokenEndpoint: string;
  spent: Pick<SpentTokenStore, 'spend'>;
  hash: SecretHasher;
  now: () => number;
}): ClientAssertions {
  // A remote key set per jwks_uri, fetched with a timeout and kept a while (jose refetches on an unknown kid, rate-limited).
  const remote = new Map<string, JWTVerifyGetKey>();
  const keySetOf = (keys: ClientKeys): JWTVerifyGetKey | undefined => {
    if (keys.jwks) return createLocalJWKSet(keys.jwks as Parameters<typeof createLocalJWKSet>[0]);
    if (!keys.jwksUri) return undefined;
    let set = remote.get(keys.jwksUri);
    if (!set) {
      if (remote.size >= 1000) remote.delete(remote.keys().next().value as string);
      set = createRemoteJWKSet(new URL(keys.jwksUri), {
        timeoutDuration: CLIENT_JWKS_FETCH_TIMEOUT_MS,
        cacheMaxAge: CLIENT_JWKS_CACHE_SECONDS * 1000,
      });
      remote.set(keys.jwksUri, set);
    }
    return set;
  };
  const refused = (why: string) => new OAuthError('invalid_client', `Client authentication failed: ${why}`);

  return {
    async verify(assertion, client) {
      const keys = keySetOf(client.keys);
      if (!keys) throw refused('this client registered no keys for private_key_jwt.');
      const at = deps.now();
      let payload: Awaited<ReturnType<typeof jwtVerify>>['payload'];
      try {
        ({ payload } = await jwtVerify(assertion, keys, {
          algorithms: [...ASSERTION_ALGS],
          issuer: client.id,
          subject: client.id,
          audience: [deps.issuer, deps.tokenEndpoint],
          requiredClaims: ['exp', 'jti'],
          currentDate: new Date(at),
          clockTolerance: 5,
        }));
      } catch {
        throw refused('the client assertion is invalid, expired, or not signed by a registered key.');
      }
      const exp = Number(payload.exp);
      if (exp * 1000 > at + CLIENT_ASSERTION_MAX_LIFETIME_SECONDS * 1000)
        throw refused(`the client assertion's exp is more than ${CLIENT_ASSERTION_MAX_LIFETIME_SECONDS} seconds ahead.`);
      const first = await deps.spent.spend(
        {
          purpose: 'client-assertion',
          idHash: deps.hash('client-assertion', `${client.id} ${payload.jti}`),
          expiresAt: exp * 1000 + 5_000,
        },
        at,
      );
      if (!first) throw refused('this client assertion was already used (jti).');
    },
  };
}
