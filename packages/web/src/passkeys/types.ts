/** The public types of service-web/passkeys: inputs, results, what the browser offers, the globals. */
import type { PasskeyStatus } from 'service-protocol';
import type { Session } from '../session.js';
import type { FailureResult, FailureStatus, MfaRequiredResult } from '../types.js';

/** A failure of a passkey operation: the core's failure statuses and the passkey ones. */
export interface PasskeyFailureResult extends Omit<FailureResult, 'status'> {
  status: FailureStatus | PasskeyStatus;
}

/** Result of {@link ServicePasskeys.add}. */
export type AddPasskeyResult =
  | { status: 'SUCCESS'; message: string; success: true; deviceId: string; synced: boolean }
  | (PasskeyFailureResult & { success: false });

/**
 * Result of {@link ServicePasskeys.signIn}: a code for the backend, as authenticate's SUCCESS, or
 * the MFA step an application asks for, with the signed-in user's address (`userid`, which
 * initiateMfa and verifyMfa take: a sign-in without an address has no other way to know it).
 */
export type PasskeySignInResult =
  | {
      status: 'SUCCESS';
      message: string;
      success: true;
      code: string;
      /** The issuer that issued `code` (RFC 9207 `iss`), as the core authenticate's SUCCESS. */
      iss: string;
    }
  | (MfaRequiredResult & { userid: string })
  | (PasskeyFailureResult & { success: false });

/**
 * Result of {@link ServicePasskeys.verifyMfa} and {@link ServicePasskeys.enrollMfa}: the core
 * verifyMfa's shape (a code for the backend; `recoveryCodes` once, at the enrollment).
 */
export type PasskeyMfaResult =
  | {
      status: 'SUCCESS';
      message: string;
      success: true;
      code: string;
      /** The issuer that issued `code` (RFC 9207 `iss`). */
      iss: string;
      deviceId?: string;
      /** A new device whose first step asked to remember it is now remembered (as the core verifyMfa's). */
      deviceRemembered?: boolean;
      recoveryCodes?: string[];
    }
  | (PasskeyFailureResult & { success: false });

/** Input of {@link ServicePasskeys.verifyMfa} and {@link ServicePasskeys.enrollMfa}. */
export interface PasskeyMfaInput {
  userid: string;
  /** The MFA session: MFA_REQUIRED's (verifyMfa) or FINALIZE_REGISTRATION_NEEDED's (enrollMfa). */
  sessionId: string;
  /** As the core verifyMfa's: this device skips MFA for a while. */
  remember_me?: boolean;
  /** enrollMfa only: the name shown in the device list. */
  name?: string;
}

/** Options of {@link ServicePasskeys.signIn}. */
export interface PasskeySignInOptions {
  /** When the page knows the address: the passkey must be this user's. */
  userid?: string;
  /** PKCE S256 challenge (RFC 7636), as authenticate() takes it. */
  code_challenge?: string;
  code_challenge_method?: string;
  /** Aborts a pending request (for example the autofill one when the user types an address instead). */
  signal?: AbortSignal;
}

/** What the browser offers; see {@link ServicePasskeys.support}. */
export interface PasskeySupport {
  /** WebAuthn is there (and this is a secure context). */
  passkeys: boolean;
  /** Passkeys can be offered in autofill (`mediation: 'conditional'`). */
  conditionalUi: boolean;
  /** A platform authenticator that verifies the user (Touch ID, Windows Hello, Android screen lock) is there. */
  platformAuthenticator: boolean;
}

/** Globals the passkey client uses; inject them for tests or non-browser runtimes. */
export interface ServicePasskeysDeps {
  fetch?: typeof fetch;
  indexedDB?: IDBFactory;
  crypto?: Crypto;
  credentials?: CredentialsContainer;
}

/** A passkey client's session (internal): the core's, with the passkey client's globals. */
export interface PasskeySession extends Session {
  deps: ServicePasskeysDeps;
}
