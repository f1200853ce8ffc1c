import { ServiceError } from '../errors.js';
import type { ThrottleStore } from './store.js';

export interface Limit {
  max: number;
  windowSeconds: number;
}

/** Applies a set of limits to one subject; the first exceeded limit refuses with a retry time. */
export function createThrottle({ store, now }: { store: ThrottleStore; now: () => number }) {
  return {
    async consume(subject: string, limits: readonly Limit[], message: string): Promise<void> {
      for (const limit of limits) {
        const windowMs = limit.windowSeconds * 1000;
        const at = now();
        const { count, windowStart } = await store.hit(`${subject}:${limit.windowSeconds}`, windowMs, at);
        if (count > limit.max) {
          const retryAfter = Math.max(1, Math.ceil((windowStart + windowMs - at) / 1000));
          throw new ServiceError('ERR_RATE_LIMITED', message, { retryAfter });
        }
      }
    },
  };
}

export type Throttle = ReturnType<typeof createThrottle>;
