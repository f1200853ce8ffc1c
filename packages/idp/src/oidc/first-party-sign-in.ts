import { Type } from 'typebox';
import type { User } from '../accounts/store.js';
import type { CodeService } from '../authorization-codes/service.js';
import type { RedeemedCode } from '../authorization-codes/store.js';
import { pkceChallengeOf } from '../crypto/pkce.js';
import { randomToken, safeEqual } from '../crypto/secrets.js';
import { ServiceError } from '../errors.js';

export interface FirstPartySignIn {
  /** The /authorize URL to send the browser to, and the login cookie's value (state and PKCE verifier) that ties the answer to this browser. */
  begin(extra?: Record<string, string>): { location: string; login: string };
  /**
   * Redeems the callback's code as the built-in client, after checking the state against the
   * login cookie and `iss` against this issuer (RFC 9207): the user and the code's sign-in, or
   * `ERR_FORBIDDEN`.
   */
  redeem(input: {
    code: string;
    state: string;
    iss: string | undefined;
    login: string | undefined;
  }): Promise<{ user: User; signedIn: RedeemedCode }>;
}

/**
 * A first-party app of the service (the account center, the operator console) signing in through
 * the hosted pages as its own built-in public client, as any relying party would: authorization
 * code with PKCE and state, the verifier kept in the browser's login cookie, never in a store.
 */
export function createFirstPartySignIn({
  issuer,
  clientId,
  redirectUri,
  codes,
}: {
  issuer: string;
  clientId: string;
  redirectUri: string;
  codes: Pick<CodeService, 'redeem'>;
}): FirstPartySignIn {
  const refused = (message: string) => new ServiceError('ERR_FORBIDDEN', message);
  return {
    begin(extra = {}) {
      const state = randomToken('');
      const verifier = randomToken('', 48);
      const url = new URL(`${issuer}/authorize`);
      url.search = new URLSearchParams({
        response_type: 'code',
        client_id: clientId,
        redirect_uri: redirectUri,
        scope: 'openid email',
        state,
        code_challenge: pkceChallengeOf(verifier) as string,
        code_challenge_method: 'S256',
        ...extra,
      }).toString();
      return { location: url.toString(), login: `${state}.${verifier}` };
    },

    async redeem({ code, state, iss, login }) {
      const [expectedState = '', verifier = ''] = (login ?? '').split('.');
      // RFC 9207: the answer must come from this issuer; the state ties it to this browser's sign-in.
      if (!expectedState || !safeEqual(state, expectedState) || (iss !== undefined && iss !== issuer))
        throw refused('This sign-in was not started in this browser, or has expired. Start again.');
      const redeemed = await codes.redeem(code, randomToken('', 16), {
        id: clientId,
        secretKeyHash: null,
        pkceChallenge: pkceChallengeOf(verifier) ?? null,
        redirectUri,
      });
      const user = redeemed?.user;
      if (!redeemed || !user) throw refused('This sign-in has expired. Start again.');
      return { user, signedIn: redeemed.code };
    },
  };
}

/** The callback's query, as /authorize answers it (RFC 6749 4.1.2, RFC 9207 `iss`), bounded. */
export const FirstPartyCallbackQuery = Type.Object({
  code: Type.Optional(Type.String({ maxLength: 200 })),
  state: Type.Optional(Type.String({ maxLength: 200 })),
  iss: Type.Optional(Type.String({ maxLength: 2000 })),
  error: Type.Optional(Type.String({ maxLength: 200 })),
  error_description: Type.Optional(Type.String({ maxLength: 2000 })),
});
