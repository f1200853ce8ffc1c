import type { Db } from '../storage/schema.js';
import { deleteBefore } from '../storage/sweeper.js';

/**
 * What a spent token was, the prefix of its row's id: a device challenge (devices/prover.ts and
 * the login, factors/device-key/sign-in-store.ts), a "this wasn't me" link (devices/notice.ts), a passkey challenge
 * (webauthn/service.ts), a delegation request's jti (delegation/service.ts), a DPoP proof's key
 * and jti (dpop/proof.ts), a DBSC challenge (oidc/dbsc.ts), an upstream sign-in's state and device ticket (factors/upstream/),
 * a solved send challenge or CAPTCHA token (otp/send-challenge.ts, otp/send-captcha.ts), a machine client's assertion (token/client-assertion.ts).
 */
export type SpentPurpose =
  | 'device-challenge'
  | 'device-notice'
  | 'passkey-challenge'
  | 'delegation-request'
  | 'dpop-proof'
  | 'dbsc-challenge'
  | 'upstream-state'
  | 'upstream-device'
  | 'send-challenge'
  | 'send-captcha'
  | 'client-assertion';

/** A token to record as spent: its caller's keyed hash of it, kept until it would have expired anyway. */
export interface SpentToken {
  purpose: SpentPurpose;
  idHash: string;
  expiresAt: number;
}

/**
 * The one replay table: single-use tokens already spent, kept until they would have expired.
 * A token is spent by one `INSERT … ON CONFLICT DO NOTHING RETURNING id` under the primary key
 * `purpose:idHash`: the first caller inserts the row and wins, every other (a replay, a
 * concurrent request on this node or another) inserts nothing and is refused.
 */
export function createSpentTokenStore(db: Db) {
  return {
    /** Spends a token; true only for the first caller. */
    async spend(token: SpentToken, now: number): Promise<boolean> {
      return (await this.spendQuery(token, now).executeTakeFirst()) !== undefined;
    },

    /**
     * spend's statement, for the one caller that folds it into its own: the trusted-device login
     * spends its challenge in the statement (PostgreSQL) or transaction (SQLite) that issues its
     * code (factors/device-key/sign-in-store.ts spendAndIssue). It returns the row's id only when it went in.
     */
    spendQuery(token: SpentToken, now: number) {
      return db
        .insertInto('spent_tokens')
        .values({ id: spentId(token), purpose: token.purpose, expires_at: token.expiresAt, consumed_at: now })
        .onConflict((oc) => oc.column('id').doNothing())
        .returning('id');
    },

    async deleteExpired(now: number): Promise<void> {
      await deleteBefore(db, 'spent_tokens', 'expires_at', now);
    },
  };
}

/** The row's primary key: the purpose, so that no two purposes' tokens can meet, and the caller's keyed hash. */
export const spentId = (token: Pick<SpentToken, 'purpose' | 'idHash'>) => `${token.purpose}:${token.idHash}`;

export type SpentTokenStore = ReturnType<typeof createSpentTokenStore>;
