import {
  type CryptoVersion,
  DEVICE_PROOF_ALG,
  DEVICE_PROOF_TYP,
  type DeviceProofHeader,
  type DeviceProofPayload,
  type DevicePublicJwk,
} from 'service-protocol';
import { base64url, base64urlJson, utf8 } from './base64url.js';
import { reasonOf } from './results.js';

const KEY_ALGORITHM: EcKeyGenParams = { name: 'ECDSA', namedCurve: 'P-256' };

/**
 * A P-256 key pair whose private half can never leave WebCrypto (extractable: false). The
 * public half of a generated pair stays exportable by definition (WebCrypto generateKey).
 */
export async function generateDeviceKeyPair(crypto: Crypto): Promise<CryptoKeyPair> {
  return crypto.subtle.generateKey(KEY_ALGORITHM, false, ['sign', 'verify']);
}

/** A device key pair made for a registration, or why none could be made. */
export type NewDeviceKey =
  | { keyPair: CryptoKeyPair; publicJwk: DevicePublicJwk; problem?: undefined }
  | { keyPair?: undefined; publicJwk?: undefined; problem: string };

/** A new device key pair and its public JWK, or why none could be made (a login goes on without). */
export async function newDeviceKey(crypto: Crypto | undefined): Promise<NewDeviceKey> {
  try {
    if (!crypto?.subtle) throw new Error('no WebCrypto (not a secure context)');
    const keyPair = await generateDeviceKeyPair(crypto);
    return { keyPair, publicJwk: await exportDevicePublicJwk(crypto, keyPair.publicKey) };
  } catch (error) {
    return { problem: reasonOf(error) };
  }
}

/** The public key as the JWK members the service stores (RFC 7517, RFC 7518 6.2.1). */
export async function exportDevicePublicJwk(crypto: Crypto, publicKey: CryptoKey): Promise<DevicePublicJwk> {
  const { kty, crv, x, y } = await crypto.subtle.exportKey('jwk', publicKey);
  if (kty !== 'EC' || crv !== 'P-256' || typeof x !== 'string' || typeof y !== 'string') throw new Error('not an EC P-256 key');
  return { kty, crv, x, y };
}

export interface DeviceProofInput {
  deviceId: string;
  cryptoVersion: CryptoVersion;
  /** Normalized email. */
  sub: string;
  /** The challenge from POST /v1/device-challenges. */
  nonce: string;
  /** Seconds since the epoch; defaults to now. */
  iat?: number;
  /** The device operation the proof is for (protocol DeviceOps); none for a login. */
  op?: string;
}

/**
 * Compact JWS as the protocol package's device-proof.ts defines it. WebCrypto's ECDSA signature
 * is the raw r||s concatenation, which is exactly the JWS ES256 format (RFC 7518 3.4).
 */
export async function createDeviceProof(crypto: Crypto, privateKey: CryptoKey, input: DeviceProofInput): Promise<string> {
  const header: DeviceProofHeader = {
    alg: DEVICE_PROOF_ALG,
    typ: DEVICE_PROOF_TYP,
    kid: input.deviceId,
    cv: input.cryptoVersion,
  };
  const payload: DeviceProofPayload = {
    sub: input.sub,
    nonce: input.nonce,
    iat: input.iat ?? Math.floor(Date.now() / 1000),
    op: input.op,
  };
  const signingInput = `${base64urlJson(header)}.${base64urlJson(payload)}`;
  const signature = await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, privateKey, utf8(signingInput));
  return `${signingInput}.${base64url(new Uint8Array(signature))}`;
}
