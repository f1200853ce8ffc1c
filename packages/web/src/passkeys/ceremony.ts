/**
 * The browser's side of a passkey operation: whether WebAuthn is there, the ceremony itself
 * (navigator.credentials.create or get), and how each way it ends becomes a status.
 */
import { PasskeyStatus } from 'service-protocol';
import type { HttpOutcome } from '../http.js';
import { reasonOf } from '../results.js';
import type { FailureResult, FailureStatus } from '../types.js';
import type { PasskeyFailureResult, PasskeySupport, ServicePasskeysDeps } from './types.js';

type PublicKeyCredentialStatics = typeof PublicKeyCredential & { isConditionalMediationAvailable?: () => Promise<boolean> };

/** The credentials container to run ceremonies with, when there is WebAuthn (or an injected one). */
export function credentialsOf(deps: ServicePasskeysDeps): CredentialsContainer | undefined {
  const credentials = deps.credentials ?? (globalThis as { navigator?: Navigator }).navigator?.credentials;
  const hasWebAuthn = deps.credentials || (globalThis as { PublicKeyCredential?: unknown }).PublicKeyCredential;
  return credentials && hasWebAuthn ? credentials : undefined;
}

/** What this browser offers (ServicePasskeys.support). */
export async function support(deps: ServicePasskeysDeps): Promise<PasskeySupport> {
  const statics = (globalThis as { PublicKeyCredential?: PublicKeyCredentialStatics }).PublicKeyCredential;
  // WebAuthn's relying party id is a domain: a page served from an IP address cannot use passkeys.
  const host = (globalThis as { location?: Location }).location?.hostname ?? '';
  const passkeys = !!statics && !!credentialsOf(deps) && !/^[\d.]+$|:|^\[/.test(host);
  const ask = async (check: (() => Promise<boolean>) | undefined) => {
    try {
      return passkeys && !!check && (await check.call(statics));
    } catch {
      return false;
    }
  };
  return {
    passkeys,
    conditionalUi: await ask(statics?.isConditionalMediationAvailable),
    platformAuthenticator: await ask(statics?.isUserVerifyingPlatformAuthenticatorAvailable),
  };
}

export function fail(status: FailureStatus | PasskeyStatus, message: string): PasskeyFailureResult {
  return { status, message };
}

export function notSupported(): PasskeyFailureResult {
  return fail(PasskeyStatus.PASSKEY_NOT_SUPPORTED, 'This browser does not support passkeys here');
}

/** A failed request of a passkey route: the core's failure, or PASSKEY_REFUSED for a credential the service refused. */
export function passkeyFailure(outcome: HttpOutcome): PasskeyFailureResult {
  const failed = outcome.failure as FailureResult;
  // ERR_PASSKEY_INVALID is the only browser-route error that is a 401 with INVALID_REQUEST (protocol errors.ts).
  if (outcome.httpStatus === 401 && failed.status === 'INVALID_REQUEST') return { ...failed, status: PasskeyStatus.PASSKEY_REFUSED };
  return failed;
}

/**
 * Runs one ceremony (`creating`: navigator.credentials.create, else get): the credential, or the
 * failure it ended with (none chosen or created is PASSKEY_CANCELLED).
 */
export async function ceremony(
  run: () => Promise<Credential | null>,
  creating: boolean,
): Promise<{ credential: PublicKeyCredential; status?: undefined } | PasskeyFailureResult> {
  let credential: Credential | null;
  try {
    credential = await run();
  } catch (error) {
    return ceremonyFailure(error, creating);
  }
  if (!credential) return fail(PasskeyStatus.PASSKEY_CANCELLED, creating ? 'No passkey was created' : 'No passkey was chosen');
  return { credential: credential as PublicKeyCredential };
}

/** WebAuthn L3 5.1.3 / 5.1.4 name the DOMExceptions a ceremony ends with. */
function ceremonyFailure(error: unknown, creating: boolean): PasskeyFailureResult {
  const name = (error as { name?: unknown })?.name;
  const message = reasonOf(error);
  switch (name) {
    case 'NotAllowedError':
    case 'AbortError':
      return fail(PasskeyStatus.PASSKEY_CANCELLED, `Cancelled or timed out: ${message}`);
    case 'InvalidStateError':
      return creating
        ? fail(PasskeyStatus.PASSKEY_EXISTS, 'This authenticator already holds a passkey for this account')
        : fail(PasskeyStatus.NO_AUTHENTICATOR, message);
    case 'NotSupportedError':
    case 'ConstraintError':
      return fail(PasskeyStatus.NO_AUTHENTICATOR, `No authenticator can do this: ${message}`);
    case 'SecurityError':
      return fail(PasskeyStatus.PASSKEY_NOT_SUPPORTED, `Not allowed on this page: ${message}`);
    default:
      return fail('SERVICE_ERROR', `The browser failed: ${message}`);
  }
}
