import { randomToken, type SecretHasher } from '../crypto/secrets.js';
import { ACCESS_TOKEN_TTL_SECONDS, AUTH_CODE_TTL_SECONDS } from '../defaults.js';
import type { AuthCode, CodeStore, RedeemedCode } from './store.js';

/** Issues and redeems authorization codes (RFC 6749 4.1.2: single use, short-lived, bound to client and PKCE). */
export function createCodeService({ store, hash, now }: { store: CodeStore; hash: SecretHasher; now: () => number }) {
  return {
    async issue(code: AuthCode): Promise<string> {
      const value = randomToken('ac_');
      await store.insert(hash('auth-code', value), code, now() + AUTH_CODE_TTL_SECONDS * 1000);
      return value;
    },

    /**
     * Redeems a code once, recording the access token this redemption issues (`accessTokenJti`).
     * A code presented again is refused and revokes that access token (RFC 6749 4.1.2).
     */
    async redeem(value: string, accessTokenJti: string): Promise<RedeemedCode | undefined> {
      const idHash = hash('auth-code', value);
      const code = await store.consume(idHash, now(), { accessTokenJti, keepUntil: now() + ACCESS_TOKEN_TTL_SECONDS * 1000 });
      if (!code) await store.revokeAccessTokenOf(idHash);
      return code;
    },

    isAccessTokenRevoked: (jti: string) => store.isAccessTokenRevoked(jti),
  };
}

export type CodeService = ReturnType<typeof createCodeService>;
