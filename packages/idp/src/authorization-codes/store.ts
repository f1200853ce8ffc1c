import type { Db } from '../storage/database.js';

export interface AuthCode {
  clientId: string;
  userId: string;
  codeChallenge: string | null;
  amr: string[];
  authTime: number;
  /** The remembered device that signed in or was registered, if any (ID token claim device_id). */
  deviceId: string | null;
  /** Set by the authorization endpoint (oidc/): the token request must present the same value. */
  redirectUri?: string | null;
  /** OIDC Core 3.1.2.1 nonce, echoed in the ID token. */
  nonce?: string | null;
}

/** A consumed code: the optional fields read back as null when the code had none. */
export type RedeemedCode = AuthCode & { redirectUri: string | null; nonce: string | null };

/** Authorization codes, stored by keyed hash; consumption stamps a time instead of deleting. */
export function createCodeStore(db: Db) {
  return {
    async insert(idHash: string, code: AuthCode, expiresAt: number): Promise<void> {
      await db
        .insertInto('auth_codes')
        .values({
          id: idHash,
          client_id: code.clientId,
          user_id: code.userId,
          code_challenge: code.codeChallenge,
          amr: JSON.stringify(code.amr),
          auth_time: code.authTime,
          device_id: code.deviceId,
          redirect_uri: code.redirectUri ?? null,
          nonce: code.nonce ?? null,
          expires_at: expiresAt,
          consumed_at: null,
          access_token_jti: null,
        })
        .execute();
    },

    async deleteExpired(now: number): Promise<void> {
      await db.deleteFrom('auth_codes').where('expires_at', '<', now).execute();
      await db.deleteFrom('revoked_access_tokens').where('expires_at', '<', now).execute();
    },

    /**
     * A consumed code presented again: revokes the access token its redemption issued (until
     * that token would have expired anyway). True when there was one to revoke.
     */
    async revokeAccessTokenOf(idHash: string): Promise<boolean> {
      const row = await db
        .selectFrom('auth_codes')
        .select(['access_token_jti', 'expires_at'])
        .where('id', '=', idHash)
        .where('consumed_at', 'is not', null)
        .executeTakeFirst();
      if (!row?.access_token_jti) return false;
      await db
        .insertInto('revoked_access_tokens')
        .values({ jti: row.access_token_jti, expires_at: Number(row.expires_at) })
        .onConflict((oc) => oc.column('jti').doNothing())
        .execute();
      return true;
    },

    async isAccessTokenRevoked(jti: string): Promise<boolean> {
      const row = await db.selectFrom('revoked_access_tokens').select('jti').where('jti', '=', jti).executeTakeFirst();
      return row !== undefined;
    },

    /**
     * Consumes a live code in one statement, so of any number of concurrent callers exactly
     * one gets the row, recording the access token that redemption issues in the same write
     * (no window where a replay finds nothing to revoke). A replayed, expired or unknown code
     * yields undefined.
     */
    async consume(
      idHash: string,
      now: number,
      redemption: { accessTokenJti: string; keepUntil: number },
    ): Promise<RedeemedCode | undefined> {
      const row = await db
        .updateTable('auth_codes')
        // The row outlives the code as long as the access token does, so a replay can revoke it.
        .set({ consumed_at: now, access_token_jti: redemption.accessTokenJti, expires_at: redemption.keepUntil })
        .where('id', '=', idHash)
        .where('consumed_at', 'is', null)
        .where('expires_at', '>', now)
        .returning(['client_id', 'user_id', 'code_challenge', 'amr', 'auth_time', 'device_id', 'redirect_uri', 'nonce'])
        .executeTakeFirst();
      return (
        row && {
          clientId: row.client_id,
          userId: row.user_id,
          codeChallenge: row.code_challenge,
          amr: JSON.parse(row.amr) as string[],
          authTime: Number(row.auth_time),
          deviceId: row.device_id,
          redirectUri: row.redirect_uri,
          nonce: row.nonce,
        }
      );
    },
  };
}

export type CodeStore = ReturnType<typeof createCodeStore>;
