import type { DeviceInfo } from 'service-protocol';
import type { ClientRecord } from '../clients/store.js';
import { ServiceError } from '../errors.js';
import type { EventLog } from '../events/service.js';
import type { DeviceRow, DeviceStore } from './store.js';
import { defaultDeviceName } from './user-agent.js';

/**
 * The user's passkeys as the device list sees them: a port that factors/passkey/store.ts fills, so the
 * device list names passkeys without importing the passkey wing (which builds on devices/).
 */
export interface PasskeyDevices {
  list(scope: {
    clientId: string;
    userId: string;
  }): Promise<Array<{ id: string; name: string; createdAt: number; lastUsedAt: number | null; backedUp: boolean }>>;
  rename(scope: { clientId: string; userId: string }, id: string, name: string): Promise<boolean>;
  revoke(scope: { clientId: string; userId: string }, id: string, now: number): Promise<boolean>;
}

/**
 * Possession of a remembered device's key, proven for one operation: a port that the device-key
 * factor fills (factors/device-key/prover.ts), so device management does not import the factor
 * (which builds on devices/store.ts).
 */
export interface DeviceKeyProver {
  prove(
    client: ClientRecord,
    email: string,
    proof: string,
    cryptoVersion: string,
    op?: string,
  ): Promise<{ user: { id: string }; deviceId: string } | undefined>;
}

/**
 * Ends hosted SSO sessions and tells their apps (oidc/store.ts endSessions: a back-channel
 * logout token each): a port that oidc/ fills, so devices/ and users/ do not import it.
 */
export interface SessionEnder {
  /** The user's sessions a passkey opened ("sign out everywhere else"); how many. */
  endPasskeySessions(userId: string): Promise<number>;
  /** The user's sessions whose device or passkey is revoked (after a revocation); how many. */
  endUnbound(userId: string): Promise<number>;
  /** Every session of the user (disabled, deleted); how many. */
  endAll(userId: string): Promise<number>;
}

export interface DeviceServiceDeps {
  store: DeviceStore;
  prover: DeviceKeyProver;
  events: EventLog;
  now: () => number;
  /** A device unused for this long is no longer trusted (DEVICE_IDLE_EXPIRY_DAYS). */
  idleMs: number;
  /** The user's passkeys (factors/passkey/), listed, renamed and revoked with the devices. */
  passkeys?: PasskeyDevices;
  /** After a passkey is revoked (factors/passkey/fallback.ts: the last passkey of a passkey-MFA user falls back to email MFA). */
  onPasskeyRevoked?: (userId: string, client: { clientId: string }) => Promise<unknown>;
  /** Ends the user's hosted SSO sessions a revocation unbinds, or that a passkey opened (oidc/store.ts). */
  sessions?: SessionEnder;
}

export interface DeviceCaller {
  client: ClientRecord;
  email: string;
  cryptoVersion: string;
  deviceProof: string;
}

export interface DeviceService {
  authorize: (
    caller: DeviceCaller,
    op: string,
  ) => Promise<{
    userId: string;
    deviceId: string;
  }>;
  list(clientId: string, userId: string, currentId?: string): Promise<DeviceInfo[]>;
  rename(clientId: string, userId: string, deviceId: string, name: string): Promise<void>;
  /** Revokes a remembered browser or a passkey (both have `dev_` ids): it no longer signs in, from the next request on. */
  revoke(clientId: string, userId: string, deviceId: string): Promise<void>;
  /**
   * Revokes every device of the user for this client except `keepId`; returns how many. The
   * user's hosted SSO sessions opened by a passkey end too (those opened by a remembered
   * browser end with it): passkeys stay registered, but no browser stays signed in by one.
   */
  revokeAll(clientId: string, userId: string, keepId?: string): Promise<number>;
}

/**
 * The devices a user holds for one client: list, rename, revoke, revoke all others. From the
 * browser, each call is authenticated by a fresh proof of one of those devices, made for that
 * operation; from the client's backend (delegation), by the client's signed envelope.
 */
export function createDeviceService({
  store,
  prover,
  events,
  now,
  idleMs,
  passkeys,
  onPasskeyRevoked,
  sessions,
}: DeviceServiceDeps): DeviceService {
  const scope = (clientId: string, userId: string) => ({ clientId, userId, usedSince: now() - idleMs });

  /** The caller's user and device, or ERR_DEVICE_UNTRUSTED (the browser drops its key). */
  async function authorize(caller: DeviceCaller, op: string) {
    const proven = await prover.prove(caller.client, caller.email, caller.deviceProof, caller.cryptoVersion, op);
    if (!proven) {
      throw new ServiceError('ERR_DEVICE_UNTRUSTED', 'This browser is not a trusted device (any more). Sign in again to trust it.');
    }
    return { userId: proven.user.id, deviceId: proven.deviceId };
  }

  const notFound = () => new ServiceError('ERR_DEVICE_NOT_FOUND', 'No such device among your devices.');

  return {
    authorize,

    async list(clientId: string, userId: string, currentId?: string): Promise<DeviceInfo[]> {
      const [rows, keys] = await Promise.all([store.list(scope(clientId, userId)), passkeys?.list({ clientId, userId }) ?? []]);
      const browsers = rows.map(
        (row: DeviceRow): DeviceInfo => ({
          id: row.id,
          name: row.name ?? defaultDeviceName(row.browser, row.os),
          browser: row.browser ?? '',
          os: row.os ?? '',
          createdAt: row.createdAt,
          lastUsedAt: row.lastUsedAt,
          current: row.id === currentId,
          kind: 'browser',
        }),
      );
      const passkeyInfos = keys.map(
        (key): DeviceInfo => ({
          id: key.id,
          name: key.name,
          browser: '',
          os: '',
          createdAt: key.createdAt,
          lastUsedAt: key.lastUsedAt,
          current: false,
          kind: 'passkey',
          synced: key.backedUp,
        }),
      );
      return [...browsers, ...passkeyInfos].sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? -1 : 1));
    },

    async rename(clientId: string, userId: string, deviceId: string, name: string): Promise<void> {
      if (await store.rename(scope(clientId, userId), deviceId, name.trim())) return;
      if (!(await passkeys?.rename({ clientId, userId }, deviceId, name.trim()))) throw notFound();
    },

    async revoke(clientId: string, userId: string, deviceId: string): Promise<void> {
      if (await store.revoke(scope(clientId, userId), deviceId, now())) {
        await events.record({ type: 'device.revoked', userId, clientId, deviceId });
        await sessions?.endUnbound(userId);
        return;
      }
      if (!(await passkeys?.revoke({ clientId, userId }, deviceId, now()))) throw notFound();
      await events.record({ type: 'passkey.revoked', userId, clientId, deviceId });
      await sessions?.endUnbound(userId);
      await onPasskeyRevoked?.(userId, { clientId });
    },

    async revokeAll(clientId: string, userId: string, keepId?: string): Promise<number> {
      const at = now();
      const count = await store.revokeAll(scope(clientId, userId), at, keepId);
      // The sessions of the browsers just revoked, then those of passkeys (which stay registered).
      const [unbound, passkeySessions] = sessions ? [await sessions.endUnbound(userId), await sessions.endPasskeySessions(userId)] : [0, 0];
      if (count > 0 || passkeySessions > 0) {
        await events.record({
          type: 'device.revoked',
          userId,
          clientId,
          detail: { count, kept: keepId ?? 'none', passkeySessions, ...(unbound > 0 ? { sessions: unbound } : {}) },
        });
      }
      return count;
    },
  };
}
