import { randomToken, type SecretHasher } from '../crypto/secrets.js';
import { ACCESS_TOKEN_TTL_SECONDS, AUTH_CODE_TTL_SECONDS } from '../defaults.js';
import type { AuthCode, CodeStore, DrawnCode, Redeemed, RedeemingClient } from './store.js';

export interface CodeService {
  issue(code: AuthCode): Promise<string>;
  /** A new code's value and row, for a caller that writes it in its own statement (factors/device-key/sign-in-store.ts). */
  draw(code: AuthCode): DrawnCode;
  /**
   * Redeems a code once for an authenticating client, recording the access token this
   * redemption issues (`accessTokenJti`). Undefined for an unknown, expired or used code, or
   * a client whose secret does not match: the caller tells these apart on that (rare) path.
   */
  redeem(value: string, accessTokenJti: string, client: RedeemingClient): Promise<Redeemed | undefined>;
  /**
   * A used code presented again by its client: revokes the access token its redemption issued
   * (RFC 6749 4.1.2) and returns its jti (a refresh token family started by that redemption
   * bears it as its id), or undefined.
   */
  revokeReplayed: (value: string) => Promise<string | undefined>;
  revokeAccessTokens: (
    tokens: {
      jti: string;
      expiresAt: number;
    }[],
  ) => Promise<void>;
  isAccessTokenRevoked: (jti: string) => Promise<boolean>;
}

/** Issues and redeems authorization codes (RFC 6749 4.1.2: single use, short-lived, bound to client and PKCE). */
export function createCodeService({ store, hash, now }: { store: CodeStore; hash: SecretHasher; now: () => number }): CodeService {
  return {
    async issue(code: AuthCode): Promise<string> {
      const drawn = this.draw(code);
      await store.insert(drawn.idHash, code, drawn.expiresAt);
      return drawn.value;
    },

    draw(code: AuthCode): DrawnCode {
      const value = randomToken('ac_');
      return { value, idHash: hash('auth-code', value), code, expiresAt: now() + AUTH_CODE_TTL_SECONDS * 1000 };
    },

    redeem(value: string, accessTokenJti: string, client: RedeemingClient): Promise<Redeemed | undefined> {
      const at = now();
      return store.consume(hash('auth-code', value), at, { accessTokenJti, keepUntil: at + ACCESS_TOKEN_TTL_SECONDS * 1000 }, client);
    },

    revokeReplayed: (value: string) => store.revokeAccessTokenOf(hash('auth-code', value)),

    revokeAccessTokens: (tokens: { jti: string; expiresAt: number }[]) => store.revokeAccessTokens(tokens),

    isAccessTokenRevoked: (jti: string) => store.isAccessTokenRevoked(jti),
  };
}
