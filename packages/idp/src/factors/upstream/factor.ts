/** The amr of a sign-in at an upstream identity provider (RFC 8176 `fed`: federated authentication). */
export const upstreamFirst = ['fed'] as const;

/** The amr when an existing account was proved by its emailed code before the link: both passed. */
export const upstreamLinkedFirst = ['fed', 'otp'] as const;
