import { Type } from 'typebox';
import type { CodeService } from '../authorization-codes/service.js';
import type { RedeemedCode } from '../authorization-codes/store.js';
import type { ClientService } from '../clients/service.js';
import { pkceChallengeOf } from '../crypto/pkce.js';
import { randomToken, type SecretHasher, safeEqual } from '../crypto/secrets.js';
import type { DeviceStore } from '../devices/store.js';
import { ServiceError } from '../errors.js';
import type { PasskeyStore } from '../factors/passkey/store.js';
import type { EnabledUserStore, User } from '../users/enabled-store.js';

/** What a first-party app needs to sign users in and to keep its session bound to what signed in. */
export interface FirstPartyDeps {
  issuer: string;
  clients: Pick<ClientService, 'ensureFirstParty'>;
  codes: Pick<CodeService, 'redeem'>;
  enabledUsers: Pick<EnabledUserStore, 'findById'>;
  devices: Pick<DeviceStore, 'findActive'>;
  passkeys: Pick<PasskeyStore, 'findActiveById'>;
  hash: SecretHasher;
  /** A remembered device unused this long no longer holds a session open. */
  deviceIdleMs: number;
  now: () => number;
}

/** One first-party app: its built-in client and the name its cookies' keyed hashes are made under. */
export interface FirstPartyApp {
  clientId: string;
  /** Shown on the hosted pages as the client's name. */
  name: string;
  /** Where the hosted sign-in sends the browser back to, below `baseUrl`. */
  callbackPath: string;
  /** Where the app is served (an origin): the issuer, unless it has a listener of its own (the console's). */
  baseUrl?: string | undefined;
  mfaPolicy: 'optional' | 'required';
  /** Separates this app's keyed hashes (CSRF tokens, sessions) from every other's: `account`, `console`. */
  purpose: string;
}

export interface FirstPartySignIn {
  /** Creates or refreshes the app's built-in client (its redirect URI follows the issuer). */
  ensureClient(): Promise<void>;
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
  /** The user, while they are enabled and the device or passkey that signed in is still theirs and trusted; else undefined. */
  boundUser(userId: string, deviceId: string, at: number): Promise<User | undefined>;
  /** The per-session token the app's calls and forms carry: a keyed hash of the session cookie. */
  csrfToken(cookie: string): string;
  /** Whether `token` is this cookie's token (constant time). */
  checkCsrf(cookie: string, token: string | undefined): boolean;
}

/**
 * A first-party app of the service (the account center, the operator console) signing in through
 * the hosted pages as its own built-in public client, as any relying party would: authorization
 * code with PKCE and state, the verifier kept in the browser's login cookie, never in a store.
 */
export function createFirstPartySignIn(deps: FirstPartyDeps, app: FirstPartyApp): FirstPartySignIn {
  const { issuer, codes, hash } = deps;
  const { clientId } = app;
  const redirectUri = `${app.baseUrl ?? issuer}${app.callbackPath}`;
  const refused = (message: string) => new ServiceError('ERR_FORBIDDEN', message);
  const csrfToken = (cookie: string) => hash(`${app.purpose}-csrf`, cookie);
  return {
    ensureClient: () =>
      deps.clients.ensureFirstParty({
        id: clientId,
        name: app.name,
        origin: new URL(issuer).origin,
        // Never used: a first-party app signs in with redirects only; a client row needs one.
        publishableKey: randomToken(`pk_${app.purpose}_`),
        redirectUris: [redirectUri],
        mfaPolicy: app.mfaPolicy,
      }),

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
      // RFC 6749 4.1.3: only a code issued to this app's client for its callback, bound to this
      // browser's verifier (codeBinding): not a code of another app that an SSO session answered.
      const user = redeemed?.redeemed?.user;
      if (!redeemed?.redeemed || !user) throw refused('This sign-in has expired. Start again.');
      return { user, signedIn: redeemed.redeemed.code };
    },

    async boundUser(userId, deviceId, at) {
      const [user, device] = await Promise.all([
        deps.enabledUsers.findById(userId),
        deps.devices.findActive(deviceId, at - deps.deviceIdleMs),
      ]);
      const bound = device ?? (await deps.passkeys.findActiveById(deviceId));
      return user && bound?.userId === userId ? user : undefined;
    },

    csrfToken,
    checkCsrf: (cookie, token) => typeof token === 'string' && safeEqual(token, csrfToken(cookie)),
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
