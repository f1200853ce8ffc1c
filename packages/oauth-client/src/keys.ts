import { createPublicKey, KeyObject, type webcrypto, X509Certificate } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { IMPORTED_KEY_CACHE_MAX_ENTRIES, RSA_MIN_MODULUS_BITS } from './defaults.js';
import { InvalidPublicKeyError } from './errors.js';

/**
 * A verification key: a PEM string (SPKI `PUBLIC KEY`, PKCS#1 `RSA PUBLIC KEY` or an X.509
 * `CERTIFICATE`), a path to a file holding one, a Buffer holding PEM or DER SPKI, a public
 * `KeyObject` or a public `CryptoKey`.
 */
export type PublicKeyInput = string | Buffer | KeyObject | webcrypto.CryptoKey;

const PEM_BEGIN = '-----BEGIN ';
const SUPPORTED_TYPES = new Set(['rsa', 'rsa-pss', 'ec', 'ed25519']);

/**
 * Imported keys, keyed by their material: a PEM string by its text, a Buffer by its bytes
 * (the same Buffer object is recognised without copying it to a string, after a byte
 * comparison), a file path by the path and the file's identity (device, inode, size, mtime;
 * one `stat` per call, so a replaced key file is read again), a `CryptoKey` by the object.
 * Least recently used entries leave first, so a caller passing a new key on every call cannot
 * grow memory.
 */
const byText = new Map<string, { stamp?: string; key: KeyObject }>();
const byBuffer = new WeakMap<Buffer, { bytes: Buffer; key: KeyObject }>();
const byCryptoKey = new WeakMap<webcrypto.CryptoKey, KeyObject>();

/**
 * Turns any accepted input into a checked public KeyObject, or throws InvalidPublicKeyError.
 * Synchronous, and cached: importing a PEM costs over 100 µs, several times an RS256 verify.
 */
export function importPublicKey(input: PublicKeyInput): KeyObject {
  if (input instanceof KeyObject) return checkPublicKey(input);
  if (typeof input === 'string') {
    if (input.includes(PEM_BEGIN)) return cached(input, undefined, () => fromPem(input));
    if (input.trim() === '') throw new InvalidPublicKeyError('publicKey is empty');
    // A path never contains "-----BEGIN ", so it cannot collide with a PEM entry.
    return cached(input, fileStamp(input), () => fromBytes(readKeyFile(input)));
  }
  if (Buffer.isBuffer(input)) {
    const hit = byBuffer.get(input);
    if (hit?.bytes.equals(input)) return hit.key;
    const key = cached(input.toString('latin1'), 'bytes', () => fromBytes(input));
    byBuffer.set(input, { bytes: Buffer.from(input), key });
    return key;
  }
  if (isCryptoKey(input)) {
    let key = byCryptoKey.get(input);
    if (key === undefined) {
      key = checkPublicKey(fromCryptoKey(input));
      byCryptoKey.set(input, key);
    }
    return key;
  }
  throw new InvalidPublicKeyError('publicKey must be a PEM string, a file path, a Buffer, a KeyObject or a CryptoKey');
}

function cached(id: string, stamp: string | undefined, load: () => KeyObject): KeyObject {
  const hit = byText.get(id);
  if (hit !== undefined && hit.stamp === stamp) {
    // Re-insert: Map order is the eviction order.
    byText.delete(id);
    byText.set(id, hit);
    return hit.key;
  }
  const key = checkPublicKey(load());
  byText.delete(id);
  byText.set(id, stamp === undefined ? { key } : { stamp, key });
  if (byText.size > IMPORTED_KEY_CACHE_MAX_ENTRIES) byText.delete(byText.keys().next().value as string);
  return key;
}

/** @internal For tests: how many imported keys are cached. */
export function importedKeyCount(): number {
  return byText.size;
}

function isCryptoKey(value: unknown): value is webcrypto.CryptoKey {
  return (value as { [Symbol.toStringTag]?: unknown } | null)?.[Symbol.toStringTag] === 'CryptoKey';
}

function fromCryptoKey(input: webcrypto.CryptoKey): KeyObject {
  try {
    return KeyObject.from(input);
  } catch (cause) {
    throw new InvalidPublicKeyError('publicKey CryptoKey cannot be used', { cause });
  }
}

function fileStamp(path: string): string {
  try {
    const { dev, ino, size, mtimeMs } = statSync(path);
    return `${dev}:${ino}:${size}:${mtimeMs}`;
  } catch (cause) {
    throw unreadable(cause);
  }
}

function readKeyFile(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (cause) {
    throw unreadable(cause);
  }
}

function unreadable(cause: unknown): InvalidPublicKeyError {
  return new InvalidPublicKeyError(
    `publicKey is neither a PEM value nor a readable file (${(cause as NodeJS.ErrnoException).code ?? 'read failed'})`,
    { cause },
  );
}

function fromBytes(bytes: Buffer): KeyObject {
  const text = bytes.toString('latin1');
  if (text.includes(PEM_BEGIN)) return fromPem(text);
  try {
    return createPublicKey({ key: bytes, format: 'der', type: 'spki' });
  } catch (cause) {
    throw new InvalidPublicKeyError('publicKey is neither PEM nor a DER SubjectPublicKeyInfo', { cause });
  }
}

function fromPem(raw: string): KeyObject {
  // Environment variables often carry PEM with literal "\n" sequences.
  const pem = raw.includes('\n') ? raw : raw.replaceAll('\\n', '\n');
  const label = /-----BEGIN ([A-Z0-9 ]+)-----/.exec(pem)?.[1];
  if (label?.includes('PRIVATE KEY')) {
    throw new InvalidPublicKeyError('publicKey holds a private key; give the public key (SPKI PEM) instead');
  }
  try {
    return label === 'CERTIFICATE' ? new X509Certificate(pem).publicKey : createPublicKey({ key: pem, format: 'pem' });
  } catch (cause) {
    throw new InvalidPublicKeyError('publicKey is not a valid PEM public key or certificate', { cause });
  }
}

/** Also for keys taken from a key set (JWKS), so every key passes the same checks. */
export function checkPublicKey(key: KeyObject): KeyObject {
  if (key.type !== 'public') {
    throw new InvalidPublicKeyError(`publicKey must be a public key, got a ${key.type} key`);
  }
  const type = key.asymmetricKeyType ?? 'unknown';
  if (!SUPPORTED_TYPES.has(type)) {
    throw new InvalidPublicKeyError(`publicKey type ${type} is not supported (RSA, EC or Ed25519)`);
  }
  const bits = key.asymmetricKeyDetails?.modulusLength;
  if ((type === 'rsa' || type === 'rsa-pss') && (bits === undefined || bits < RSA_MIN_MODULUS_BITS)) {
    throw new InvalidPublicKeyError(`RSA publicKey has ${bits ?? 'unknown'} bits; at least ${RSA_MIN_MODULUS_BITS} are required`);
  }
  return key;
}

/** JWS algorithms that can be verified with a public key (RFC 7518 3.1, RFC 8037). */
export const ASYMMETRIC_ALGORITHMS: ReadonlySet<string> = new Set([
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
]);

const EC_ALG_BY_CURVE: Record<string, string> = { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' };

/** Whether `alg` can be verified with `key` (RFC 8725 3.1: the key decides the algorithm family). */
export function algorithmFitsKey(alg: string, key: KeyObject): boolean {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return /^(RS|PS)(256|384|512)$/.test(alg);
    case 'rsa-pss':
      return /^PS(256|384|512)$/.test(alg);
    case 'ec':
      return EC_ALG_BY_CURVE[key.asymmetricKeyDetails?.namedCurve ?? ''] === alg;
    case 'ed25519':
      return alg === 'EdDSA' || alg === 'Ed25519';
    default:
      return false;
  }
}
