/**
 * Device proof, cryptoVersion "v1": a compact JWS (RFC 7515) signed with ES256 by the
 * device's non-extractable P-256 key.
 *
 *   protected header: { "alg": "ES256", "typ": "device-proof+jwt", "kid": <deviceId>, "cv": "v1" }
 *   payload:          { "sub": <normalized email>, "nonce": <challenge>, "iat": <seconds>, "op"?: <operation> }
 *
 * The service checks the signature with the stored public key of `kid`, that the device
 * belongs to `sub`, that `nonce` is an unused challenge it issued to the same client, and
 * that `cv` is the cryptoVersion of the request. Because `cv` sits in the protected header,
 * it is covered by the signature. A login proof has no `op`; a device-management proof names
 * its operation (devices.ts), and each side refuses a proof made for another.
 */
export const DEVICE_PROOF_TYP = 'device-proof+jwt';
export const DEVICE_PROOF_ALG = 'ES256';
export const CRYPTO_VERSIONS = ['v1'] as const;
export type CryptoVersion = (typeof CRYPTO_VERSIONS)[number];

export interface DeviceProofHeader {
  alg: typeof DEVICE_PROOF_ALG;
  typ: typeof DEVICE_PROOF_TYP;
  kid: string;
  cv: CryptoVersion;
}

export interface DeviceProofPayload {
  sub: string;
  nonce: string;
  iat: number;
  /** The operation the proof is for (devices.ts DeviceOps); absent on a login proof. */
  op?: string;
}
