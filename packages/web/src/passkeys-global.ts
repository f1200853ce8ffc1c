/**
 * Entry of dist/service-web-passkeys.global.js: service-web/passkeys for a <script> tag, as
 * `window.ServiceWebPasskeys`, beside the core script (window.ServiceWeb), which it does not include.
 */
import { PasskeyStatus, ServicePasskeys } from './passkeys.js';

const api = { ServicePasskeys, PasskeyStatus };

/** Shape of `window.ServiceWebPasskeys`. */
export type ServiceWebPasskeysGlobal = typeof api;

declare global {
  // `var` is what makes a declaration a property of globalThis.
  var ServiceWebPasskeys: ServiceWebPasskeysGlobal;
}

globalThis.ServiceWebPasskeys = api;
