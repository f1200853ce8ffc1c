import type { CodeService } from '../authorization-codes/service.js';
import type { AuthCode } from '../authorization-codes/store.js';
import type { ClientRecord } from '../clients/store.js';
import { randomToken } from '../crypto/secrets.js';
import type { PendingDevice } from '../devices/pending.js';
import type { DeviceStore } from '../devices/store.js';
import type { EventLog } from '../events/service.js';
import type { NewEvent } from '../events/store.js';
import type { EventType } from '../events/types.js';

/** Everything a finished sign-in needs; built by a first factor, finished here or after MFA. */
export interface SignIn {
  clientId: string;
  userId: string;
  /** The remembered device that signed in, a device key to register now, or none. */
  device: { id: string } | PendingDevice | null;
  codeChallenge: string | null;
  /** Factors passed so far, RFC 8176 values plus our MFA method names. */
  amr: string[];
  authTime: number;
}

/** The sign-in of a user acting on their own account (a factor change, a proof): no device, no code, nothing passed yet. */
export const ownAccountSignIn = (clientId: string, userId: string, at: number): SignIn => ({
  clientId,
  userId,
  device: null,
  codeChallenge: null,
  amr: [],
  authTime: Math.floor(at / 1000),
});

export interface FinishedSignIn {
  code: string;
  /** Set when this sign-in registered a device key. */
  deviceId?: string;
}

/** What a finished sign-in writes: its authorization code and its `sign_in.succeeded` event. */
export function signInRecords(
  signIn: SignIn,
  deviceId: string | null,
  /** At the hosted sign-in: the application it served (the account page names it; the event's client stays the hosted one). */
  app?: { id: string },
): { code: AuthCode; event: NewEvent & { type: EventType } } {
  return {
    code: {
      clientId: signIn.clientId,
      userId: signIn.userId,
      codeChallenge: signIn.codeChallenge,
      amr: signIn.amr,
      authTime: signIn.authTime,
      deviceId,
    },
    event: {
      type: 'sign_in.succeeded',
      userId: signIn.userId,
      clientId: signIn.clientId,
      deviceId,
      detail: app ? { amr: signIn.amr.join(' '), app: app.id } : { amr: signIn.amr.join(' ') },
    },
  };
}

/** `client`: the client the request acted for (its `app` names the application for the new-device mail). */
export type FinishSignIn = (signIn: SignIn, client?: NoticeClient) => Promise<FinishedSignIn>;

/** What the new-device mail needs of the client: the application it names (clients/store.ts appOf). */
export type NoticeClient = Pick<ClientRecord, 'id' | 'name' | 'app'>;

/** The last step of every sign-in: register a pending device key, then issue the authorization code. */
export function createSignInFinisher({
  devices,
  codes,
  events,
  now,
  onNewDevice,
}: {
  devices: DeviceStore;
  codes: CodeService;
  events: EventLog;
  now: () => number;
  /** Told of every device registered (the new-device mail); must not throw. */
  onNewDevice: (
    device: { id: string; userId: string; clientId: string; createdAt: number } & PendingDevice,
    client: NoticeClient | undefined,
  ) => Promise<void>;
}): FinishSignIn {
  return async function finish(signIn: SignIn, client?: NoticeClient): Promise<FinishedSignIn> {
    let deviceId: string | undefined;
    if (signIn.device && 'publicJwk' in signIn.device) {
      const pending = signIn.device;
      deviceId = pending.id ?? randomToken('dev_', 16);
      const device = { id: deviceId, userId: signIn.userId, clientId: signIn.clientId, createdAt: now(), ...pending };
      await devices.insert(
        {
          id: deviceId,
          userId: signIn.userId,
          clientId: signIn.clientId,
          publicJwk: pending.publicJwk,
          cryptoVersion: pending.cryptoVersion,
          browser: pending.browser ?? null,
          os: pending.os ?? null,
        },
        device.createdAt,
      );
      await onNewDevice(device, client);
    }
    const records = signInRecords(
      signIn,
      deviceId ?? (signIn.device && !('publicJwk' in signIn.device) ? signIn.device.id : null),
      client?.app,
    );
    // The event is written beside the code, not after it: no extra round trip on the sign-in path.
    const [code] = await Promise.all([codes.issue(records.code), events.record(records.event)]);
    return deviceId ? { code, deviceId } : { code };
  };
}
