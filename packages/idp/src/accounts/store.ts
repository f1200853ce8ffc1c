import { sql } from 'kysely';
import { randomToken } from '../crypto/secrets.js';
import { IMMUTABLE_ROW_CACHE_ENTRIES } from '../defaults.js';
import type { Db } from '../storage/database.js';

export interface User {
  id: string;
  email: string;
}

/**
 * Users, keyed by an opaque id; the email is an attribute, never the subject. A user row is
 * never updated or deleted, so `findById` keeps what it read (the token endpoint reads the
 * user of every code). Adding an update or delete of `users` means dropping that cache.
 */
export function createAccountStore(db: Db) {
  const byId = new Map<string, User>();
  return {
    async findByEmail(email: string): Promise<User | undefined> {
      return db.selectFrom('users').select(['id', 'email']).where('email', '=', email).executeTakeFirst();
    },

    async findById(id: string): Promise<User | undefined> {
      const known = byId.get(id);
      if (known) return known;
      const user = await db.selectFrom('users').select(['id', 'email']).where('id', '=', id).executeTakeFirst();
      if (user) {
        if (byId.size >= IMMUTABLE_ROW_CACHE_ENTRIES) byId.clear();
        byId.set(id, user);
      }
      return user;
    },

    /** Created on the first verified email; concurrent first logins converge on one row. */
    async findOrCreate(email: string, now: number): Promise<User> {
      await db
        .insertInto('users')
        .values({ id: randomToken('usr_', 16), email, created_at: now })
        .onConflict((oc) => oc.column('email').doNothing())
        .execute();
      const user = await this.findByEmail(email);
      if (!user) throw new Error('user vanished after insert');
      return user;
    },

    /** Adds one failure and returns the new count; locks the account when it reaches `max`. */
    async recordFailure(userKey: string, max: number, lockUntil: number): Promise<number> {
      const row = await db
        .insertInto('account_failures')
        .values({ user_key: userKey, failures: 1, locked_until: null })
        .onConflict((oc) =>
          oc.column('user_key').doUpdateSet({
            failures: sql`account_failures.failures + 1`,
            locked_until: sql`case when account_failures.failures + 1 >= ${max} then ${lockUntil} else account_failures.locked_until end`,
          }),
        )
        .returning('failures')
        .executeTakeFirstOrThrow();
      return Number(row.failures);
    },

    async lockedUntil(userKey: string, now: number): Promise<number | undefined> {
      const row = await db.selectFrom('account_failures').select('locked_until').where('user_key', '=', userKey).executeTakeFirst();
      const until = row?.locked_until == null ? undefined : Number(row.locked_until);
      return until !== undefined && until > now ? until : undefined;
    },

    /** A success ends the run of consecutive failures (and any expired lock). */
    async clearFailures(userKey: string): Promise<void> {
      await db.deleteFrom('account_failures').where('user_key', '=', userKey).execute();
    },
  };
}

export type AccountStore = ReturnType<typeof createAccountStore>;
