import type { ClientRecord } from '../../clients/store.js';
import type { SecretHasher } from '../../crypto/secrets.js';
import { DEVICE_CHALLENGE_TTL_SECONDS, DEVICE_LAST_USED_RESOLUTION_SECONDS } from '../../defaults.js';
import type { DeviceKeyProver } from '../../devices/service.js';
import type { Device, DeviceStore } from '../../devices/store.js';
import type { SpentToken, SpentTokenStore } from '../../spent-tokens/store.js';
import type { EnabledUserStore, User } from '../../users/enabled-store.js';
import { createChallengeCodec } from './challenge.js';
import { verifyDeviceProof } from './proof.js';

export interface DeviceProverDeps {
  devices: DeviceStore;
  spent: SpentTokenStore;
  enabledUsers: EnabledUserStore;
  hash: SecretHasher;
  now: () => number;
  /** A device unused for this long is no longer trusted (DEVICE_IDLE_EXPIRY_DAYS). */
  idleMs: number;
}

/** A proof that checked out, and the writes that make it count: spend its challenge, maybe stamp the device used. */
export interface CheckedProof {
  user: User;
  deviceId: string;
  challenge: SpentToken;
  /** Written at most once a minute: enough for the idle expiry, which counts in days. */
  touch: boolean;
}

/** The device a proof names and its user, as a caller read them: trusted and enabled, or undefined. */
export interface ProofSubjects {
  device: Device | undefined;
  user: User | undefined;
}

/** The device key's prover; `prove` is the port device management calls (devices/service.ts). */
export interface DeviceProver extends DeviceKeyProver {
  /** A single-use challenge for a remembered device to sign. */
  issueChallenge(client: ClientRecord): {
    challenge: string;
    expiresIn: number;
  };
  /** The cut-off of the idle expiry: a device last used before it is no longer trusted. */
  usedSince: () => number;
  /**
   * prove() without its reads and writes, for the sign-in, which read the device and user with
   * the client in one statement and spends the challenge in the statement that issues its code
   * (factors/device-key/sign-in-store.ts). The caller must spend `challenge` and honour a failed spend as a refusal.
   */
  checkRead: (
    client: ClientRecord,
    email: string,
    proof: string,
    cryptoVersion: string,
    read: ProofSubjects,
  ) => Promise<CheckedProof | undefined>;
}

/**
 * Possession of a remembered device's key, checked for a sign-in or a device operation: the
 * proof verifies with the stored key of a trusted (not revoked, not expired) device of this
 * client, names the device's user, carries the expected `op`, and spends a live challenge the
 * service issued to this client. Anything else yields undefined.
 */
export function createDeviceProver({ devices, spent, enabledUsers, hash, now, idleMs }: DeviceProverDeps): DeviceProver {
  const challenges = createChallengeCodec(hash);

  /** Everything but the writes; `find` reads the device (revoked and expired excluded) and its user (disabled excluded). */
  async function check(
    client: ClientRecord,
    email: string,
    proof: string,
    cryptoVersion: string,
    op: string | undefined,
    find: { device: (kid: string) => Promise<Device | undefined>; user: (id: string) => Promise<User | undefined> },
  ): Promise<CheckedProof | undefined> {
    const verified = await verifyDeviceProof(proof, cryptoVersion, find.device);
    if (!verified || verified.payload.sub !== email || verified.device.clientId !== client.id) return undefined;
    if (verified.payload.op !== op) return undefined;
    const user = await find.user(verified.device.userId);
    if (!user || user.email !== email) return undefined;
    const expiresAt = challenges.check(verified.payload.nonce, client.id, now());
    if (expiresAt === undefined) return undefined;
    return {
      user,
      deviceId: verified.device.id,
      challenge: { purpose: 'device-challenge', idHash: hash('device-challenge', verified.payload.nonce), expiresAt },
      touch: now() - (verified.device.lastUsedAt ?? 0) >= DEVICE_LAST_USED_RESOLUTION_SECONDS * 1000,
    };
  }

  return {
    issueChallenge(client: ClientRecord): { challenge: string; expiresIn: number } {
      return {
        challenge: challenges.issue(client.id, now() + DEVICE_CHALLENGE_TTL_SECONDS * 1000),
        expiresIn: DEVICE_CHALLENGE_TTL_SECONDS,
      };
    },

    usedSince: () => now() - idleMs,

    async prove(
      client: ClientRecord,
      email: string,
      proof: string,
      cryptoVersion: string,
      op?: string,
    ): Promise<{ user: User; deviceId: string } | undefined> {
      // The revoked and expired checks are part of this read, so they hold on every node at once.
      const checked = await check(client, email, proof, cryptoVersion, op, {
        device: (kid) => devices.findActive(kid, now() - idleMs),
        user: (id) => enabledUsers.findById(id),
      });
      // The challenge is spent last, after everything else matched, and only once.
      if (!checked || !(await spent.spend(checked.challenge, now()))) return undefined;
      if (checked.touch) await devices.touch(checked.deviceId, now());
      return { user: checked.user, deviceId: checked.deviceId };
    },

    checkRead: (client: ClientRecord, email: string, proof: string, cryptoVersion: string, read: ProofSubjects) =>
      check(client, email, proof, cryptoVersion, undefined, {
        device: async (kid) => (read.device?.id === kid ? read.device : undefined),
        user: async (id) => (read.user?.id === id ? read.user : undefined),
      }),
  };
}
