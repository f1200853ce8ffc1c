import { defineWing } from '../composition/wing.js';
import type { Db } from '../storage/schema.js';
import { createThrottle } from './service.js';
import { createThrottleStore } from './store.js';

/** The shared rate counters (docs/security.md, "Limits"), counted before anything is checked. */
export const throttleWing = defineWing(
  'throttle',
  ({ db, now, metrics }: { db: Db; now: () => number; metrics: { throttled(subject: string): void } }) => {
    const store = createThrottleStore(db);
    return {
      services: { throttle: createThrottle({ store, now, onRefused: metrics.throttled }) },
      sweep: (at: number) => store.deleteExpired(at),
    };
  },
);
