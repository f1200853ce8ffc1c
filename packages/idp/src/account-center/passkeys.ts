import type { PasskeyAttestationJson, PasskeyCreationOptionsJson } from 'service-protocol';
import { ACCOUNT_CLIENT_ID, type ClientService } from '../clients/service.js';
import { ServiceError } from '../errors.js';
import { createKnownUserPasskeys, type KnownUserPasskeyDeps } from '../factors/passkey/known-user.js';

/** Who adds the passkey: the account session's caller (account-center/service.ts AccountCaller). */
interface PasskeyCaller {
  userId: string;
  email: string;
  deviceId: string;
  authTime: number;
}

export interface AccountPasskeyDeps extends KnownUserPasskeyDeps {
  clients: Pick<ClientService, 'findById'>;
}

/** "Add a passkey" at the account center (account-center/passkey-routes.ts). */
export interface AccountPasskeys {
  /** Creation options for the caller: the challenge is the single-use registration grant, bound to this session. */
  passkeyOptions(caller: PasskeyCaller, originHeader: string | undefined): Promise<PasskeyCreationOptionsJson>;
  /** Verifies the attestation made with this session's grant, stores the passkey and mails the user (passkey-added). */
  addPasskey(
    caller: PasskeyCaller,
    originHeader: string | undefined,
    credential: PasskeyAttestationJson,
    name: string | undefined,
  ): Promise<{ deviceId: string; synced: boolean }>;
}

/**
 * The ceremony's context (factors/passkey/challenge.ts): the account session that asked for the
 * options, its user, device and sign-in time. The creation challenge is the registration grant:
 * issued only by an account-session POST (CSRF token, this origin, a recent sign-in), live for
 * PASSKEY_CEREMONY_TTL_SECONDS, single-use (spent_tokens, on `register`), and spendable only by
 * the same session's user: another user's or another session's grant, or a replay, adds nothing.
 */
const contextOf = (who: PasskeyCaller) => `account:${who.userId}:${who.deviceId}:${who.authTime.toString(36)}`;

/**
 * The hosted pages' passkey offer's ceremony (factors/passkey/service.ts `heldRegistrationOptions`
 * and `register` with `held`), for the account center's client and its session instead of a held sign-in.
 */
export function createAccountPasskeys(deps: AccountPasskeyDeps): AccountPasskeys {
  const accountClient = async () => {
    const client = await deps.clients.findById(ACCOUNT_CLIENT_ID);
    if (!client) throw new ServiceError('ERR_SESSION_INVALID', 'The account center is not set up; sign in again.');
    return client;
  };
  const known = createKnownUserPasskeys(deps);
  const as = (caller: PasskeyCaller, client: { name: string }) => ({
    userId: caller.userId,
    email: caller.email,
    context: contextOf(caller),
    appName: client.name,
  });
  return {
    async passkeyOptions(caller, originHeader) {
      const client = await accountClient();
      return known.options(client, originHeader, as(caller, client));
    },
    async addPasskey(caller, originHeader, credential, name) {
      const client = await accountClient();
      return known.add(client, originHeader, credential, name, as(caller, client));
    },
  };
}
