/**
 * Fixed delegation keys for the tests and the published vector, derived from fixed 32-byte
 * seeds exactly as test/vectors/generate.ts documents: an Ed25519 or X25519 private key is
 * the PKCS#8 DER `prefix || seed` (RFC 8410), its public key is derived by node:crypto.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';

/** PKCS#8 DER prefix of an Ed25519 private key (RFC 8410 7: OID 1.3.101.112). */
export const ED25519_PKCS8_PREFIX = '302e020100300506032b657004220420';
/** PKCS#8 DER prefix of an X25519 private key (OID 1.3.101.110). */
export const X25519_PKCS8_PREFIX = '302e020100300506032b656e04220420';
/** SPKI DER prefix of an X25519 public key. */
export const X25519_SPKI_PREFIX = '302a300506032b656e032100';
/** SPKI DER prefix of an Ed25519 public key. */
export const ED25519_SPKI_PREFIX = '302a300506032b6570032100';

export function ed25519PrivateFromSeed(seedHex: string): KeyObject {
  return createPrivateKey({ key: Buffer.from(ED25519_PKCS8_PREFIX + seedHex, 'hex'), format: 'der', type: 'pkcs8' });
}

export function x25519PrivateFromScalar(scalarHex: string): KeyObject {
  return createPrivateKey({ key: Buffer.from(X25519_PKCS8_PREFIX + scalarHex, 'hex'), format: 'der', type: 'pkcs8' });
}

export function x25519PublicFromU(uHex: string): KeyObject {
  return createPublicKey({ key: Buffer.from(X25519_SPKI_PREFIX + uHex, 'hex'), format: 'der', type: 'spki' });
}

export function privatePem(key: KeyObject): string {
  return key.export({ type: 'pkcs8', format: 'pem' }).toString();
}

export function publicPem(key: KeyObject): string {
  return (key.type === 'public' ? key : createPublicKey(key)).export({ type: 'spki', format: 'pem' }).toString();
}

/** The seed of a fixed key: SHA-256 of its label (so anyone can re-derive it). */
export function seedOf(label: string): string {
  return createHash('sha256').update(label).digest('hex');
}

export const SEED_LABELS = {
  spEd25519: 'service-delegation-v1 SP Ed25519',
  spX25519: 'service-delegation-v1 SP X25519',
  idpEd25519: 'service-delegation-v1 IdP Ed25519',
  idpX25519: 'service-delegation-v1 IdP X25519',
} as const;

export interface KeyPair {
  privateKey: KeyObject;
  publicKey: KeyObject;
  privatePem: string;
  publicPem: string;
}

function pair(privateKey: KeyObject): KeyPair {
  return { privateKey, publicKey: createPublicKey(privateKey), privatePem: privatePem(privateKey), publicPem: publicPem(privateKey) };
}

export const FIXED = {
  spEd25519: pair(ed25519PrivateFromSeed(seedOf(SEED_LABELS.spEd25519))),
  spX25519: pair(x25519PrivateFromScalar(seedOf(SEED_LABELS.spX25519))),
  idpEd25519: pair(ed25519PrivateFromSeed(seedOf(SEED_LABELS.idpEd25519))),
  idpX25519: pair(x25519PrivateFromScalar(seedOf(SEED_LABELS.idpX25519))),
};

export const SP_ID = 'client-123';
export const SERVICE_URL = 'https://idp.example.com';

export function randomPair(type: 'ed25519' | 'x25519'): KeyPair {
  const { privateKey } = type === 'ed25519' ? generateKeyPairSync('ed25519') : generateKeyPairSync('x25519');
  return pair(privateKey);
}
