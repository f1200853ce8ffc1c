import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { calculateJwkThumbprint, type JWK } from 'jose';
import type { Sealer } from '../crypto/seal.js';
import { ID_TOKEN_TTL_SECONDS, KEY_CACHE_SECONDS, SIGNING_KEY_BITS } from '../defaults.js';
import type { KeyStore, SigningKeyRow } from './store.js';

export interface ActiveKey {
  kid: string;
  alg: 'RS256';
  privateKey: KeyObject;
}

export interface Keyring {
  /** The newest current key, used for every signature. */
  active(): Promise<ActiveKey>;
  /** The public JWK Set (RFC 7517 5): current keys plus retired ones whose tokens may still be alive. */
  jwks(): Promise<{ keys: JWK[] }>;
  /** Makes a new key current; the old one stays published until its last token expires. */
  rotate(): Promise<string>;
  /** Creates the first key if there is none. */
  ensure(): Promise<void>;
}

/** RS256 signing keys stored sealed in the database, cached per node for KEY_CACHE_SECONDS. */
export function createKeyring({ store, sealer, now }: { store: KeyStore; sealer: Sealer; now: () => number }): Keyring {
  // A node may sign with a retired key for up to KEY_CACHE_SECONDS after a rotation elsewhere,
  // so the key stays published for that long beyond the lifetime of the tokens it signed.
  const graceMs = (ID_TOKEN_TTL_SECONDS + KEY_CACHE_SECONDS) * 1000;
  let cache: { loadedAt: number; active: ActiveKey | undefined; jwks: { keys: JWK[] } } | undefined;

  async function load() {
    const at = now();
    if (cache && at - cache.loadedAt < KEY_CACHE_SECONDS * 1000) return cache;
    const rows = await store.listPublishable(at, graceMs);
    const current = rows.find((r) => r.retiredAt === null);
    cache = {
      loadedAt: at,
      active: current && {
        kid: current.kid,
        alg: 'RS256',
        privateKey: createPrivateKey({ key: JSON.parse(sealer.open(current.privateJwkSealed)), format: 'jwk' }),
      },
      jwks: { keys: rows.map((r) => JSON.parse(r.publicJwk) as JWK) },
    };
    return cache;
  }

  async function newKey(): Promise<SigningKeyRow> {
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: SIGNING_KEY_BITS });
    const publicJwk = publicKey.export({ format: 'jwk' }) as JWK;
    const kid = await calculateJwkThumbprint(publicJwk);
    return {
      kid,
      alg: 'RS256',
      publicJwk: JSON.stringify({ ...publicJwk, kid, alg: 'RS256', use: 'sig' }),
      privateJwkSealed: sealer.seal(JSON.stringify(privateKey.export({ format: 'jwk' }))),
      createdAt: now(),
      retiredAt: null,
    };
  }

  return {
    async active() {
      const { active } = await load();
      if (!active) throw new Error('no signing key: run `service-idp start` once or `service-idp keys rotate`');
      return active;
    },
    async jwks() {
      return (await load()).jwks;
    },
    async rotate() {
      const key = await newKey();
      await store.rotate(key);
      cache = undefined;
      return key.kid;
    },
    async ensure() {
      const rows = await store.listPublishable(now(), graceMs);
      if (!rows.some((r) => r.retiredAt === null)) await this.rotate();
    },
  };
}
