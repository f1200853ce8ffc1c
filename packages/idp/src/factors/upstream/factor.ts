import type { Factor } from '../../sign-in/factor.js';

/** The amr of a sign-in at an upstream identity provider (RFC 8176 `fed`: federated authentication). */
export const upstreamFirst = ['fed'] as const;

/** The amr when an existing account was proved by its emailed code before the link: both passed. */
export const upstreamLinkedFirst = ['fed', 'otp'] as const;

/**
 * An identity at an upstream provider the operator connected (connections/): a first factor
 * only, proven by the provider's ID token (or GitHub's API) in the callback (service.ts).
 */
export const upstreamFactor = { name: 'upstream', first: upstreamFirst } as const satisfies Factor;
