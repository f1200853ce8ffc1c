/**
 * The page's session key: the fallback of Device Bound Session Credentials for browsers
 * without DBSC (docs/protocol.md "Session renewal by the hosted page's key"). A non-extractable
 * P-256 WebCrypto key, new at each sign-in and kept in this origin's IndexedDB; its public half
 * goes with /signin/complete (or /signin/continue) and binds the session the answer sets. The
 * renewal interstitial (renew.ts) signs its challenge with it, in the DBSC draft's JWT shape.
 */
import type { DevicePublicJwk } from 'service-protocol';

const DATABASE = 'service-hosted';
const STORE = 'session-keys';
const KEY = 'session';
const DEVICE_KEY = 'upstream-device';

/** One IndexedDB request on the session-key store, as a promise (the database is opened and closed each time). */
function withStore<T>(mode: IDBTransactionMode, operation: (store: IDBObjectStore) => IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    const open = indexedDB.open(DATABASE, 1);
    open.onupgradeneeded = () => open.result.createObjectStore(STORE);
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const db = open.result;
      const transaction = db.transaction(STORE, mode);
      const request = operation(transaction.objectStore(STORE));
      transaction.oncomplete = () => {
        db.close();
        resolve(request.result);
      };
      transaction.onerror = transaction.onabort = () => {
        db.close();
        reject(transaction.error);
      };
    };
  });
}

/** A new P-256 key kept here under `name`; its public JWK, or undefined where WebCrypto or IndexedDB fails. */
async function newPageKey(name: string): Promise<DevicePublicJwk | undefined> {
  try {
    const pair = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign', 'verify']);
    const jwk = await publicJwkOf(pair);
    if (jwk) await withStore('readwrite', (store) => store.put(pair, name));
    return jwk;
  } catch {
    return undefined;
  }
}

async function publicJwkOf(pair: CryptoKeyPair): Promise<DevicePublicJwk | undefined> {
  const { kty, crv, x, y } = await crypto.subtle.exportKey('jwk', pair.publicKey);
  return kty === 'EC' && crv === 'P-256' && x && y ? { kty, crv, x, y } : undefined;
}

/** A new session key, kept here; its public JWK, or undefined where WebCrypto or IndexedDB fails (the session is then unbound). */
export const newSessionKey = () => newPageKey(KEY);

/**
 * This browser's device key for a "Continue with" sign-in (upstream.ts): kept here and used
 * again, so the same browser is one device of the user (one new-device mail), not a new one at
 * every sign-in. Undefined where WebCrypto or IndexedDB fails (no device, no session).
 */
export async function upstreamDeviceKey(): Promise<DevicePublicJwk | undefined> {
  try {
    const kept = await withStore<CryptoKeyPair | undefined>('readonly', (store) => store.get(DEVICE_KEY));
    if (kept?.publicKey) return await publicJwkOf(kept);
  } catch {
    return undefined;
  }
  return newPageKey(DEVICE_KEY);
}

const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
const part = (value: object) => base64url(new TextEncoder().encode(JSON.stringify(value)));

/**
 * The proof over a challenge: a JWT (ES256, typ dbsc+jwt, jti = the challenge) signed by the
 * kept key, or undefined when this browser holds none. WebCrypto's ECDSA signature is raw r||s,
 * the JWS ES256 format (RFC 7518 3.4).
 */
export async function sessionProof(challenge: string): Promise<string | undefined> {
  try {
    const pair = await withStore<CryptoKeyPair | undefined>('readonly', (store) => store.get(KEY));
    if (!pair?.privateKey) return undefined;
    const input = `${part({ alg: 'ES256', typ: 'dbsc+jwt' })}.${part({ jti: challenge, iat: Math.floor(Date.now() / 1000) })}`;
    const signature = await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, pair.privateKey, new TextEncoder().encode(input));
    return `${input}.${base64url(new Uint8Array(signature))}`;
  } catch {
    return undefined;
  }
}
