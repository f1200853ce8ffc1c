/**
 * Entry of the single-file script (dist/service-web.global.js, served at /sdk/v1/service-web.js):
 * exposes the library as `window.ServiceWeb` for pages without a bundler.
 */
import {
  createPkcePair,
  MfaMethod,
  pkceChallengeFromVerifier,
  ServiceClient,
  ServiceInitializer,
  Status,
  solveChallenge,
} from './index.js';

const api = { ServiceInitializer, ServiceClient, createPkcePair, pkceChallengeFromVerifier, solveChallenge, Status, MfaMethod };

/** Shape of `window.ServiceWeb`. */
export type ServiceWebGlobal = typeof api;

declare global {
  // `var` is what makes a declaration a property of globalThis.
  var ServiceWeb: ServiceWebGlobal;
}

globalThis.ServiceWeb = api;
