import { randomToken, type SecretHasher } from '../crypto/secrets.js';
import { AUTH_CODE_TTL_SECONDS } from '../defaults.js';
import type { AuthCode, CodeStore } from './store.js';

/** Issues and redeems authorization codes (RFC 6749 4.1.2: single use, short-lived, bound to client and PKCE). */
export function createCodeService({ store, hash, now }: { store: CodeStore; hash: SecretHasher; now: () => number }) {
  return {
    async issue(code: AuthCode): Promise<string> {
      const value = randomToken('ac_');
      await store.insert(hash('auth-code', value), code, now() + AUTH_CODE_TTL_SECONDS * 1000);
      return value;
    },

    redeem(value: string): Promise<AuthCode | undefined> {
      return store.consume(hash('auth-code', value), now());
    },
  };
}

export type CodeService = ReturnType<typeof createCodeService>;
