/**
 * Entry of dist/service-web-devices.global.js: service-web/devices for a <script> tag, as
 * `window.ServiceWebDevices`, beside the core script (window.ServiceWeb), which it does not include.
 */
import { ServiceDevices } from './devices.js';

const api = { ServiceDevices };

/** Shape of `window.ServiceWebDevices`. */
export type ServiceWebDevicesGlobal = typeof api;

declare global {
  // `var` is what makes a declaration a property of globalThis.
  var ServiceWebDevices: ServiceWebDevicesGlobal;
}

globalThis.ServiceWebDevices = api;
