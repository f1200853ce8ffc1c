/** Upstream identity providers. Part of defaults.ts, which re-exports every name. */

/**
 * Upstream identity providers (factors/upstream/). A sign-in at the provider must come back
 * within this time: the state, nonce and PKCE verifier live in a sealed cookie this long
 * (a person typing a password and a second factor at the provider; 10 min as oidc-provider's
 * interaction and Auth.js's state cookie).
 */
export const UPSTREAM_FLOW_TTL_SECONDS = 600;
/** The emailed code that proves an existing account before an upstream identity is linked to it: as long as any sign-in code. */
export const UPSTREAM_LINK_TTL_SECONDS = 600;
/**
 * An application's page that asked to remember the browser finishes the sign-in with its device
 * key within this time (the ticket in its return URL's fragment: posted as the page loads).
 */
export const UPSTREAM_DEVICE_TICKET_TTL_SECONDS = 120;
/** Discovery documents and key sets of upstream providers are kept this long per node (openid-client fetches keys as needed). */
export const UPSTREAM_METADATA_CACHE_SECONDS = 3600;
/** A request to an upstream provider (discovery, token, user info) gives up after this long. */
export const UPSTREAM_TIMEOUT_SECONDS = 10;
/** Connections per service (each is a button, a discovery cache and a secret). */
export const CONNECTIONS_MAX = 50;
/** Apple's client secret (an ES256 JWT) lives this long; one is made per token request. */
export const APPLE_CLIENT_SECRET_TTL_SECONDS = 300;
/** Starts of an upstream sign-in per IP (each costs a discovery at most and a redirect): as the passkey options. */
export const UPSTREAM_START_PER_IP = [{ max: 60, windowSeconds: 60 }] as const;
