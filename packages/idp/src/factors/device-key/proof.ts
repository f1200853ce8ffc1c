import { createPublicKey, type JsonWebKey, type KeyObject, verify } from 'node:crypto';
import { DEVICE_PROOF_ALG, DEVICE_PROOF_TYP, type DeviceProofPayload } from 'service-protocol';
import type { Device } from '../../devices/store.js';

/**
 * Imported device keys by device id, checked against the stored JWK text on every use (a key
 * is immutable material: only the stored row says whether the device may still sign in).
 * Importing cost about a tenth of a sign-in.
 */
const KEY_CACHE_SIZE = 10_000;
const importedKeys = new Map<string, { jwk: string; key: KeyObject }>();

function deviceKey(device: Device): KeyObject {
  const jwk = JSON.stringify(device.publicJwk);
  const cached = importedKeys.get(device.id);
  if (cached?.jwk === jwk) return cached.key;
  const key = createPublicKey({ key: device.publicJwk as JsonWebKey, format: 'jwk' });
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') throw new Error('not a P-256 key');
  if (importedKeys.size >= KEY_CACHE_SIZE) importedKeys.clear();
  importedKeys.set(device.id, { jwk, key });
  return key;
}

const BASE64URL = /^[A-Za-z0-9_-]+$/;
/** ES256 signatures are r‖s, 32 bytes each (RFC 7518 3.4). */
const ES256_SIGNATURE_BYTES = 64;

function parseJson(part: string): Record<string, unknown> | undefined {
  const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** ES256 over node:crypto's callback verify, which runs in the libuv pool, off the event loop. */
function verifyEs256(input: string, signature: Buffer, key: KeyObject): Promise<boolean> {
  return new Promise((resolve) => {
    verify('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }, signature, (error, ok) => resolve(!error && ok));
  });
}

/** The device a proof names (its header's `kid`), read before the proof is checked; undefined when unreadable. */
export function deviceProofKeyId(proof: string): string | undefined {
  try {
    const header = parseJson(proof.split('.', 1)[0] ?? '');
    return typeof header?.kid === 'string' ? header.kid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Checks a device proof (see service-protocol device-proof.ts) against the device's stored
 * public key. Returns the payload when the signature and header are right; the caller checks
 * the nonce, the user and the client. Any malformed input yields undefined, never a throw.
 * The device itself is always read from storage, so a removed device is refused at once.
 *
 * Written on node:crypto rather than jose's compactVerify: jose verifies through WebCrypto,
 * whose per-call JavaScript (algorithm normalisation, WebIDL checks) ran on the event loop,
 * the sign-in's bottleneck; the rules are few and fixed (one alg, no `crit`, no `b64`).
 */
export async function verifyDeviceProof(
  proof: string,
  cryptoVersion: string,
  findDevice: (kid: string) => Promise<Device | undefined>,
): Promise<{ device: Device; payload: DeviceProofPayload } | undefined> {
  try {
    const parts = proof.split('.');
    if (parts.length !== 3 || !parts.every((part) => BASE64URL.test(part))) return undefined;
    const [encodedHeader, encodedPayload, encodedSignature] = parts as [string, string, string];
    const header = parseJson(encodedHeader);
    if (
      !header ||
      header.alg !== DEVICE_PROOF_ALG ||
      header.typ !== DEVICE_PROOF_TYP ||
      header.cv !== cryptoVersion ||
      typeof header.kid !== 'string' ||
      // RFC 7515 4.1.11: no extension is understood, so none may be critical.
      'crit' in header
    ) {
      return undefined;
    }
    const signature = Buffer.from(encodedSignature, 'base64url');
    if (signature.length !== ES256_SIGNATURE_BYTES) return undefined;
    // RFC 8725 3.1: the key comes from our storage, never from the token; alg is pinned.
    const device = await findDevice(header.kid);
    if (!device || device.cryptoVersion !== cryptoVersion) return undefined;
    if (!(await verifyEs256(`${encodedHeader}.${encodedPayload}`, signature, deviceKey(device)))) return undefined;
    const claims = parseJson(encodedPayload) as Partial<DeviceProofPayload> | undefined;
    if (!claims || typeof claims.sub !== 'string' || typeof claims.nonce !== 'string' || typeof claims.iat !== 'number') return undefined;
    return { device, payload: claims as DeviceProofPayload };
  } catch {
    return undefined;
  }
}
