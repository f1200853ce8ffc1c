import { sql } from 'kysely';
import type { Db } from '../storage/schema.js';
import { deleteBefore } from '../storage/sweeper.js';

/**
 * Fixed-window counters in the shared database, so every node sees the same counts.
 * `hit` increments atomically (one upsert) and returns the count inside the current window.
 */
export function createThrottleStore(db: Db) {
  return {
    async deleteExpired(now: number): Promise<void> {
      await deleteBefore(db, 'rate_counters', 'expires_at', now);
    },

    /** `by`: what this hit weighs (1 for a request; an SMS's price for the cost cap). */
    async hit(key: string, windowMs: number, now: number, by = 1): Promise<{ count: number; windowStart: number }> {
      const fresh = now - windowMs;
      const row = await db
        .insertInto('rate_counters')
        .values({ key, window_start: now, count: by, expires_at: now + windowMs })
        .onConflict((oc) =>
          oc.column('key').doUpdateSet({
            count: sql`case when rate_counters.window_start <= ${fresh} then ${by} else rate_counters.count + ${by} end`,
            window_start: sql`case when rate_counters.window_start <= ${fresh} then ${now} else rate_counters.window_start end`,
            expires_at: sql`case when rate_counters.window_start <= ${fresh} then ${now + windowMs} else rate_counters.expires_at end`,
          }),
        )
        .returning(['count', 'window_start'])
        .executeTakeFirstOrThrow();
      return { count: Number(row.count), windowStart: Number(row.window_start) };
    },
  };
}

export type ThrottleStore = ReturnType<typeof createThrottleStore>;
