import type { JWK } from 'jose';

/** A device key waiting for the sign-in to finish before it is registered. */
export interface PendingDevice {
  publicJwk: JWK;
  cryptoVersion: string;
  /** From the User-Agent of the registering request (devices/user-agent.ts). */
  browser: string | null;
  os: string | null;
  /** Approximate place from the operator's header, for the new-device mail only; never stored. */
  place?: string;
  /**
   * The id it will have, chosen by the service before the sign-in finishes when the page must
   * keep its key under it first (an upstream sign-in going on to the MFA step); else one is drawn at registration.
   */
  id?: string;
}
