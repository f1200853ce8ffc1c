import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, type JWK } from 'jose';
import type { Sealer } from '../crypto/seal.js';
import { ID_TOKEN_TTL_SECONDS, KEY_CACHE_SECONDS, SIGNING_KEY_BITS } from '../defaults.js';
import { isSigningAlg, SIGNING_ALGS, type SigningAlg } from './algs.js';
import type { KeyStore, SigningKeyRow } from './store.js';

export interface ActiveKey {
  kid: string;
  alg: SigningAlg;
  privateKey: KeyObject;
}

export interface Keyring {
  /** The newest current key of `alg` (default RS256), used for every signature with it. */
  active(alg?: SigningAlg): Promise<ActiveKey>;
  /** The public JWK Set (RFC 7517 5): current keys plus retired ones whose tokens may still be alive. */
  jwks(): Promise<{ keys: JWK[] }>;
  /**
   * Makes a new key current for every algorithm; the old ones stay published until their last
   * token expires. Returns the new RS256 key's kid.
   */
  rotate(): Promise<string>;
  /**
   * Creates a first key for each algorithm that has none, once per database (under the migration
   * lock: nodes starting together make one set). Returns the algorithms it made a key for.
   */
  ensure(): Promise<SigningAlg[]>;
  /** The published keys (current and retired within the grace period), newest first; never a private key. */
  list(): Promise<Array<{ kid: string; alg: string; createdAt: number; retiredAt: number | null }>>;
}

/** Makes a signing key pair of `alg`. */
export type SigningKeyGenerator = (alg: SigningAlg) => { publicKey: KeyObject; privateKey: KeyObject };

const GENERATE: Record<SigningAlg, () => ReturnType<SigningKeyGenerator>> = {
  RS256: () => generateKeyPairSync('rsa', { modulusLength: SIGNING_KEY_BITS }),
  ES256: () => generateKeyPairSync('ec', { namedCurve: 'P-256' }),
  EdDSA: () => generateKeyPairSync('ed25519'),
};

/** A fresh key pair every time: what the service uses (a test may start its services with pre-generated first keys). */
export const generateSigningKeyPair: SigningKeyGenerator = (alg) => GENERATE[alg]();

/**
 * Signing keys (one current per algorithm) stored sealed in the database, cached per node for
 * `cacheSeconds` (KEY_CACHE_SECONDS unless configured: SERVICE_IDP_KEY_CACHE_SECONDS).
 */
export function createKeyring({
  store,
  sealer,
  now,
  cacheSeconds = KEY_CACHE_SECONDS,
  generate = generateSigningKeyPair,
}: {
  store: KeyStore;
  sealer: Sealer;
  now: () => number;
  cacheSeconds?: number;
  generate?: SigningKeyGenerator;
}): Keyring {
  // A node may sign with a retired key for up to cacheSeconds after a rotation elsewhere,
  // so the key stays published for that long beyond the lifetime of the tokens it signed.
  const graceMs = (ID_TOKEN_TTL_SECONDS + cacheSeconds) * 1000;
  let cache: { loadedAt: number; active: Map<SigningAlg, ActiveKey>; jwks: { keys: JWK[] } } | undefined;

  async function load() {
    const at = now();
    if (cache && at - cache.loadedAt < cacheSeconds * 1000) return cache;
    const rows = await store.listPublishable(at, graceMs);
    const active = new Map<SigningAlg, ActiveKey>();
    // Rows come newest first: the first current row of an algorithm is its active key.
    for (const row of rows) {
      if (row.retiredAt !== null || !isSigningAlg(row.alg) || active.has(row.alg)) continue;
      const privateKey = createPrivateKey({ key: JSON.parse(sealer.open(row.privateJwkSealed)), format: 'jwk' });
      active.set(row.alg, { kid: row.kid, alg: row.alg, privateKey });
    }
    const loaded = { loadedAt: at, active, jwks: { keys: rows.map((r) => JSON.parse(r.publicJwk) as JWK) } };
    // A set without a current key for every algorithm (read before another node's first keys
    // were in) is served but not kept: the next call reads the database again, so no node
    // serves an empty or partial JWKS for a whole cache period.
    cache = active.size === SIGNING_ALGS.length ? loaded : undefined;
    return loaded;
  }

  async function newKey(alg: SigningAlg): Promise<SigningKeyRow> {
    const { publicKey, privateKey } = generate(alg);
    const publicJwk = publicKey.export({ format: 'jwk' }) as JWK;
    const kid = await calculateJwkThumbprint(publicJwk);
    return {
      kid,
      alg,
      publicJwk: JSON.stringify({ ...publicJwk, kid, alg, use: 'sig' }),
      privateJwkSealed: sealer.seal(JSON.stringify(privateKey.export({ format: 'jwk' }))),
      createdAt: now(),
      retiredAt: null,
    };
  }

  return {
    async active(alg: SigningAlg = 'RS256') {
      const key = (await load()).active.get(alg);
      if (!key) throw new Error(`no ${alg} signing key: run \`service-idp start\` once or \`service-idp keys rotate\``);
      return key;
    },
    async jwks() {
      return (await load()).jwks;
    },
    async rotate() {
      const keys = await Promise.all(SIGNING_ALGS.map(newKey));
      await store.rotate(keys);
      cache = undefined;
      return (keys[0] as SigningKeyRow).kid;
    },
    async list() {
      const rows = await store.listPublishable(now(), graceMs);
      return rows.map(({ kid, alg, createdAt, retiredAt }) => ({ kid, alg, createdAt, retiredAt }));
    },
    async ensure() {
      // Read first without the lock: every start but a database's first finds its keys here.
      const rows = await store.listPublishable(now(), graceMs);
      if (SIGNING_ALGS.every((alg) => rows.some((r) => r.alg === alg && r.retiredAt === null))) return [];
      const made = await store.addMissing(SIGNING_ALGS, (missing) => Promise.all(missing.filter(isSigningAlg).map(newKey)));
      cache = undefined;
      return made.filter(isSigningAlg);
    },
  };
}
