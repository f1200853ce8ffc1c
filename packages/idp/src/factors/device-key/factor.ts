import type { Factor } from '../../sign-in/factor.js';

/**
 * A remembered device's key (a P-256 key the browser keeps, not extractable): a first factor
 * only, proven by a device proof over a challenge (prover.ts). amr: swk, a software-protected key.
 */
export const deviceKeyFactor = { name: 'device-key', first: ['swk'] } as const satisfies Factor;
