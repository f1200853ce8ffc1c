import { sql } from 'kysely';
import { randomToken } from '../crypto/secrets.js';
import type { EventLog } from '../events/service.js';
import type { Db } from '../storage/schema.js';

export interface User {
  id: string;
  email: string;
}

/**
 * A step taken when a user is created, in the transaction that creates them (a later wing's:
 * organization-domains/ joins a new address to the organization that verified its domain), so a
 * user never exists without what the step gives them.
 */
export type NewUserStep = (tx: Db, user: User, at: number) => Promise<void>;

/**
 * The sign-in paths' view of the users table (beside store.ts, the operator's view): users keyed
 * by an opaque id; the email is an attribute, never the subject. A disabled user is absent from
 * every lookup here, in the same query, so every path that signs in, issues a token or acts for
 * a user refuses it without a further read. Rows change (disable, delete), so nothing here is
 * cached across requests.
 */
export function createEnabledUserStore(db: Db, events: EventLog) {
  const enabled = () => db.selectFrom('users').select(['id', 'email']).where('disabled_at', 'is', null);
  const newUserSteps: NewUserStep[] = [];
  return {
    /** Adds a step to every user's creation (wings opened later register theirs; the composition is made once). */
    onCreated(step: NewUserStep): void {
      newUserSteps.push(step);
    },

    async findByEmail(email: string): Promise<User | undefined> {
      return enabled().where('email', '=', email).executeTakeFirst();
    },

    async findById(id: string): Promise<User | undefined> {
      return enabled().where('id', '=', id).executeTakeFirst();
    },

    /** The language the user chose (i18n/), if any. */
    async localeOf(email: string): Promise<string | undefined> {
      const row = await enabled().select('locale').where('email', '=', email).executeTakeFirst();
      return row?.locale ?? undefined;
    },

    /** The same, by the user's id (a signed-in browser's page). */
    async localeOfUser(id: string): Promise<string | undefined> {
      const row = await enabled().select('locale').where('id', '=', id).executeTakeFirst();
      return row?.locale ?? undefined;
    },

    /** Saves the user's choice of language (the switcher, while signed in). */
    async setLocale(userId: string, locale: string): Promise<void> {
      await db.updateTable('users').set({ locale }).where('id', '=', userId).execute();
    },

    /** True when the address belongs to a disabled user (no code is sent to it). */
    async isDisabled(email: string): Promise<boolean> {
      const row = await db
        .selectFrom('users')
        .select('id')
        .where('email', '=', email)
        .where('disabled_at', 'is not', null)
        .executeTakeFirst();
      return row !== undefined;
    },

    /**
     * Created on the first verified email; concurrent first logins converge on one row.
     * Undefined when the address belongs to a disabled user.
     */
    async findOrCreate(email: string, now: number): Promise<User | undefined> {
      await db.transaction().execute(async (tx) => {
        const row = await tx
          .insertInto('users')
          .values({ id: randomToken('usr_', 16), email, created_at: now })
          .onConflict((oc) => oc.column('email').doNothing())
          .returning('id')
          .executeTakeFirst();
        if (!row) return;
        await events.recordIn(tx, { type: 'user.created', userId: row.id });
        for (const step of newUserSteps) await step(tx, { id: row.id, email }, now);
      });
      return this.findByEmail(email);
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
      // The account is named only by a keyed hash here; the event says where the guesses came from.
      if (Number(row.failures) === max) await events.record({ type: 'account.locked', detail: { failures: max } });
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

export type EnabledUserStore = ReturnType<typeof createEnabledUserStore>;
