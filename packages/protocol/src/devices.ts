/**
 * Device management from the browser: list, rename, revoke, revoke all others. Every request
 * carries a fresh device proof (device-proof.ts) whose payload names the operation in `op`, so a
 * proof made for one operation (or for a login) is refused by another.
 */

/** `op` claim of the device proof for each operation. */
export const DeviceOps = {
  list: 'devices.list',
  rename: 'devices.rename',
  revoke: 'devices.revoke',
  revokeOthers: 'devices.revoke-others',
} as const;
export type DeviceOp = (typeof DeviceOps)[keyof typeof DeviceOps];

/** Device ids are `dev_` and 22 base64url characters (128 random bits). */
export const DEVICE_ID_PATTERN = /^dev_[A-Za-z0-9_-]{22}$/;
/** Longest device name, in characters. */
export const DEVICE_NAME_MAX_LENGTH = 64;
/** Control characters, and the bidirectional overrides that can disguise a name (Trojan Source). */
const UNSAFE_NAME_CHARACTERS = /[\p{Cc}\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

/** A device name is 1 to 64 characters after trimming, without control or bidi characters. */
export function isValidDeviceName(name: unknown): name is string {
  return (
    typeof name === 'string' && name.trim().length > 0 && name.trim().length <= DEVICE_NAME_MAX_LENGTH && !UNSAFE_NAME_CHARACTERS.test(name)
  );
}

/** Fields every device request carries. */
export interface DeviceRequestBase {
  userid: string;
  cryptoVersion: string;
  /** Compact JWS by the calling device, with `op` set to the operation's DeviceOps value. */
  deviceProof: string;
}

/** One device as the list shows it. Times are Unix epoch milliseconds. */
export interface DeviceInfo {
  id: string;
  /** The name the user gave it, or one made from browser and OS ("Chrome on macOS"). */
  name: string;
  /** Browser and major version from the User-Agent at registration, e.g. "Chrome 131"; "" when unknown. */
  browser: string;
  /** Operating system from the User-Agent at registration, e.g. "macOS 14.5"; "" when unknown. */
  os: string;
  createdAt: number;
  lastUsedAt: number | null;
  /** True for the device that made the request. */
  current: boolean;
  /** 'browser': a remembered browser's device key; 'passkey': a WebAuthn passkey (passkeys.ts). */
  kind: 'browser' | 'passkey';
  /**
   * Passkeys only: the authenticator's backup state (WebAuthn BS flag) at the last use, true when
   * the passkey is synced to the user's other devices (a password manager or platform account).
   */
  synced?: boolean;
}

/** POST /v1/devices/list */
export interface ListDevicesResponse {
  status: 'SUCCESS';
  message: string;
  devices: DeviceInfo[];
}

/** POST /v1/devices/rename: DeviceRequestBase & { deviceId, name } */
export interface RenameDeviceRequest extends DeviceRequestBase {
  deviceId: string;
  name: string;
}

/** POST /v1/devices/revoke: DeviceRequestBase & { deviceId } */
export interface RevokeDeviceRequest extends DeviceRequestBase {
  deviceId: string;
}

/** Answer of rename, revoke and revoke-others; `revoked` counts the devices revoked. */
export interface DeviceChangeResponse {
  status: 'SUCCESS';
  message: string;
  revoked?: number;
}
