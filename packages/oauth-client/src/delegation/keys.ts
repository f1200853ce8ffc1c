import { createPrivateKey, createPublicKey, KeyObject, type webcrypto } from 'node:crypto';
import { DelegationConfigError } from './errors.js';

/** What a delegation key must be. */
export type DelegationKeyKind = 'ed25519-private' | 'x25519-private' | 'ed25519-public' | 'x25519-public';

/** A key accepted by `sealEnvelope` and `openEnvelope`: a node:crypto `KeyObject` or a WebCrypto `CryptoKey`. */
export type DelegationKey = KeyObject | webcrypto.CryptoKey;

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----/g;
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

const KIND: Record<DelegationKeyKind, { alg: 'ed25519' | 'x25519'; type: 'private' | 'public' }> = {
  'ed25519-private': { alg: 'ed25519', type: 'private' },
  'x25519-private': { alg: 'x25519', type: 'private' },
  'ed25519-public': { alg: 'ed25519', type: 'public' },
  'x25519-public': { alg: 'x25519', type: 'public' },
};

const TYPE_NAME: Record<string, string> = {
  ed25519: 'Ed25519',
  x25519: 'X25519',
  ed448: 'Ed448',
  x448: 'X448',
  rsa: 'RSA',
  'rsa-pss': 'RSA-PSS',
  ec: 'EC',
  dsa: 'DSA',
  dh: 'DH',
};

/**
 * Loads one delegation key and checks it is the kind expected.
 *
 * `value` is a PEM (PKCS#8 `PRIVATE KEY` for private keys, SPKI `PUBLIC KEY` for public ones),
 * the same PEM on one line with literal `\n` sequences (as `.env` files hold it), or the base64
 * of a PEM (as secret stores often hold it). A `KeyObject` is checked and returned as is.
 *
 * @param value - the key
 * @param expected - the kind it must be
 * @param name - the option or environment variable it came from; every error message names it
 * @throws {@link DelegationConfigError} (`ERR_DELEGATION_CONFIG`) missing, malformed PEM, wrong
 *   key type (Ed25519 and X25519 swapped, RSA, EC…), or a public key where a private one
 *   belongs (and the reverse). Messages never contain the key.
 *
 * @example
 * ```ts
 * import { loadDelegationKey } from 'service-oauth-client/delegation';
 *
 * const key = loadDelegationKey(process.env.SP_ED25519_PRIVATE_KEY_PEM!, 'ed25519-private', 'SP_ED25519_PRIVATE_KEY_PEM');
 * ```
 */
export function loadDelegationKey(value: string | KeyObject, expected: DelegationKeyKind, name: string): KeyObject {
  if (value instanceof KeyObject) return checkDelegationKey(value, expected, name);
  if (typeof value !== 'string' || value.trim() === '') {
    throw new DelegationConfigError(`${name} is missing (expected ${describe(expected)} as PEM)`, { option: name });
  }
  const pem = toPem(value, name);
  const labels = [...pem.matchAll(PEM_BLOCK)].map((match) => match[1] as string);
  if (labels.length !== 1) {
    throw new DelegationConfigError(`${name} must hold exactly one PEM block, found ${labels.length}`, { option: name });
  }
  const label = labels[0] as string;
  const { type } = KIND[expected];
  if (type === 'private' && label !== 'PRIVATE KEY') {
    throw new DelegationConfigError(`${name} ${labelProblem(label, 'private')}; expected ${describe(expected)}`, { option: name });
  }
  if (type === 'public' && label !== 'PUBLIC KEY') {
    throw new DelegationConfigError(`${name} ${labelProblem(label, 'public')}; expected ${describe(expected)}`, { option: name });
  }
  let key: KeyObject;
  try {
    key = type === 'private' ? createPrivateKey({ key: pem, format: 'pem' }) : createPublicKey({ key: pem, format: 'pem' });
  } catch (cause) {
    throw new DelegationConfigError(`${name} is a malformed PEM ${label} (it cannot be parsed)`, { option: name, cause });
  }
  return checkDelegationKey(key, expected, name);
}

/**
 * Checks that `key` (a `KeyObject` or `CryptoKey`) is the kind expected, or throws
 * {@link DelegationConfigError} naming `name`.
 */
export function checkDelegationKey<K extends DelegationKey>(key: K, expected: DelegationKeyKind, name: string): K {
  const want = KIND[expected];
  let alg: string;
  let type: string;
  if (key instanceof KeyObject) {
    type = key.type;
    alg = key.asymmetricKeyType ?? 'secret';
  } else if (isCryptoKey(key)) {
    type = key.type;
    alg = key.algorithm.name.toLowerCase();
  } else {
    throw new DelegationConfigError(`${name} must be a KeyObject or a CryptoKey`, { option: name });
  }
  if (alg !== want.alg) {
    const got = TYPE_NAME[alg] ?? alg;
    const swapped = (alg === 'ed25519' || alg === 'x25519') && type === want.type ? ' (are the Ed25519 and X25519 keys swapped?)' : '';
    throw new DelegationConfigError(`${name} is an ${got} key; expected ${describe(expected)}${swapped}`, { option: name });
  }
  if (type !== want.type) {
    throw new DelegationConfigError(`${name} is a ${type} key; expected ${describe(expected)}`, { option: name });
  }
  return key;
}

function describe(kind: DelegationKeyKind): string {
  const { alg, type } = KIND[kind];
  return type === 'private' ? `an ${TYPE_NAME[alg]} private key (PKCS#8 PEM)` : `an ${TYPE_NAME[alg]} public key (SPKI PEM)`;
}

function labelProblem(label: string, want: 'private' | 'public'): string {
  if (want === 'private' && label === 'PUBLIC KEY') return 'holds a public key where a private key belongs';
  if (want === 'public' && label.endsWith('PRIVATE KEY')) {
    return 'holds a private key where a public key belongs (keep the private key secret; give its SPKI public key)';
  }
  if (label === 'ENCRYPTED PRIVATE KEY') return 'holds an encrypted private key (give an unencrypted PKCS#8 key)';
  if (label === 'RSA PRIVATE KEY' || label === 'RSA PUBLIC KEY') return `holds an RSA key (PEM ${label})`;
  if (label === 'EC PRIVATE KEY') return 'holds an EC key (PEM EC PRIVATE KEY)';
  if (label === 'OPENSSH PRIVATE KEY') return 'holds an OpenSSH key (convert it to PKCS#8 PEM)';
  return `holds a PEM ${label}`;
}

/** PEM as is, PEM with literal "\n" escapes, or base64 of a PEM; never echoes the value. */
function toPem(value: string, name: string): string {
  const trimmed = value.trim();
  if (trimmed.includes('-----BEGIN')) return unescapeNewlines(trimmed);
  const compact = trimmed.replace(/\s+/g, '');
  if (BASE64.test(compact)) {
    const decoded = Buffer.from(compact, compact.includes('-') || compact.includes('_') ? 'base64url' : 'base64').toString('utf8');
    if (decoded.includes('-----BEGIN')) return unescapeNewlines(decoded.trim());
  }
  throw new DelegationConfigError(`${name} is not a PEM key (nor the base64 of one): it has no PEM header line`, { option: name });
}

function unescapeNewlines(pem: string): string {
  return pem.replaceAll('\\r\\n', '\n').replaceAll('\\n', '\n').replaceAll('\r\n', '\n');
}

function isCryptoKey(value: unknown): value is webcrypto.CryptoKey {
  return (value as { [Symbol.toStringTag]?: unknown } | null)?.[Symbol.toStringTag] === 'CryptoKey';
}
