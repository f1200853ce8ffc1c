/**
 * WebAuthn's binary members to and from base64url (the JSON forms of WebAuthn L3 5.1), written
 * here instead of taking @simplewebauthn/browser: service-web ships with no runtime dependency,
 * and these few lines are all of it we need. Browsers with `PublicKeyCredential.toJSON()` and
 * `parse*OptionsFromJSON()` do the same; older ones (Safari before 18, Firefox before 119) lack them.
 */
import type { PasskeyAssertionJson, PasskeyAttestationJson, PasskeyCreationOptionsJson, PasskeyRequestOptionsJson } from 'service-protocol';
import { base64url } from './base64url.js';

export function fromBase64url(value: string): ArrayBuffer {
  const binary = atob(value.replace(/-/g, '+').replace(/_/g, '/'));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes.buffer;
}

const encode = (buffer: ArrayBuffer) => base64url(new Uint8Array(buffer));

/**
 * The service's creation options (the JSON of a passkey registration's `options`) as
 * `navigator.credentials.create()` takes them: the binary members decoded from base64url.
 * ServicePasskeys does this itself; this is for a page that runs a ceremony of its own against a
 * route of the service that answers such options (the hosted pages' passkey offer). The
 * credential goes back through {@link passkeyAttestationJson}.
 *
 * @example
 * ```ts
 * import { passkeyAttestationJson, passkeyCreationOptions } from 'service-web/passkeys';
 * const made = await navigator.credentials.create({ publicKey: passkeyCreationOptions(answer.options) });
 * if (made) await send({ credential: passkeyAttestationJson(made as PublicKeyCredential) });
 * ```
 */
export function passkeyCreationOptions(json: PasskeyCreationOptionsJson): PublicKeyCredentialCreationOptions {
  return creationOptions(json);
}

/**
 * The request options a service route answered (PasskeyRequestOptionsJson, binary members in
 * base64url) as `navigator.credentials.get({ publicKey })` takes them: for a page that runs the
 * ceremony itself (the account page's passkey proof). See {@link passkeyAssertionJson}.
 */
export function passkeyRequestOptions(json: PasskeyRequestOptionsJson): PublicKeyCredentialRequestOptions {
  return requestOptions(json);
}

/**
 * An assertion (the credential `navigator.credentials.get()` returned) in the JSON form the
 * service reads (WebAuthn L3 AuthenticationResponseJSON, binary members in base64url).
 */
export function passkeyAssertionJson(credential: PublicKeyCredential): PasskeyAssertionJson {
  return assertionJson(credential);
}

/**
 * A new passkey (the credential `navigator.credentials.create()` made) in the JSON form the
 * service reads (WebAuthn L3 RegistrationResponseJSON, binary members in base64url). See
 * {@link passkeyCreationOptions}.
 */
export function passkeyAttestationJson(credential: PublicKeyCredential): PasskeyAttestationJson {
  return attestationJson(credential);
}

export function creationOptions(json: PasskeyCreationOptionsJson): PublicKeyCredentialCreationOptions {
  return {
    ...json,
    challenge: fromBase64url(json.challenge),
    user: { ...json.user, id: fromBase64url(json.user.id) },
    excludeCredentials: json.excludeCredentials.map((c) => ({
      ...c,
      id: fromBase64url(c.id),
      transports: c.transports as AuthenticatorTransport[] | undefined,
    })),
  };
}

export function requestOptions(json: PasskeyRequestOptionsJson): PublicKeyCredentialRequestOptions {
  const { allowCredentials, ...rest } = json;
  return {
    ...rest,
    challenge: fromBase64url(json.challenge),
    // The MFA step names the user's passkeys; a sign-in leaves the list out (any passkey of the site).
    ...(allowCredentials
      ? {
          allowCredentials: allowCredentials.map((c) => ({
            ...c,
            id: fromBase64url(c.id),
            transports: c.transports as AuthenticatorTransport[] | undefined,
          })),
        }
      : {}),
  };
}

export function attestationJson(credential: PublicKeyCredential): PasskeyAttestationJson {
  const response = credential.response as AuthenticatorAttestationResponse;
  const transports = response.getTransports?.();
  return {
    id: credential.id,
    rawId: encode(credential.rawId),
    type: 'public-key',
    response: {
      clientDataJSON: encode(response.clientDataJSON),
      attestationObject: encode(response.attestationObject),
      ...(transports ? { transports } : {}),
    },
    ...(credential.authenticatorAttachment ? { authenticatorAttachment: credential.authenticatorAttachment } : {}),
    clientExtensionResults: {},
  };
}

export function assertionJson(credential: PublicKeyCredential): PasskeyAssertionJson {
  const response = credential.response as AuthenticatorAssertionResponse;
  return {
    id: credential.id,
    rawId: encode(credential.rawId),
    type: 'public-key',
    response: {
      clientDataJSON: encode(response.clientDataJSON),
      authenticatorData: encode(response.authenticatorData),
      signature: encode(response.signature),
      ...(response.userHandle ? { userHandle: encode(response.userHandle) } : {}),
    },
    ...(credential.authenticatorAttachment ? { authenticatorAttachment: credential.authenticatorAttachment } : {}),
    clientExtensionResults: {},
  };
}
