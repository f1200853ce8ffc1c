/**
 * The proof of work the service may ask before it sends a code (CHALLENGE_REQUIRED): an ALTCHA
 * v2 challenge over SHA-256, solved here with crypto.subtle (no dependency). The service drew
 * the counter, so the search is bounded: a few tens of thousands of hashes.
 */
import type { CaptchaChallenge, SendChallenge } from 'service-protocol';
import { base64urlJson } from './base64url.js';

/** The search stops here: the service's counters are far below, so a challenge past it is not one of its own. */
const MAX_COUNTER = 10_000_000;

const hexOf = (bytes: Uint8Array): string => Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');

function bytesOf(hex: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^(?:[0-9a-f]{2})+$/i.test(hex)) return undefined;
  return Uint8Array.from(hex.match(/../g) ?? [], (pair) => Number.parseInt(pair, 16));
}

/**
 * Solves a CHALLENGE_REQUIRED result's proof of work (`kind` 'pow'). Resolves with the solution to pass, as
 * `challengeSolution`, to the same operation retried (authenticate, verifyDevice, initiateMfa);
 * undefined when the challenge is malformed, has no solution, or is a CAPTCHA (its widget's
 * token is the solution). Never throws.
 *
 * @example
 * ```ts
 * let r = await ServiceInitializer.authenticate(userid);
 * if (r.status === 'CHALLENGE_REQUIRED' && r.challenge) {
 *   const challengeSolution = await solveChallenge(r.challenge);
 *   if (challengeSolution) r = await ServiceInitializer.authenticate(userid, { challengeSolution });
 * }
 * ```
 */
export async function solveChallenge(challenge: SendChallenge | CaptchaChallenge): Promise<string | undefined> {
  try {
    if (!('parameters' in challenge)) return undefined;
    const { algorithm, cost, keyLength, keyPrefix, nonce, salt } = challenge.parameters;
    const nonceBytes = bytesOf(nonce);
    const saltBytes = bytesOf(salt);
    const prefix = bytesOf(keyPrefix);
    if (algorithm !== 'SHA-256' || !nonceBytes || !saltBytes || !prefix || !(cost >= 1)) return undefined;
    // salt ‖ nonce ‖ counter (4 bytes, big-endian): the counter is rewritten in place.
    const input = new Uint8Array(saltBytes.length + nonceBytes.length + 4);
    input.set(saltBytes);
    input.set(nonceBytes, saltBytes.length);
    const counterView = new DataView(input.buffer, saltBytes.length + nonceBytes.length);
    for (let counter = 0; counter <= MAX_COUNTER; counter++) {
      counterView.setUint32(0, counter);
      let key = new Uint8Array(await crypto.subtle.digest('SHA-256', input));
      for (let round = 1; round < cost; round++) key = new Uint8Array(await crypto.subtle.digest('SHA-256', key));
      if (prefix.every((byte, index) => key[index] === byte)) {
        return base64urlJson({ challenge, solution: { counter, derivedKey: hexOf(key.subarray(0, keyLength)) } });
      }
    }
    return undefined;
  } catch {
    return undefined;
  }
}
