import type { SecretHasher } from '../../crypto/secrets.js';
import { createSignedTokens } from '../../crypto/signed-token.js';

export interface ChallengeCodec {
  issue(clientId: string, expiresAt: number): string;
  /** The challenge's expiry when it was issued to this client and is still live. */
  check(challenge: string, clientId: string, now: number): number | undefined;
}

/**
 * Device challenges are stateless signed tokens (crypto/signed-token.ts): `expiry.nonce.mac`,
 * nothing visible, the MAC binding the client they were issued to. Issuing one writes nothing,
 * so an anonymous caller cannot fill the database; only a challenge spent by a valid device
 * proof is recorded (spent-tokens/, purpose `device-challenge`), to refuse its replay.
 */
export function createChallengeCodec(hash: SecretHasher): ChallengeCodec {
  const tokens = createSignedTokens(hash, { purpose: 'device-challenge', visibleFields: 0, maxLength: 128 });
  return {
    issue(clientId: string, expiresAt: number): string {
      return tokens.issue({ visible: [], bound: [clientId] }, expiresAt);
    },

    check(challenge: string, clientId: string, now: number): number | undefined {
      const checked = tokens.check(challenge, [clientId], now);
      return checked.ok ? checked.expiresAt : undefined;
    },
  };
}
