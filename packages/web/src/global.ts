/**
 * Entry of the single-file script (dist/service-web.global.js, served at /sdk/v1/service-web.js):
 * exposes the library as `window.ServiceWeb` for pages without a bundler.
 */
import { createPkcePair, MfaMethod, pkceChallengeFromVerifier, ServiceClient, ServiceInitializer, Status } from './index.js';

// The send challenge's solver and device management are scripts of their own (challenge-global.ts, window.ServiceWebChallenge;
// devices-global.ts, window.ServiceWebDevices), outside the core's size target.
const api = { ServiceInitializer, ServiceClient, createPkcePair, pkceChallengeFromVerifier, Status, MfaMethod };

/** Shape of `window.ServiceWeb`. */
export type ServiceWebGlobal = typeof api;

declare global {
  // `var` is what makes a declaration a property of globalThis.
  var ServiceWeb: ServiceWebGlobal;
}

globalThis.ServiceWeb = api;
