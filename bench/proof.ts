/**
 * Device proofs made the way service-web's createDeviceProof makes them (cryptoVersion v1,
 * packages/protocol/src/device-proof.ts), but with node:crypto's synchronous ECDSA so the
 * load generator can sign inside autocannon's synchronous setupRequest hook.
 */
import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { DEVICE_PROOF_ALG, DEVICE_PROOF_TYP, type DevicePublicJwk } from 'service-protocol';

export interface DeviceKey {
  privateKey: KeyObject;
  publicJwk: DevicePublicJwk;
}

export function newDeviceKey(): DeviceKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const { x, y } = publicKey.export({ format: 'jwk' });
  if (!x || !y) throw new Error('P-256 public key without coordinates');
  return { privateKey, publicJwk: { kty: 'EC', crv: 'P-256', x, y } };
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Compact JWS, ES256: ieee-p1363 is the raw r||s form RFC 7518 3.4 requires. */
export function deviceProof(privateKey: KeyObject, deviceId: string, email: string, nonce: string): string {
  const input = `${json({ alg: DEVICE_PROOF_ALG, typ: DEVICE_PROOF_TYP, kid: deviceId, cv: 'v1' })}.${json({
    sub: email,
    nonce,
    iat: Math.floor(Date.now() / 1000),
  })}`;
  return `${input}.${sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
}
