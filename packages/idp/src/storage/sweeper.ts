import { SWEEP_INTERVAL_SECONDS } from '../defaults.js';

/**
 * Runs `sweep` every SWEEP_INTERVAL_SECONDS. Expired rows are already refused by every
 * query; sweeping only keeps tables small. Returns the stop function.
 */
export function startSweeper(sweep: (now: number) => Promise<void>, now: () => number, onError: (error: unknown) => void): () => void {
  const timer = setInterval(() => {
    sweep(now()).catch(onError);
  }, SWEEP_INTERVAL_SECONDS * 1000);
  timer.unref();
  return () => clearInterval(timer);
}
