import { randomToken, type SecretHasher, safeEqual } from '../crypto/secrets.js';
import { ServiceError } from '../errors.js';
import { isSigningAlg, SIGNING_ALGS } from '../keys/keyring.js';
import type { ClientRecord, ClientStore } from './store.js';

export interface NewClientKeys {
  clientId: string;
  publishableKey: string;
  secretKey: string;
}

/**
 * Client applications and their two keys: a publishable key for the browser, bound to the
 * client's origins, and a secret key for its backend. Both are stored only as keyed hashes
 * and shown once, at creation.
 */
export function createClientService({ store, hash, now }: { store: ClientStore; hash: SecretHasher; now: () => number }) {
  return {
    async create(input: { name: string; origins: string[]; idTokenSignedResponseAlg?: string }): Promise<NewClientKeys> {
      const idTokenSignedResponseAlg = input.idTokenSignedResponseAlg ?? 'RS256';
      if (!isSigningAlg(idTokenSignedResponseAlg)) throw new Error(`the ID token algorithm is one of ${SIGNING_ALGS.join(', ')}`);
      const name = input.name.trim();
      if (!name || name.length > 100) throw new Error('client name must be 1 to 100 characters');
      if (input.origins.length === 0) throw new Error('a client needs at least one --origin');
      const origins = input.origins.map(normalizeOrigin);
      const keys: NewClientKeys = {
        clientId: randomToken('cli_', 12),
        publishableKey: randomToken('pk_'),
        secretKey: randomToken('sk_'),
      };
      await store.insert(
        { id: keys.clientId, name, origins, mfaPolicy: 'optional', idTokenSignedResponseAlg, createdAt: now() },
        hash('publishable-key', keys.publishableKey),
        hash('secret-key', keys.secretKey),
      );
      return keys;
    },

    list: () => store.list(),
    findById: (id: string) => store.findById(id),
    recordSignIn: (clientId: string, userId: string) => store.recordSignIn(clientId, userId, now()),
    hasSignedIn: (clientId: string, userId: string) => store.hasSignedIn(clientId, userId),

    /** RS256 (default, the spec's), ES256 or EdDSA: how the client's ID tokens are signed. */
    async setIdTokenAlg(clientId: string, alg: string): Promise<void> {
      if (!isSigningAlg(alg)) throw new Error(`the ID token algorithm is one of ${SIGNING_ALGS.join(', ')}`);
      if (!(await store.setIdTokenAlg(clientId, alg))) throw new Error(`no client ${clientId}`);
    },

    /** `optional` (default): users choose whether to enroll in MFA; `required`: no code without it. */
    async setMfaPolicy(clientId: string, policy: string): Promise<void> {
      if (policy !== 'optional' && policy !== 'required') throw new Error('the MFA policy is optional or required');
      if (!(await store.setMfaPolicy(clientId, policy))) throw new Error(`no client ${clientId}`);
    },

    /** Deletes the client and everything bound to it; its keys stop working at once. */
    async delete(clientId: string): Promise<void> {
      if (!(await store.delete(clientId))) throw new Error(`no client ${clientId}`);
    },

    /** The client behind a browser request, if its key is valid and the origin is one of its own. */
    async authenticateBrowser(publishableKey: string | undefined, origin: string | undefined): Promise<ClientRecord> {
      return checkBrowserOrigin(
        publishableKey ? await store.findByPublishableKeyHash(hash('publishable-key', publishableKey)) : undefined,
        origin,
      );
    },

    /** The keyed hash a publishable key is stored as (for reads that join the client, login/store.ts). */
    publishableKeyHash: (publishableKey: string) => hash('publishable-key', publishableKey),

    checkBrowserOrigin,

    /** The keyed hash a secret key is stored as (for checks folded into another statement). */
    secretKeyHash: (secretKey: string) => hash('secret-key', secretKey),

    /** The client behind a backend request, if its secret key matches (constant time). */
    async authenticateBackend(clientId: string, secretKey: string): Promise<ClientRecord | undefined> {
      const found = await store.findWithSecretHash(clientId);
      // Compare against a dummy when the client is unknown, so timing does not reveal client ids.
      const expected = found?.secretKeyHash ?? hash('secret-key', 'unknown-client');
      const matches = safeEqual(hash('secret-key', secretKey), expected);
      return found && matches ? found.client : undefined;
    },
  };
}

export type ClientService = ReturnType<typeof createClientService>;

/** The client a browser request's key named (undefined: none), if the request's origin is one of its own. */
function checkBrowserOrigin(client: ClientRecord | undefined, origin: string | undefined): ClientRecord {
  if (!client) throw new ServiceError('ERR_CLIENT_KEY_INVALID', 'The publishable key is missing or unknown.');
  if (!origin || !client.origins.includes(origin)) {
    throw new ServiceError('ERR_CLIENT_ORIGIN_NOT_ALLOWED', 'This origin is not registered for the publishable key.');
  }
  return client;
}

/** `https://App.example.com:443/` → `https://app.example.com`; refuses anything but http(s) origins. */
export function normalizeOrigin(input: string): string {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new Error(`not an origin: ${input}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`origin must be http or https: ${input}`);
  if (url.pathname !== '/' || url.search || url.hash || url.username)
    throw new Error(`origin must have no path, query or credentials: ${input}`);
  return url.origin;
}
