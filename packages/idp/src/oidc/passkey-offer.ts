import type { PasskeyAttestationJson, PasskeyCreationOptionsJson } from 'service-protocol';
import { type ClientService, HOSTED_CLIENT_ID } from '../clients/service.js';
import { ServiceError } from '../errors.js';
import { createKnownUserPasskeys, type KnownUserPasskeyDeps } from '../factors/passkey/known-user.js';
import type { OidcService } from './service.js';

export interface PasskeyOfferDeps extends KnownUserPasskeyDeps {
  oidc: Pick<OidcService, 'heldSignIn'>;
  clients: Pick<ClientService, 'findById'>;
}

/** What the hosted page sends: its pending request, the browser's binding cookie, the page's Origin. */
export interface OfferCaller {
  requestId: string;
  binding: string | undefined;
  origin: string | undefined;
}

export interface PasskeyOffer {
  /** Creation options for the held sign-in's user, bound to its pending request. */
  options(caller: OfferCaller): Promise<PasskeyCreationOptionsJson>;
  /** Stores the new passkey for the held sign-in's user (passkey.registered, via hosted_offer) and mails them. */
  register(
    caller: OfferCaller,
    credential: PasskeyAttestationJson,
  ): Promise<{
    deviceId: string;
    synced: boolean;
  }>;
}

/**
 * "Sign in faster next time with a passkey": after a hosted sign-in (email code or remembered
 * browser, any MFA step and recovery codes done), the page holds the sign-in (/signin/complete
 * with `hold`) and, when the service says the user has no passkey for the hosted pages, offers
 * to add one. The ceremony is bound to that held sign-in: its user only, this browser only (the
 * binding cookie), this pending request only (the challenge's `context`), within the request's
 * lifetime; the challenge is single-use and user verification required (factors/passkey/).
 * The user is mailed (passkey-added). /signin/continue then finishes the sign-in, once.
 */
export function createPasskeyOffer(deps: PasskeyOfferDeps): PasskeyOffer {
  const hostedClient = async () => {
    const client = await deps.clients.findById(HOSTED_CLIENT_ID);
    if (!client) throw new ServiceError('ERR_SESSION_INVALID', 'This sign-in has expired. Go back to the app and start again.');
    return client;
  };

  const known = createKnownUserPasskeys(deps);
  const heldUser = async (caller: OfferCaller) => {
    const held = await deps.oidc.heldSignIn(caller.requestId, caller.binding);
    return { userId: held.userId, email: held.email, context: held.context, appName: held.appName };
  };

  return {
    options: async (caller) => known.options(await hostedClient(), caller.origin, await heldUser(caller)),
    register: async (caller, credential) => known.add(await hostedClient(), caller.origin, credential, undefined, await heldUser(caller)),
  };
}
