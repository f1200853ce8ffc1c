import { ServiceError } from '../errors.js';
import type { ThrottleStore } from './store.js';

export interface Limit {
  max: number;
  windowSeconds: number;
}

export interface Throttle {
  /**
   * Counts one hit of `subject` against each limit; the first one exceeded refuses. `firstRefusal`
   * runs once per window of a limit (the hit that crossed its max): an alarm that a flood does not repeat.
   * `weight`: what this hit counts for (1 unless said; an SMS's price against the cost cap).
   */
  consume(
    subject: string,
    limits: readonly Limit[],
    message: string,
    firstRefusal?: (limit: Limit) => Promise<void>,
    weight?: number,
  ): Promise<void>;
  /** Counts one hit of `subject` against each limit and tells whether any is past its max; refuses nothing (a risk signal). */
  exceeds(subject: string, limits: readonly Limit[]): Promise<boolean>;
}

/**
 * Applies a set of limits to one subject; the first exceeded limit refuses with a retry time.
 * `onRefused` hears the subject of each refusal (metrics count refused code sends by their kind
 * of limit; the subject itself carries an IP or a recipient's key and goes no further).
 */
export function createThrottle({
  store,
  now,
  onRefused,
}: {
  store: ThrottleStore;
  now: () => number;
  onRefused?: (subject: string) => void;
}): Throttle {
  return {
    async consume(
      subject: string,
      limits: readonly Limit[],
      message: string,
      firstRefusal?: (limit: Limit) => Promise<void>,
      weight = 1,
    ): Promise<void> {
      for (const limit of limits) {
        const windowMs = limit.windowSeconds * 1000;
        const at = now();
        const { count, windowStart } = await store.hit(`${subject}:${limit.windowSeconds}`, windowMs, at, weight);
        if (count > limit.max) {
          const retryAfter = Math.max(1, Math.ceil((windowStart + windowMs - at) / 1000));
          onRefused?.(subject);
          if (count - weight <= limit.max) await firstRefusal?.(limit);
          throw new ServiceError('ERR_RATE_LIMITED', message, { retryAfter });
        }
      }
    },

    async exceeds(subject: string, limits: readonly Limit[]): Promise<boolean> {
      let over = false;
      // Every window is counted, past or not, so each keeps its true count.
      for (const limit of limits) {
        const { count } = await store.hit(`${subject}:${limit.windowSeconds}`, limit.windowSeconds * 1000, now());
        if (count > limit.max) over = true;
      }
      return over;
    },
  };
}
