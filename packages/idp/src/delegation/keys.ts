import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { loadDelegationKey } from 'service-oauth-client/delegation';
import type { Sealer } from '../crypto/seal.js';
import type { DelegationStore } from './store.js';

export interface IdpKeys {
  signingPrivate: KeyObject;
  signingPublicPem: string;
  encryptionPrivate: KeyObject;
  encryptionPublicPem: string;
}

export interface SpKeyPair {
  signingPrivatePem: string;
  encryptionPrivatePem: string;
  verifyPublicPem: string;
  encryptionPublicPem: string;
}

const pem = (key: KeyObject) => key.export({ format: 'pem', type: key.type === 'private' ? 'pkcs8' : 'spki' }).toString();

/** A fresh Ed25519 (signing) and X25519 (encryption) key pair set, as PEM. */
export function newKeySet(): SpKeyPair {
  const signing = generateKeyPairSync('ed25519');
  const encryption = generateKeyPairSync('x25519');
  return {
    signingPrivatePem: pem(signing.privateKey),
    encryptionPrivatePem: pem(encryption.privateKey),
    verifyPublicPem: pem(signing.publicKey),
    encryptionPublicPem: pem(encryption.publicKey),
  };
}

/**
 * The service's own delegation keys: made once (by the first `clients delegation-keys`), the
 * private halves sealed at rest under the server secret, cached in memory once opened.
 */
export function createIdpKeyring({ store, sealer, now }: { store: DelegationStore; sealer: Sealer; now: () => number }) {
  let cached: IdpKeys | undefined;
  const open = (row: Awaited<ReturnType<DelegationStore['idpKeys']>> & {}): IdpKeys => ({
    signingPrivate: createPrivateKey(sealer.open(row.signingPrivateSealed)),
    signingPublicPem: row.signingPublicPem,
    encryptionPrivate: createPrivateKey(sealer.open(row.encryptionPrivateSealed)),
    encryptionPublicPem: row.encryptionPublicPem,
  });
  return {
    async get(): Promise<IdpKeys | undefined> {
      if (cached) return cached;
      const row = await store.idpKeys();
      if (row) cached = open(row);
      return cached;
    },
    async ensure(): Promise<IdpKeys> {
      const existing = await this.get();
      if (existing) return existing;
      const fresh = newKeySet();
      const row = await store.insertIdpKeys(
        {
          signingPrivateSealed: sealer.seal(fresh.signingPrivatePem),
          signingPublicPem: fresh.verifyPublicPem,
          encryptionPrivateSealed: sealer.seal(fresh.encryptionPrivatePem),
          encryptionPublicPem: fresh.encryptionPublicPem,
        },
        now(),
      );
      cached = open(row);
      return cached;
    },
  };
}

/** Checks imported service-provider public keys with the library's own loader (clear errors on a wrong type). */
export function importSpPublicKeys(verifyPem: string, encryptionPem: string): { verifyPublicPem: string; encryptionPublicPem: string } {
  const verify = loadDelegationKey(verifyPem, 'ed25519-public', '--sp-signing-key');
  const encryption = loadDelegationKey(encryptionPem, 'x25519-public', '--sp-encryption-key');
  return { verifyPublicPem: pem(verify), encryptionPublicPem: pem(encryption) };
}

export const publicKeyOf = (pemText: string) => createPublicKey(pemText);
