/**
 * service-web/devices: the user's trusted devices for this application (list, rename, revoke,
 * "sign out everywhere else"), from a browser that is one of them. In its own entry point so
 * that the core stays within its size budget; initialize it with the same key and base URL as
 * the core client, whose device key it uses. Same conventions: no method throws, every result
 * has a `status`.
 *
 * @example
 * ```ts
 * import { ServiceDevices } from 'service-web/devices';
 * const devices = new ServiceDevices();
 * await devices.init('pk_...', 'https://id.example.com');
 * const r = await devices.listDevices('ann@example.com');
 * if (r.status === 'SUCCESS') render(r.devices);
 * ```
 *
 * @packageDocumentation
 */
export { ServiceDevices } from './devices/client.js';
export type { DeviceChangeResult, DeviceInfo, FailureResult, InitializationResult, ListDevicesResult } from './types.js';
