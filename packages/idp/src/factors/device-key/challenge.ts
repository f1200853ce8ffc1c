import { randomToken, type SecretHasher, safeEqual } from '../../crypto/secrets.js';

/**
 * Device challenges are stateless: `expiry.nonce.mac`, where the MAC (HMAC under the server
 * secret) binds the nonce to the client and the expiry. Issuing one writes nothing, so an
 * anonymous caller cannot fill the database; only a nonce spent by a valid device proof is
 * recorded, to refuse its replay.
 */
export function createChallengeCodec(hash: SecretHasher) {
  const mac = (clientId: string, expiry: string, nonce: string) => hash('device-challenge', `${clientId}.${expiry}.${nonce}`);
  return {
    issue(clientId: string, expiresAt: number): string {
      const expiry = expiresAt.toString(36);
      const nonce = randomToken('', 16);
      return `${expiry}.${nonce}.${mac(clientId, expiry, nonce)}`;
    },

    /** The challenge's expiry when it was issued to this client and is still live. */
    check(challenge: string, clientId: string, now: number): number | undefined {
      const [expiry, nonce, tag, extra] = challenge.split('.');
      if (!expiry || !nonce || !tag || extra !== undefined) return undefined;
      if (!safeEqual(tag, mac(clientId, expiry, nonce))) return undefined;
      const expiresAt = Number.parseInt(expiry, 36);
      return Number.isSafeInteger(expiresAt) && expiresAt > now ? expiresAt : undefined;
    },
  };
}

export type ChallengeCodec = ReturnType<typeof createChallengeCodec>;
