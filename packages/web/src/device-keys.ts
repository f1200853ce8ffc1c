/**
 * This browser's device key for a session's service, client and user: the IndexedDB record
 * (device-store.ts) read, kept and forgotten, and the proofs it signs over a fresh challenge.
 */
import { BrowserPaths, type DeviceOp } from 'service-protocol';
import { isNonEmptyString } from './checks.js';
import { createDeviceProof, type NewDeviceKey } from './device-proof.js';
import { createDeviceStore, type DeviceRecord, type DeviceStore, deviceRecordKey } from './device-store.js';
import { request } from './http.js';
import { reasonOf } from './results.js';
import type { Session } from './session.js';
import type { FailureResult } from './types.js';

/** A device proof signed for one request (`status` only tells it from a FailureResult). */
export interface Proof {
  jws: string;
  deviceId: string;
  status?: undefined;
}

/** Failures of the challenge step that make the authenticate call pointless too. */
const FATAL_CHALLENGE_STATUSES: readonly string[] = ['NETWORK_ERROR', 'TIMEOUT', 'RATE_LIMITED', 'ACCOUNT_LOCKED', 'INVALID_API_KEY'];

type Deps = Session['deps'];

export function cryptoOf(deps: Deps): Crypto | undefined {
  return deps.crypto ?? globalThis.crypto;
}

function storeOf(session: Session): DeviceStore | undefined {
  const factory = session.deps.indexedDB ?? (globalThis as { indexedDB?: IDBFactory }).indexedDB;
  return factory ? createDeviceStore(factory, session.http.timeoutMs) : undefined;
}

const recordKey = (session: Session, email: string) => deviceRecordKey(session.http.baseUrl, session.clientId, email);

/** Drops the user's stored key (the service refused it, or it revoked this device); never fails. */
export async function forgetDevice(session: Session, email: string): Promise<void> {
  await storeOf(session)
    ?.delete(recordKey(session, email))
    .catch(() => {});
}

/** The user's stored device record, if any (rejects when IndexedDB fails). */
export async function deviceRecord(session: Session, email: string): Promise<DeviceRecord | undefined> {
  return storeOf(session)?.get(recordKey(session, email));
}

/**
 * Signs a fresh service challenge with the remembered key, if there is one: the proof, a
 * failure that ends the operation, or undefined. Any local problem (no IndexedDB, no record,
 * WebCrypto failure) means "no proof": the OTP path follows.
 */
export async function deviceProof(session: Session, email: string, op?: DeviceOp): Promise<Proof | FailureResult | undefined> {
  const crypto = cryptoOf(session.deps);
  try {
    const record = await deviceRecord(session, email);
    if (!record || !crypto?.subtle) return;
    const { body, failure: failed } = await request(session.http, BrowserPaths.deviceChallenge, {});
    if (failed) return FATAL_CHALLENGE_STATUSES.includes(failed.status) ? failed : undefined;
    const nonce = body.challenge;
    if (!isNonEmptyString(nonce)) return;
    const { deviceId } = record;
    const jws = await createDeviceProof(crypto, record.keyPair.privateKey, {
      deviceId,
      cryptoVersion: session.cryptoVersion,
      sub: email,
      nonce,
      op,
    });
    return { jws, deviceId };
  } catch {
    return;
  }
}

/**
 * Ends a device registration the service accepted: stores the key pair under the `deviceId`
 * the service gave it. A stored record the service refused earlier (`stale`) is dropped if not replaced.
 */
export async function keepDeviceKey(
  session: Session,
  email: string,
  stale: boolean | undefined,
  deviceKey: NewDeviceKey | undefined,
  deviceId: unknown,
): Promise<{ deviceRemembered: boolean; problem: string | undefined }> {
  let problem = deviceKey?.problem;
  let deviceRemembered = false;
  const keyPair = deviceKey?.keyPair;
  if (keyPair) {
    try {
      const store = storeOf(session);
      if (!isNonEmptyString(deviceId)) throw new Error('the service registered no device key');
      if (!store) throw new Error('no IndexedDB');
      await store.put(recordKey(session, email), { deviceId, keyPair, cryptoVersion: session.cryptoVersion, createdAt: Date.now() });
      deviceRemembered = true;
    } catch (error) {
      problem = reasonOf(error);
    }
  }
  // The service no longer accepts the stored key; drop it so later logins skip the proof step.
  if (!deviceRemembered && stale) await forgetDevice(session, email);
  return { deviceRemembered, problem };
}
