import type { CodeService } from '../authorization-codes/service.js';
import { randomToken, type SecretHasher } from '../crypto/secrets.js';
import { ACCESS_TOKEN_TTL_SECONDS, REFRESH_TOKEN_ABSOLUTE_LIFETIME_SECONDS, REFRESH_TOKEN_IDLE_TTL_SECONDS } from '../defaults.js';
import type { EventLog } from '../events/service.js';
import type { PresentingClient, RefreshFamily, RefreshTokenStore } from './refresh-store.js';

/** Why a family was revoked (kept in `refresh_token_families.revoked_reason`). */
export type RevocationReason = 'reuse' | 'revocation' | 'code_replay' | 'user_disabled';

export interface RefreshTokenDeps {
  store: RefreshTokenStore;
  codes: CodeService;
  events: EventLog;
  hash: SecretHasher;
  now: () => number;
  /** A device unused for this long is no longer trusted, and its refresh tokens end with it. */
  deviceIdleMs: number;
}

export interface RefreshTokens {
  /** Starts a family for a code exchange whose access token is `family.id`; returns the first token. */
  issue(family: RefreshFamily): Promise<string>;
  /**
   * Spends `value` for `client` and returns its successor with the family, or undefined when
   * the token is not live for this client (the caller then checks the client and reuse).
   */
  rotate(
    value: string,
    client: PresentingClient,
    accessTokenJti: string,
    /** Checks the family first (a refresh's scope and resource): a throw leaves the token unspent. */
    accept?: (family: RefreshFamily) => void,
  ): Promise<
    | {
        refreshToken: string;
        family: RefreshFamily;
        email: string;
        idTokenAlg: string;
      }
    | undefined
  >;
  /**
   * A token that did not rotate, from a client that authenticated: if it was this client's
   * and already spent, someone holds a copy, and the family goes (RFC 9700 4.14.2).
   */
  detectReuse(value: string, clientId: string): Promise<void>;
  /**
   * RFC 7009 2.1: revokes the family of a refresh token the client holds. A token of another
   * client, or unknown, changes nothing (the endpoint answers 200 either way); nor does one of a
   * family bound to a DPoP key (RFC 9449 5) presented without a proof of that key (`dpopJkt`).
   */
  revoke(value: string, clientId: string, dpopJkt: string | null): Promise<boolean>;
  /** A replayed code: the family its first redemption started (id = that access token's jti) goes too. */
  revokeFamily: (familyId: string, reason: RevocationReason) => Promise<boolean>;
  /** An operator disabled the user: every family ends (enabling the user does not bring them back). */
  revokeUser: (userId: string) => Promise<number>;
  /** The user signed out of one application at the account center (account-center/): its families end; returns how many. */
  revokeUserClient: (userId: string, clientId: string) => Promise<number>;
  sweep: (at: number) => Promise<void>;
  /** A live refresh token's grant (RFC 7662 introspection), or undefined: spent, expired, revoked, or its user or device gone. */
  findLive(value: string): Promise<{ clientId: string; userId: string; scope: string; issuedAt: number; expiresAt: number } | undefined>;
}

/**
 * Refresh tokens (RFC 6749 6, OIDC Core 11 `offline_access`), rotated on every use and revoked
 * as a family when a spent one comes back (RFC 9700 4.14.2): whoever presented it second, the
 * legitimate client or a thief, the other one's tokens stop working. A family lives only while
 * the device of its sign-in is trusted and its user enabled.
 */
export function createRefreshTokens({ store, codes, events, hash, now, deviceIdleMs }: RefreshTokenDeps): RefreshTokens {
  const idHashOf = (value: string) => hash('refresh-token', value);

  /** Revokes the family and the access tokens issued with it that may still be alive (RFC 7009 2.1). */
  async function revokeFamily(familyId: string, reason: RevocationReason): Promise<boolean> {
    const at = now();
    const ttlMs = ACCESS_TOKEN_TTL_SECONDS * 1000;
    const done = await store.revokeFamily(familyId, at, reason, at - ttlMs);
    await codes.revokeAccessTokens(done.accessTokens.map((t) => ({ jti: t.jti, expiresAt: t.createdAt + ttlMs })));
    if (done.revoked && reason === 'reuse') {
      await events.record({
        type: 'refresh_token.reused',
        ...(done.userId ? { userId: done.userId } : {}),
        ...(done.clientId ? { clientId: done.clientId } : {}),
        ...(done.deviceId ? { deviceId: done.deviceId } : {}),
        detail: { family: familyId },
      });
    }
    return done.revoked;
  }

  return {
    async issue(family: RefreshFamily): Promise<string> {
      const value = randomToken('rt_');
      const at = now();
      await store.insertFamily(
        family,
        { idHash: idHashOf(value), accessTokenJti: family.id, expiresAt: at + REFRESH_TOKEN_IDLE_TTL_SECONDS * 1000 },
        at,
        at + REFRESH_TOKEN_ABSOLUTE_LIFETIME_SECONDS * 1000,
      );
      return value;
    },

    async rotate(value: string, client: PresentingClient, accessTokenJti: string, accept?: (family: RefreshFamily) => void) {
      const next = randomToken('rt_');
      const at = now();
      const rotated = await store.rotate(
        idHashOf(value),
        at,
        client,
        at - deviceIdleMs,
        {
          idHash: idHashOf(next),
          accessTokenJti,
          expiresAt: at + REFRESH_TOKEN_IDLE_TTL_SECONDS * 1000,
        },
        accept,
      );
      return rotated && { ...rotated, refreshToken: next };
    },

    async detectReuse(value: string, clientId: string): Promise<void> {
      const found = await store.find(idHashOf(value));
      if (found && found.clientId === clientId && found.usedAt !== null && found.familyRevokedAt === null) {
        await revokeFamily(found.familyId, 'reuse');
      }
    },

    async revoke(value: string, clientId: string, dpopJkt: string | null): Promise<boolean> {
      const found = await store.find(idHashOf(value));
      if (!found || found.clientId !== clientId || (found.dpopJkt !== null && found.dpopJkt !== dpopJkt)) return false;
      return revokeFamily(found.familyId, 'revocation');
    },

    revokeFamily,

    revokeUser: (userId: string) => store.revokeFamiliesOfUser(userId, now(), 'user_disabled'),
    revokeUserClient: (userId: string, clientId: string) => store.revokeFamiliesOfUser(userId, now(), 'user_signed_out', clientId),

    sweep: (at: number) => store.deleteExpired(at),

    findLive: (value: string) => {
      const at = now();
      return store.findLive(idHashOf(value), at, at - deviceIdleMs);
    },
  };
}
