import { randomToken, type SecretHasher, safeEqual } from '../crypto/secrets.js';
import { ACCESS_TOKEN_TTL_SECONDS, AUTH_CODE_TTL_SECONDS } from '../defaults.js';
import type { AuthCode, CodeStore, DrawnCode, Redeemed, RedeemedCode, RedeemingClient } from './store.js';

/**
 * A consumed code: redeemed by the client it was issued to, or refused with why (in the words of
 * the token endpoint's `invalid_grant`). Spent either way: a code is good for one presentation.
 */
export type Redemption = { redeemed: Redeemed; refused?: undefined } | { refused: string; redeemed?: undefined };

export interface CodeService {
  issue(code: AuthCode): Promise<string>;
  /** A new code's value and row, for a caller that writes it in its own statement (factors/device-key/sign-in-store.ts). */
  draw(code: AuthCode): DrawnCode;
  /**
   * Redeems a code once for an authenticating client, recording the access token this
   * redemption issues (`accessTokenJti`), and checks that the code is this client's: issued to
   * it, for the redirect URI it presents, bound to the PKCE verifier it presents (codeBinding).
   * Every redemption (the token endpoint, the hosted page's, the first-party apps') goes
   * through here, so none can skip the binding. Undefined for an unknown, expired or used code,
   * or a client whose secret does not match: the caller tells these apart on that (rare) path.
   */
  redeem(value: string, accessTokenJti: string, client: RedeemingClient): Promise<Redemption | undefined>;
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

    async redeem(value: string, accessTokenJti: string, client: RedeemingClient): Promise<Redemption | undefined> {
      const at = now();
      const redeemed = await store.consume(
        hash('auth-code', value),
        at,
        { accessTokenJti, keepUntil: at + ACCESS_TOKEN_TTL_SECONDS * 1000 },
        client,
      );
      if (!redeemed) return undefined;
      const refused = codeBinding(redeemed.code, client);
      return refused ? { refused } : { redeemed };
    },

    revokeReplayed: (value: string) => store.revokeAccessTokenOf(hash('auth-code', value)),

    revokeAccessTokens: (tokens: { jti: string; expiresAt: number }[]) => store.revokeAccessTokens(tokens),

    isAccessTokenRevoked: (jti: string) => store.isAccessTokenRevoked(jti),
  };
}

/**
 * Why a consumed code is not this client's to redeem, or undefined when it is: RFC 6749 4.1.3
 * (issued to this client, for the redirect_uri it presents), RFC 7636 4.6 (the verifier answers
 * the code's challenge), RFC 9700 2.1.1 (a public client has no secret: PKCE is what binds it).
 * The redeeming statement lets a request without a secret through only for a public client.
 */
export function codeBinding(code: RedeemedCode, client: RedeemingClient): string | undefined {
  if (code.clientId !== client.id) return 'The authorization code was issued to another client.';
  if (code.codeChallenge !== null) {
    if (client.pkceChallenge === null) return 'code_verifier is required for this code.';
    if (!safeEqual(client.pkceChallenge, code.codeChallenge)) return 'code_verifier does not match the code challenge.';
  } else if (client.pkceChallenge !== null) {
    return 'code_verifier was sent but the code was issued without a code challenge.';
  }
  if (client.secretKeyHash === null && code.codeChallenge === null) return 'A public client must use PKCE (S256).';
  if (code.redirectUri !== null && client.redirectUri !== code.redirectUri)
    return 'redirect_uri does not match the one of the authorization request.';
  return undefined;
}
