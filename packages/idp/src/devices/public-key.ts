import { createPublicKey } from 'node:crypto';
import type { DevicePublicJwk } from 'service-protocol';

/**
 * True when the JWK is a point on P-256. The schema already fixed its shape; OpenSSL's import
 * refuses coordinates off the curve (an invalid-curve key must never be stored).
 */
export function isValidDevicePublicKey(jwk: DevicePublicJwk): boolean {
  try {
    const key = createPublicKey({ key: { ...jwk }, format: 'jwk' });
    return key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1';
  } catch {
    return false;
  }
}
