import {
  isValidDeviceName,
  type MfaMethod,
  normalizePhone,
  type PasskeyAssertionJson,
  type PasskeyRequestOptionsJson,
} from 'service-protocol';
import { ACCOUNT_CLIENT_ID, type ClientService } from '../clients/service.js';
import type { ClientRecord } from '../clients/store.js';
import { type SecretHasher, safeEqual } from '../crypto/secrets.js';
import type { DeviceService } from '../devices/service.js';
import { ServiceError } from '../errors.js';
import type { PasskeyMfa } from '../factors/passkey/mfa.js';
import type { RecoveryCodeFactor } from '../sign-in/factor.js';
import type { ChangeStep } from '../sign-in/mfa-change.js';
import type { ProofStart } from '../sign-in/mfa-proof.js';
import type { MfaStep } from '../sign-in/mfa-step.js';
import type { UserService } from '../users/service.js';

/** Who acts: the account session's user (account-center/service.ts AccountCaller). */
interface Who {
  userId: string;
  email: string;
}

/** The actions that need a fresh proof of the factor in force (or its stand-in) on their form. */
export type ProvenAction = 'export' | 'delete' | 'recovery-codes';

/** What a step's form carries as its proof: a typed code, or the passkey's assertion (the page's script). */
export type StepProof = { code: string } | { assertion: PasskeyAssertionJson };

export interface AccountFactorDeps {
  clients: Pick<ClientService, 'findById'>;
  users: Pick<UserService, 'devices'>;
  mfa: MfaStep;
  /** The methods the page offers (factors/index.ts enrollableMethods): a user moves only to one of them; a passkey is added as a device, not here. */
  mfaMethods: readonly MfaMethod[];
  recoveryCodes: Pick<RecoveryCodeFactor, 'issue'>;
  deviceService: Pick<DeviceService, 'rename'>;
  /** Keys the tag that binds a proof to its action (`account-proof`). */
  hash: SecretHasher;
  /** A passkey in force proven by its ceremony on the page (factors/passkey/mfa.ts). */
  passkeyMfa: Pick<PasskeyMfa, 'proofOptions' | 'ceremonyProof'>;
  /** The service's URL: the account page's origin, which every passkey ceremony here is bound to. */
  issuer: string;
}

/**
 * The account center's second factor (docs/operations.md, "The account center"): enroll a first
 * one, change it (the MFA step's change, as delegation does: the factor in force first, or a
 * recovery code for a lost one, then the new one's first code), regenerate recovery codes and
 * prove the factor before an export or a deletion (the MFA step's proof), and rename a device. A
 * passkey in force is proven by its ceremony (`passkeyProofOptions`, then the assertion on the form).
 * The MFA sessions are the account client's, bound to the caller's user.
 */
export interface AccountFactors {
  /** The methods a user can enroll in or change to on the page. */
  changeableMethods(): MfaMethod[];
  startChange(caller: Who, input: { method: string; phone?: string | undefined }): Promise<Exclude<ChangeStep, { kind: 'done' }>>;
  /** One step of a change; a first enrollment's completion issues the first recovery codes, to show once. */
  verifyChange(
    caller: Who,
    sessionId: string,
    proof: StepProof,
  ): Promise<{ step: Exclude<ChangeStep, { kind: 'current' }>; recoveryCodes?: string[] }>;
  /**
   * Opens the proof of one action: its `sessionId` is the MFA session's id and a keyed tag of
   * (action, user, session), so a proof opened for one action is refused for another.
   */
  startProof(caller: Who, action: ProvenAction, ip: string | undefined): Promise<ProofStart>;
  /**
   * The proof of `action` (ERR_SESSION_INVALID, before any guess is counted, when it was opened
   * for another action): a recovery code stands in for export and deletion, never for new recovery codes.
   * A passkey's refusal is ERR_PASSKEY_INVALID (attemptsRemaining), counted as a wrong code is.
   */
  checkProof(caller: Who, action: ProvenAction, sessionId: string, proof: StepProof): Promise<void>;
  /** New recovery codes after a proof of the factor in force (not a recovery code); the old set stops working. */
  regenerateRecoveryCodes(caller: Who, sessionId: string, proof: StepProof): Promise<string[]>;
  /**
   * Request options to prove the passkey in force at a proof of `action` (its tag checked first)
   * or at a change's first step (`change`), bound to that MFA session, its user and this page's
   * origin; they arm the session.
   */
  passkeyProofOptions(caller: Who, action: ProvenAction | 'change', sessionId: string): Promise<PasskeyRequestOptionsJson>;
  /** Renames one of the caller's live devices or passkeys; ERR_NOT_FOUND for any other id, ERR_REQUEST_INVALID for a bad name. */
  renameDevice(caller: Who, deviceId: string, name: string): Promise<void>;
}

export function createAccountFactors(deps: AccountFactorDeps): AccountFactors {
  const { mfa } = deps;
  const user = (caller: Who) => ({ id: caller.userId, email: caller.email });
  const client = async (): Promise<ClientRecord> => {
    const found = await deps.clients.findById(ACCOUNT_CLIENT_ID);
    if (!found) throw new Error('The account center client is missing (ensureClient runs at start).');
    return found;
  };
  const changeableMethods = () => [...deps.mfaMethods];

  const origin = new URL(deps.issuer).origin;

  /** The code, or the assertion as the MFA step's ceremony proof; a refused passkey is said as one (ERR_PASSKEY_INVALID). */
  const withProof = async <T>(
    account: ClientRecord,
    proof: StepProof,
    run: (given: Parameters<MfaStep['verifyProof']>[3]) => Promise<T>,
  ) => {
    if ('code' in proof) return run(proof.code);
    try {
      return await run(deps.passkeyMfa.ceremonyProof(account, origin, proof.assertion));
    } catch (error) {
      // A refused passkey, or one more on a step whose attempts are spent: said as a passkey's refusal.
      if (error instanceof ServiceError && (error.code === 'ERR_OTP_INVALID' || error.code === 'ERR_OTP_EXPIRED'))
        throw new ServiceError('ERR_PASSKEY_INVALID', 'This passkey was not accepted.', {
          attemptsRemaining: error.details.attemptsRemaining ?? 0,
        });
      throw error;
    }
  };

  const proofTag = (action: ProvenAction, userId: string, sessionId: string) =>
    deps.hash('account-proof', `${action}\0${userId}\0${sessionId}`);
  /** The MFA session id of a proof opened for `action` by this user; ERR_SESSION_INVALID (nothing counted) for another action's. */
  const untag = (caller: Who, action: ProvenAction, tagged: string) => {
    const dot = tagged.lastIndexOf('.');
    const sessionId = tagged.slice(0, Math.max(dot, 0));
    if (dot < 0 || !safeEqual(tagged.slice(dot + 1), proofTag(action, caller.userId, sessionId)))
      throw new ServiceError('ERR_SESSION_INVALID', 'This verification was opened for another action. Start again.');
    return sessionId;
  };
  const checkProof: AccountFactors['checkProof'] = async (caller, action, tagged, proof) => {
    const sessionId = untag(caller, action, tagged);
    const account = await client();
    await withProof(account, proof, (given) =>
      mfa.verifyProof(account, user(caller), sessionId, given, { recoveryAllowed: action !== 'recovery-codes' }),
    );
  };

  return {
    changeableMethods,

    async startChange(caller, input) {
      const method = changeableMethods().find((m) => m === input.method);
      if (!method) throw new ServiceError('ERR_REQUEST_INVALID', 'Choose one of the methods offered.');
      const phone = method === 'sms' ? normalizePhone(input.phone) : undefined;
      if (method === 'sms' && !phone) throw new ServiceError('ERR_REQUEST_INVALID', 'The phone number must be in international form (+…).');
      return mfa.startChange(await client(), user(caller), { method, ...(phone ? { phone } : {}) });
    },

    async verifyChange(caller, sessionId, proof) {
      const account = await client();
      const before = await mfa.methodOf(caller.userId);
      const step = await withProof(account, proof, (given) => mfa.verifyChange(account, { email: caller.email }, sessionId, given));
      // A first method made here gets its first recovery codes, as an enrollment at a sign-in does.
      if (step.kind === 'done' && !before) {
        const codes = await deps.recoveryCodes.issue(caller.userId, { type: 'recovery_codes.generated', clientId: account.id });
        return { step, recoveryCodes: codes };
      }
      return { step };
    },

    async startProof(caller, action, ip) {
      const started = await mfa.startProof(await client(), user(caller), ip);
      return { ...started, sessionId: `${started.sessionId}.${proofTag(action, caller.userId, started.sessionId)}` };
    },

    checkProof,

    async passkeyProofOptions(caller, action, tagged) {
      const sessionId = action === 'change' ? tagged : untag(caller, action, tagged);
      const purpose = action === 'change' ? 'change-current' : 'proof';
      return deps.passkeyMfa.proofOptions(await client(), origin, caller.email, sessionId, purpose);
    },

    async regenerateRecoveryCodes(caller, sessionId, proof) {
      if (!(await mfa.methodOf(caller.userId)))
        throw new ServiceError('ERR_REQUEST_INVALID', 'Recovery codes back up a second factor: set one up first.');
      await checkProof(caller, 'recovery-codes', sessionId, proof);
      const account = await client();
      return deps.recoveryCodes.issue(caller.userId, {
        type: 'recovery_codes.regenerated',
        clientId: account.id,
        clientName: account.name,
      });
    },

    async renameDevice(caller, deviceId, name) {
      if (!isValidDeviceName(name))
        throw new ServiceError('ERR_REQUEST_INVALID', 'A device name is 1 to 64 characters, without control or direction characters.');
      const device = (await deps.users.devices(caller.userId)).find((d) => d.id === deviceId && d.removedAt === null);
      if (!device) throw new ServiceError('ERR_NOT_FOUND', 'No such device.');
      await deps.deviceService.rename(device.clientId, caller.userId, deviceId, name);
    },
  };
}
