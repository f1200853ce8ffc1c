/**
 * Entry of dist/service-web-dpop.global.js: service-web/dpop for a <script> tag, as
 * `window.ServiceWebDpop`, beside the core script (window.ServiceWeb), which it does not include.
 */
import { ServiceDpop } from './dpop.js';

const api = { ServiceDpop };

/** Shape of `window.ServiceWebDpop`. */
export type ServiceWebDpopGlobal = typeof api;

declare global {
  // `var` is what makes a declaration a property of globalThis.
  var ServiceWebDpop: ServiceWebDpopGlobal;
}

globalThis.ServiceWebDpop = api;
