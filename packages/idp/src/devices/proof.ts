import { compactVerify, decodeProtectedHeader, importJWK } from 'jose';
import { DEVICE_PROOF_ALG, DEVICE_PROOF_TYP, type DeviceProofPayload } from 'service-protocol';
import type { Device } from './store.js';

/**
 * Checks a device proof (see service-protocol device-proof.ts) against the device's stored
 * public key. Returns the payload when the signature and header are right; the caller checks
 * the nonce, the user and the client. Any malformed input yields undefined, never a throw.
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
    const key = await importJWK({ ...device.publicJwk, alg: DEVICE_PROOF_ALG }, DEVICE_PROOF_ALG);
    const { payload } = await compactVerify(proof, key, { algorithms: [DEVICE_PROOF_ALG] });
    const claims = JSON.parse(new TextDecoder().decode(payload)) as Partial<DeviceProofPayload>;
    if (typeof claims.sub !== 'string' || typeof claims.nonce !== 'string' || typeof claims.iat !== 'number') return undefined;
    return { device, payload: claims as DeviceProofPayload };
  } catch {
    return undefined;
  }
}
