import { createChallenge, randomInt, verifySolution } from 'altcha-lib';
import { deriveKey } from 'altcha-lib/algorithms/sha';
import type { CaptchaChallenge, SendChallenge } from 'service-protocol';
import { type SecretHasher, safeEqual } from '../crypto/secrets.js';
import { SEND_CHALLENGE_COUNTER_MAX, SEND_CHALLENGE_COUNTER_MIN, SEND_CHALLENGE_TTL_SECONDS } from '../defaults.js';
import type { SpentTokenStore } from '../spent-tokens/store.js';
import type { Limit } from '../throttle/service.js';
import type { BudgetChannel } from './send-budgets.js';

/**
 * When a browser's request for a code must first solve a challenge: its address, its network,
 * or the whole service (per channel) asked for more codes than these (defaults.ts
 * SEND_CHALLENGE_AFTER_*, or SERVICE_IDP_CHALLENGE_*).
 */
export interface ChallengeThresholds {
  ip: readonly Limit[];
  subnet: readonly Limit[];
  service: Record<BudgetChannel, readonly Limit[]>;
}

/** What a challenge is bound to: the recipient a code goes to and the route that sends it. */
export interface ChallengeBinding {
  address: string;
  endpoint: string;
}

export interface SendChallenges {
  /** A fresh challenge for this binding: a proof of work, signed, expiring SEND_CHALLENGE_TTL_SECONDS from now; or the CAPTCHA's widget settings. */
  issue(binding: ChallengeBinding): Promise<SendChallenge | CaptchaChallenge>;
  /**
   * True once per solved challenge: the solution (CHALLENGE_SOLUTION_HEADER's value) is well
   * formed, signed by this service, unexpired, issued for this binding, right, and spent now
   * (atomically: a replay or a concurrent twin is refused).
   */
  redeem(solution: string | undefined, binding: ChallengeBinding): Promise<boolean>;
}

/** The longest header value taken: a challenge and its solution are a few hundred characters. */
const SOLUTION_MAX_LENGTH = 2000;

/**
 * The self-hosted proof of work a code send may demand (ALTCHA v2, SHA-256, deterministic: the
 * service draws the counter, so the work is bounded and the check is one hash). The challenge
 * is signed with `hmacKey` (derived from the server secret) and carries the keyed hash of its
 * binding, so it cannot be forged, moved to another address or endpoint, or used twice.
 */
export function createSendChallenges(deps: {
  hmacKey: string;
  hash: SecretHasher;
  spent: SpentTokenStore;
  now: () => number;
}): SendChallenges {
  const { hmacKey, hash, spent, now } = deps;
  const bindingOf = (binding: ChallengeBinding) => hash('send-challenge-binding', `${binding.endpoint}\n${binding.address}`);

  return {
    async issue(binding) {
      const challenge = await createChallenge({
        algorithm: 'SHA-256',
        cost: 1,
        counter: randomInt(SEND_CHALLENGE_COUNTER_MAX, SEND_CHALLENGE_COUNTER_MIN),
        deriveKey,
        expiresAt: Math.floor(now() / 1000) + SEND_CHALLENGE_TTL_SECONDS,
        data: { binding: bindingOf(binding) },
        hmacSignatureSecret: hmacKey,
      });
      return { kind: 'pow', ...challenge } as SendChallenge;
    },

    async redeem(solution, binding) {
      const payload = parsePayload(solution);
      if (!payload) return false;
      const { challenge } = payload;
      const expiresAt = challenge.parameters.expiresAt;
      // The service's clock decides expiry (altcha-lib checks the wall clock as well).
      if (typeof expiresAt !== 'number' || expiresAt * 1000 <= now()) return false;
      const result = await verifySolution({ challenge, solution: payload.solution, deriveKey, hmacSignatureSecret: hmacKey });
      if (!result.verified) return false;
      // Signed, so the binding is the service's own: compared only once the signature holds.
      const bound = challenge.parameters.data?.binding;
      if (typeof bound !== 'string' || !safeEqual(bound, bindingOf(binding))) return false;
      return spent.spend(
        { purpose: 'send-challenge', idHash: hash('send-challenge', challenge.signature as string), expiresAt: expiresAt * 1000 },
        now(),
      );
    },
  };
}

type Payload = {
  challenge: Parameters<typeof verifySolution>[0]['challenge'];
  solution: { counter: number; derivedKey: string };
};

/** base64url(JSON `{ challenge, solution }`), each part of the shape verifySolution reads; undefined for anything else. */
function parsePayload(text: string | undefined): Payload | undefined {
  if (!text || text.length > SOLUTION_MAX_LENGTH) return undefined;
  try {
    const value: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (!isRecord(value) || !isRecord(value.challenge) || !isRecord(value.solution)) return undefined;
    const { challenge, solution } = value;
    if (!isRecord(challenge.parameters) || typeof challenge.signature !== 'string') return undefined;
    const { algorithm, nonce, salt, keyPrefix, cost, keyLength } = challenge.parameters;
    // Only what this service issues: SHA-256 at cost 1 (a forged cheaper algorithm never reaches a KDF).
    if (algorithm !== 'SHA-256' || cost !== 1 || keyLength !== 32) return undefined;
    if (![nonce, salt, keyPrefix].every((hex) => typeof hex === 'string' && /^[0-9a-f]{2,64}$/.test(hex))) return undefined;
    if (typeof solution.counter !== 'number' || typeof solution.derivedKey !== 'string') return undefined;
    return {
      challenge: challenge as unknown as Payload['challenge'],
      solution: { counter: solution.counter, derivedKey: solution.derivedKey },
    };
  } catch {
    return undefined;
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
