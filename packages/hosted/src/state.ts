/**
 * What the steps share: the two service-web clients, made as any application makes them, and
 * the sign-in under way.
 */
import { type PkcePair, ServiceClient } from 'service-web';
import { ServicePasskeys } from 'service-web/passkeys';

/** The core client: email code, device, MFA. */
export const client = new ServiceClient();
/** The passkey client: sign-in with a passkey, and a passkey as the second factor. */
export const passkeys = new ServicePasskeys();

export const signIn: {
  /** The address being signed in (after a passkey, the one the service named). */
  email: string;
  /** The PKCE pair of the hosted code (its challenge went with the first step). */
  pkce?: PkcePair;
  /** The MFA session of the second-factor step. */
  sessionId?: string;
  /** The sign-in began with a passkey: nothing to remember, no passkey to offer after it. */
  passkeyFirst: boolean;
  /** Passkeys work on this page (WebAuthn, on a host name) and the passkey client is ready. */
  passkeysUsable: boolean;
  /** The held sign-in may offer "Add a passkey" after the recovery codes (if any). */
  offerPasskey: boolean;
} = { email: '', passkeyFirst: false, passkeysUsable: false, offerPasskey: false };
