/**
 * The device management operations (list, rename, revoke, revoke the others): each proven by
 * this browser's device key for its operation.
 */
import { type DeviceOp, DeviceOps, normalizeEmail } from 'service-protocol';
import { isEmail } from '../checks.js';
import { deviceProof, forgetDevice } from '../device-keys.js';
import { request } from '../http.js';
import { failure, invalidEmail, messageOf, withTyped } from '../results.js';
import type { Session } from '../session.js';
import type { DeviceChangeResult, DeviceInfo, FailureResult, ListDevicesResult } from '../types.js';

/**
 * One device operation, proven by this browser's device key for `op`. The service validates
 * ids and names (before spending the proof). A refused key is forgotten, and so is this
 * browser's own key when it revoked itself.
 */
export async function deviceOperation(
  session: Session,
  userid: unknown,
  path: string,
  op: DeviceOp,
  extra: { deviceId?: unknown; name?: unknown } = {},
): Promise<ListDevicesResult | DeviceChangeResult | FailureResult> {
  if (!isEmail(userid)) return invalidEmail();
  const email = normalizeEmail(userid);
  const proof = await deviceProof(session, email, op);
  if (proof?.status) return proof;
  if (!proof) return failure('DEVICE_KEY_UNAVAILABLE', 'This browser is not a remembered device for this user');
  const { body, failure: failed } = await request(session.http, path, {
    userid: email,
    cryptoVersion: session.cryptoVersion,
    deviceProof: proof.jws,
    ...extra,
  });
  if (failed ? failed.status === 'DEVICE_KEY_UNAVAILABLE' : extra.deviceId === proof.deviceId && op === DeviceOps.revoke) {
    await forgetDevice(session, email);
  }
  if (failed) return failed;
  const { devices } = body;
  return withTyped(
    { status: 'SUCCESS', message: messageOf(body), ...(Array.isArray(devices) && { devices: devices as DeviceInfo[] }) },
    body,
    'number',
    'revoked',
  );
}
