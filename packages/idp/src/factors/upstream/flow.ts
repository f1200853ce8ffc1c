import { randomBytes } from 'node:crypto';
import type { DevicePublicJwk } from 'service-protocol';
import type { Sealer } from '../../crypto/seal.js';
import type { PendingDevice } from '../../devices/pending.js';
import { isValidDevicePublicKey } from '../../devices/public-key.js';
import { describeUserAgent } from '../../devices/user-agent.js';
import { ServiceError } from '../../errors.js';

/**
 * What the start of an upstream sign-in leaves in the browser: a cookie sealed by the service
 * (AES-256-GCM, crypto/seal.ts) holding the checks the callback needs (state, nonce, PKCE
 * verifier) and where the result goes. It binds the sign-in to the browser that started it:
 * a callback in another browser has no cookie (login CSRF), a swapped `state` does not match
 * it, and the state is spent once (spent-tokens/) against a replay.
 */
export interface Flow {
  connectionId: string;
  state: string;
  nonce: string;
  codeVerifier: string;
  /** The client the sign-in is for (the hosted client for the hosted pages). */
  clientId: string;
  /** The hosted pages: the pending authorization request. */
  requestId?: string;
  returnTo: string;
  pageState: string;
  codeChallenge: string;
  /**
   * The hosted pages: the page's device key, registered when the sign-in finishes (sign-in/finish.ts,
   * as after the emailed code), which the hosted SSO session is bound to. Sealed in the flow, so
   * only the browser that started the sign-in brings it, once.
   */
  device?: PendingDevice;
  /** An application's page: it finishes the sign-in with its own key (DEVICE_KEY_NEEDED, continue.ts). */
  rememberDevice?: true;
  expiresAt: number;
}

/** `device_key` of the start: the page's P-256 public key as base64url JSON (a JWK), with the browser it was made in. */
export function deviceOf(deviceKey: string, userAgent: string | undefined): PendingDevice {
  let jwk: DevicePublicJwk | undefined;
  try {
    const parsed = JSON.parse(Buffer.from(deviceKey, 'base64url').toString('utf8'));
    if (parsed && typeof parsed === 'object')
      jwk = { kty: String(parsed.kty), crv: String(parsed.crv), x: String(parsed.x), y: String(parsed.y) } as DevicePublicJwk;
  } catch {
    jwk = undefined;
  }
  if (!jwk) throw new ServiceError('ERR_DEVICE_KEY_INVALID', 'device_key must be a P-256 public key (a JWK, base64url JSON).');
  return pendingDevice(jwk, userAgent);
}

/** A page's P-256 public key (checked on the curve) as the device its sign-in registers. */
export function pendingDevice(jwk: DevicePublicJwk, userAgent: string | undefined): PendingDevice {
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || !isValidDevicePublicKey(jwk))
    throw new ServiceError('ERR_DEVICE_KEY_INVALID', 'The device key must be a P-256 public key.');
  return { publicJwk: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y }, cryptoVersion: 'v1', ...describeUserAgent(userAgent) };
}

export const random = () => randomBytes(32).toString('base64url');

export const sealFlow = (sealer: Sealer, flow: Flow) => sealer.seal(JSON.stringify(flow));

export function openFlow(sealer: Sealer, value: string | undefined, now: number): Flow | undefined {
  if (!value || value.length > 4096) return undefined;
  try {
    const flow = JSON.parse(sealer.open(value)) as Flow;
    return typeof flow.state === 'string' && flow.expiresAt > now ? flow : undefined;
  } catch {
    return undefined;
  }
}
