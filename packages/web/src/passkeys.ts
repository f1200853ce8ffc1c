/**
 * service-web/passkeys: passkeys (WebAuthn) beside the core library, in their own entry point so
 * that the core stays small. Register a passkey on a device the user is signed in on, sign in
 * with one (with or without an address), or offer them in the address field's autofill
 * (conditional UI). Same conventions as the core: no method throws, every result has a `status`.
 *
 * @example
 * ```ts
 * import { ServicePasskeys } from 'service-web/passkeys';
 * const passkeys = new ServicePasskeys();
 * await passkeys.init('pk_...', 'https://id.example.com');
 * const r = await passkeys.signIn();
 * if (r.status === 'SUCCESS') await sendToBackend(r.code);
 * ```
 *
 * @packageDocumentation
 */
export { PasskeyStatus } from 'service-protocol';
export { ServicePasskeys } from './passkeys/client.js';
export type {
  AddPasskeyResult,
  PasskeyFailureResult,
  PasskeyMfaInput,
  PasskeyMfaResult,
  PasskeySignInOptions,
  PasskeySignInResult,
  PasskeySupport,
  ServicePasskeysDeps,
} from './passkeys/types.js';
export { passkeyAssertionJson, passkeyAttestationJson, passkeyCreationOptions, passkeyRequestOptions } from './webauthn-json.js';
