import { compactVerify, decodeProtectedHeader, importJWK } from 'jose';
import { DEVICE_PROOF_ALG, DEVICE_PROOF_TYP, type DeviceProofPayload } from 'service-protocol';
import type { Device } from './store.js';

type VerifyKey = Awaited<ReturnType<typeof importJWK>>;

/** Imported device keys by device id and key: importing cost about a tenth of a login. */
const KEY_CACHE_SIZE = 10_000;
const importedKeys = new Map<string, { jwk: string; key: VerifyKey }>();

async function deviceKey(device: Device): Promise<VerifyKey> {
  const jwk = JSON.stringify(device.publicJwk);
  const cached = importedKeys.get(device.id);
  if (cached?.jwk === jwk) return cached.key;
  const key = await importJWK({ ...device.publicJwk, alg: DEVICE_PROOF_ALG }, DEVICE_PROOF_ALG);
  if (importedKeys.size >= KEY_CACHE_SIZE) importedKeys.clear();
  importedKeys.set(device.id, { jwk, key });
  return key;
}

/**
 * Checks a device proof (see service-protocol device-proof.ts) against the device's stored
 * public key. Returns the payload when the signature and header are right; the caller checks
 * the nonce, the user and the client. Any malformed input yields undefined, never a throw.
 * The device itself is always read from storage, so a removed device is refused at once.
 */
export async function verifyDeviceProof(
  proof: string,
  cryptoVersion: string,
  findDevice: (kid: string) => Promise<Device | undefined>,
): Promise<{ device: Device; payload: DeviceProofPayload } | undefined> {
  try {
    const header = decodeProtectedHeader(proof);
    if (
      header.alg !== DEVICE_PROOF_ALG ||
      header.typ !== DEVICE_PROOF_TYP ||
      header.cv !== cryptoVersion ||
      typeof header.kid !== 'string'
    ) {
      return undefined;
    }
    // RFC 8725 3.1: the key comes from our storage, never from the token; alg is pinned.
    const device = await findDevice(header.kid);
    if (!device || device.cryptoVersion !== cryptoVersion) return undefined;
    const { payload } = await compactVerify(proof, await deviceKey(device), { algorithms: [DEVICE_PROOF_ALG] });
    const claims = JSON.parse(new TextDecoder().decode(payload)) as Partial<DeviceProofPayload>;
    if (typeof claims.sub !== 'string' || typeof claims.nonce !== 'string' || typeof claims.iat !== 'number') return undefined;
    return { device, payload: claims as DeviceProofPayload };
  } catch {
    return undefined;
  }
}
