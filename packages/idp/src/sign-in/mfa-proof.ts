import type { MfaMethod } from 'service-protocol';
import type { ClientRecord } from '../clients/store.js';
import { ServiceError } from '../errors.js';
import type { CeremonyProof } from './factor.js';
import { ownAccountSignIn } from './finish.js';
import type { MfaSessionDeps, MfaSessions } from './mfa-session.js';

/** An opened proof: its session, the method to prove, and whether it is the factor in force or the stand-in. */
export interface ProofStart {
  sessionId: string;
  method: MfaMethod;
  /** False: the user has no second factor, and a code sent to their address stands in (PROOF_STAND_IN). */
  inForce: boolean;
}

/** What a user without a second factor proves instead: a fresh code sent to the account's address. */
export const PROOF_STAND_IN: MfaMethod = 'email';

/**
 * A fresh proof of the factor in force for one action of the user's own (the account center's
 * regeneration of recovery codes, export, deletion), made of the MFA session's mechanics like a
 * change's first step: a code sent or the session armed, one guess rule (counted before
 * checking, the account lock-out), completion for exactly one caller, and no sign-in finished. A
 * ceremony factor (a passkey) is proven by its ceremony (CeremonyProof, the account page's
 * script); a recovery code stands in for a lost factor where the caller allows it; a user
 * without a second factor proves a fresh code sent to their address.
 */
export function createMfaProof(sessions: MfaSessions, deps: Pick<MfaSessionDeps, 'store' | 'recoveryCodes' | 'now'>) {
  const { store, recoveryCodes, now } = deps;
  const ended = () => new ServiceError('ERR_SESSION_INVALID', 'This verification is unknown or has ended. Start again.');

  return {
    async start(client: ClientRecord, user: { id: string; email: string }, ip: string | undefined): Promise<ProofStart> {
      const current = await store.findMethod(user.id);
      const method = current?.method ?? PROOF_STAND_IN;
      const signIn = ownAccountSignIn(client.id, user.id, now());
      const phone = current?.phone ?? null;
      const { sessionId, idHash } = await sessions.open(signIn, 'proof', { method, phone });
      // A code sent (email, SMS), the session armed (TOTP), or nothing (a passkey: its request options arm it).
      await sessions.challenge(idHash, 'proof', method, { userId: user.id, email: user.email, phone }, client, ip);
      return { sessionId, method, inForce: current !== undefined };
    },

    /**
     * Checks one proof of a session `start` opened for this client and user: the method it asks
     * for must still be the user's (or the stand-in, for a user still without one). `given` is a
     * typed code, or the ceremony of a ceremony factor (its challenge this session's, spent
     * first). Throws as a wrong MFA code does (ERR_OTP_INVALID with attemptsRemaining,
     * ERR_ACCOUNT_LOCKED); a session proven once is spent (ERR_SESSION_STEP). Returns whether a
     * recovery code stood in.
     */
    async verify(
      client: ClientRecord,
      user: { id: string; email: string },
      sessionId: string,
      given: string | CeremonyProof,
      options: { recoveryAllowed: boolean },
    ): Promise<{ recovery: boolean }> {
      const { session } = await sessions.load(client, user.email, sessionId);
      if (session.purpose !== 'proof' || session.user_id !== user.id) throw ended();
      const current = await store.findMethod(user.id);
      if (session.method !== (current?.method ?? PROOF_STAND_IN)) throw ended();
      const typed = typeof given === 'string';
      const recovery = typed && recoveryCodes.isCode(given);
      if (recovery && (!options.recoveryAllowed || !current))
        throw new ServiceError('ERR_REQUEST_INVALID', 'This needs a code of your second factor, not a recovery code.');
      const factor = sessions.factorOf(session.method);
      if (factor.proof === 'ceremony' && typed && !recovery) throw new ServiceError('ERR_REQUEST_INVALID', factor.refusal.change);
      if (session.initiated_at === null && !recovery) throw new ServiceError('ERR_SESSION_STEP', 'Ask for a code first.');
      const { spent, passed } = await sessions.checkGiven(session, user.email, given);
      if (passed.recovery) await recoveryCodes.recordUse(spent.user_id, client);
      return { recovery: passed.recovery };
    },
  };
}
