import type { AccountStore, User } from '../accounts/store.js';
import type { ClientRecord } from '../clients/store.js';
import type { SecretHasher } from '../crypto/secrets.js';
import { DEVICE_CHALLENGE_TTL_SECONDS, DEVICE_LAST_USED_RESOLUTION_SECONDS } from '../defaults.js';
import { createChallengeCodec } from './challenge.js';
import { verifyDeviceProof } from './proof.js';
import type { DeviceStore } from './store.js';

export interface DeviceProverDeps {
  devices: DeviceStore;
  accounts: AccountStore;
  hash: SecretHasher;
  now: () => number;
  /** A device unused for this long is no longer trusted (DEVICE_IDLE_EXPIRY_DAYS). */
  idleMs: number;
}

/**
 * Possession of a remembered device's key, checked for a login or a device operation: the
 * proof verifies with the stored key of a trusted (not revoked, not expired) device of this
 * client, names the device's user, carries the expected `op`, and spends a live challenge the
 * service issued to this client. Anything else yields undefined.
 */
export function createDeviceProver({ devices, accounts, hash, now, idleMs }: DeviceProverDeps) {
  const challenges = createChallengeCodec(hash);

  return {
    /** A single-use challenge for a remembered device to sign. */
    issueChallenge(client: ClientRecord): { challenge: string; expiresIn: number } {
      return {
        challenge: challenges.issue(client.id, now() + DEVICE_CHALLENGE_TTL_SECONDS * 1000),
        expiresIn: DEVICE_CHALLENGE_TTL_SECONDS,
      };
    },

    async prove(
      client: ClientRecord,
      email: string,
      proof: string,
      cryptoVersion: string,
      op?: string,
    ): Promise<{ user: User; deviceId: string } | undefined> {
      // The revoked and expired checks are part of this read, so they hold on every node at once.
      const verified = await verifyDeviceProof(proof, cryptoVersion, (kid) => devices.findActive(kid, now() - idleMs));
      if (!verified || verified.payload.sub !== email || verified.device.clientId !== client.id) return undefined;
      if (verified.payload.op !== op) return undefined;
      const user = await accounts.findById(verified.device.userId);
      if (!user || user.email !== email) return undefined;
      // The challenge is spent last, after everything else matched, and only once.
      const expiresAt = challenges.check(verified.payload.nonce, client.id, now());
      if (expiresAt === undefined) return undefined;
      if (!(await devices.spendChallenge(hash('device-challenge', verified.payload.nonce), client.id, expiresAt, now()))) return undefined;
      // Written at most once a minute: enough for the idle expiry, which counts in days.
      const lastUsed = verified.device.lastUsedAt ?? 0;
      if (now() - lastUsed >= DEVICE_LAST_USED_RESOLUTION_SECONDS * 1000) await devices.touch(verified.device.id, now());
      return { user, deviceId: verified.device.id };
    },
  };
}

export type DeviceProver = ReturnType<typeof createDeviceProver>;
