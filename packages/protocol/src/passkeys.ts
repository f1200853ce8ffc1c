/**
 * Passkeys (WebAuthn Level 3 discoverable credentials): the four browser endpoints, their
 * bodies and the JSON forms of the WebAuthn structures that cross the wire. Binary members are
 * base64url without padding, as WebAuthn Level 3's `toJSON()` and `parse*OptionsFromJSON()`
 * spell them. Kept apart from BrowserPaths and DeviceOps so that the core service-web bundle
 * (which does not offer passkeys) carries none of it; `service-web/passkeys` imports it.
 */
import type { DeviceRequestBase } from './devices.js';
import type { MfaMethod } from './statuses.js';

/** Passkey endpoints, relative to BROWSER_PREFIX. */
export const PasskeyPaths = {
  /** A signed-in device (its device proof, op `passkeys.register`) asks for creation options. */
  registrationOptions: '/passkeys/registration/options',
  /** The authenticator's attestation: the passkey is stored and joins the user's devices. */
  register: '/passkeys/registration',
  /** Request options for a sign-in (no address needed: discoverable credentials). */
  authenticationOptions: '/passkeys/authentication/options',
  /** The authenticator's assertion: an authorization code, as every other sign-in ends. */
  authenticate: '/passkeys/authentication',
} as const;

/** `op` of the device proof that authorizes registering a passkey for the signed-in user. */
export const PASSKEY_REGISTER_OP = 'passkeys.register';

/** Browser statuses of the passkey operations, beside the core Status table (service-web/passkeys). */
export const PasskeyStatus = {
  /** This browser has no WebAuthn (or not in this context: WebAuthn needs a secure context). */
  PASSKEY_NOT_SUPPORTED: 'PASSKEY_NOT_SUPPORTED',
  /** The user dismissed the browser's prompt, or it timed out (WebAuthn NotAllowedError). */
  PASSKEY_CANCELLED: 'PASSKEY_CANCELLED',
  /** No authenticator can serve the request (none present, or none able to verify the user). */
  NO_AUTHENTICATOR: 'NO_AUTHENTICATOR',
  /** The authenticator already holds a passkey of this user for this site (excludeCredentials). */
  PASSKEY_EXISTS: 'PASSKEY_EXISTS',
  /** The service refused the passkey (unknown, revoked, cloned, another site's, or no user verification). */
  PASSKEY_REFUSED: 'PASSKEY_REFUSED',
} as const;
export type PasskeyStatus = (typeof PasskeyStatus)[keyof typeof PasskeyStatus];

type Base64Url = string;

export interface PublicKeyCredentialDescriptorJson {
  type: 'public-key';
  id: Base64Url;
  transports?: string[];
}

/** PublicKeyCredentialCreationOptionsJSON (WebAuthn L3 5.1.1), as the service sends it. */
export interface PasskeyCreationOptionsJson {
  rp: { id: string; name: string };
  user: { id: Base64Url; name: string; displayName: string };
  challenge: Base64Url;
  pubKeyCredParams: { type: 'public-key'; alg: number }[];
  timeout: number;
  excludeCredentials: PublicKeyCredentialDescriptorJson[];
  authenticatorSelection: { residentKey: 'required'; requireResidentKey: true; userVerification: 'required' };
  attestation: 'none';
}

/** PublicKeyCredentialRequestOptionsJSON (WebAuthn L3 5.1.2): no allowCredentials, so any passkey of the site may answer. */
export interface PasskeyRequestOptionsJson {
  rpId: string;
  challenge: Base64Url;
  timeout: number;
  userVerification: 'required';
}

/** RegistrationResponseJSON (WebAuthn L3 5.1): what the browser's PublicKeyCredential gives back from create(). */
export interface PasskeyAttestationJson {
  id: Base64Url;
  rawId: Base64Url;
  type: 'public-key';
  response: { clientDataJSON: Base64Url; attestationObject: Base64Url; transports?: string[] };
  authenticatorAttachment?: string;
  clientExtensionResults: Record<string, unknown>;
}

/** AuthenticationResponseJSON (WebAuthn L3 5.1): what get() gives back. */
export interface PasskeyAssertionJson {
  id: Base64Url;
  rawId: Base64Url;
  type: 'public-key';
  response: { clientDataJSON: Base64Url; authenticatorData: Base64Url; signature: Base64Url; userHandle?: Base64Url };
  authenticatorAttachment?: string;
  clientExtensionResults: Record<string, unknown>;
}

/** POST /v1/passkeys/registration/options: the calling device's proof, made with op PASSKEY_REGISTER_OP. */
export type PasskeyRegistrationOptionsRequest = DeviceRequestBase;

export interface PasskeyRegistrationOptionsResponse {
  status: 'SUCCESS';
  message: string;
  options: PasskeyCreationOptionsJson;
}

/** POST /v1/passkeys/registration */
export interface PasskeyRegistrationRequest {
  credential: PasskeyAttestationJson;
  /** The name shown in the device list (1 to 64 characters); "Passkey" when omitted. */
  name?: string;
}

export interface PasskeyRegistrationResponse {
  status: 'SUCCESS';
  message: string;
  /** The new passkey's id in the device list (rename and revoke take it). */
  deviceId: string;
  /** True when the authenticator said the passkey is backed up (synced to other devices). */
  synced: boolean;
}

/** POST /v1/passkeys/authentication/options: an empty JSON object. */
export type PasskeyAuthenticationOptionsRequest = Record<string, never>;

export interface PasskeyAuthenticationOptionsResponse {
  status: 'SUCCESS';
  message: string;
  options: PasskeyRequestOptionsJson;
}

/** POST /v1/passkeys/authentication */
export interface PasskeyAuthenticationRequest {
  credential: PasskeyAssertionJson;
  /** When the page asked for an address: the passkey must be that user's. */
  userid?: string;
  codeChallenge?: string;
  codeChallengeMethod?: 'S256';
}

export type PasskeyAuthenticationResponse =
  | { status: 'SUCCESS'; message: string; success: true; code: string }
  /** The application does not count a passkey as MFA and the user has a second factor: go on as after authenticate(). */
  | {
      status: 'MFA_REQUIRED';
      message: string;
      sessionId: string;
      method: MfaMethod;
      /** The passkey's user's address (the sign-in named none), for initiateMfa and verifyMfa. */
      userid?: string;
    };
