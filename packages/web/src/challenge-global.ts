/**
 * Entry of dist/service-web-challenge.global.js: service-web/challenge for a <script> tag, as
 * `window.ServiceWebChallenge`, beside the core script (window.ServiceWeb), which it does not include.
 */
import { solveChallenge } from './challenge.js';

const api = { solveChallenge };

/** Shape of `window.ServiceWebChallenge`. */
export type ServiceWebChallengeGlobal = typeof api;

declare global {
  // `var` is what makes a declaration a property of globalThis.
  var ServiceWebChallenge: ServiceWebChallengeGlobal;
}

globalThis.ServiceWebChallenge = api;
