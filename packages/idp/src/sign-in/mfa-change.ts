import type { MfaMethod } from 'service-protocol';
import type { ClientRecord } from '../clients/store.js';
import { ServiceError } from '../errors.js';
import type { CeremonyProof } from './factor.js';
import { ownAccountSignIn, type SignIn } from './finish.js';
import type { MfaSessionDeps, MfaSessions } from './mfa-session.js';

/** Where a change of method stands after a step: the current factor to prove, the new one to confirm, or done. */
export type ChangeStep =
  | { kind: 'current'; sessionId: string; currentMethod: MfaMethod }
  | { kind: 'new'; sessionId: string; method: MfaMethod; otpauthUri?: string; secret?: string }
  | { kind: 'done'; method: MfaMethod };

/**
 * A change of method asked for by the client's backend (delegation, or any later path). A user
 * with a second factor proves it first: a code of the method in force (sent, or read from the
 * authenticator app), then the new method's first code. An application alone, which for TOTP
 * receives the new secret and could compute its codes, can therefore never move a user to a
 * factor it holds. A user without one confirms the new method only.
 */
export function createMfaChange(sessions: MfaSessions, deps: Pick<MfaSessionDeps, 'store' | 'recoveryCodes' | 'now'>) {
  const { store, recoveryCodes, now } = deps;

  /** A session that confirms `method` as the new one: the factor's fields, then its challenge. */
  async function confirmNew(client: ClientRecord, signIn: SignIn, user: { email: string }, input: { method: MfaMethod; phone?: string }) {
    const prepared = sessions.factorOf(input.method).prepare({ email: user.email, phone: input.phone ?? null });
    const { sessionId, idHash } = await sessions.open(signIn, 'change', {
      method: input.method,
      phone: prepared.phone,
      totp_secret_sealed: prepared.secretSealed,
    });
    const to = { userId: signIn.userId, email: user.email, phone: prepared.phone };
    await sessions.challenge(idHash, 'change', input.method, to, client, undefined);
    return { kind: 'new' as const, sessionId, method: input.method, ...prepared.shown };
  }

  return {
    async start(
      client: ClientRecord,
      user: { id: string; email: string },
      input: { method: MfaMethod; phone?: string },
    ): Promise<Extract<ChangeStep, { kind: 'current' | 'new' }>> {
      // The new number is checked before anything is opened: a change to a number no code may reach never starts.
      if (input.method === 'sms') await sessions.admitPhone(client, input.phone);
      const signIn = ownAccountSignIn(client.id, user.id, now());
      const current = await store.findMethod(user.id);
      if (!current) return confirmNew(client, signIn, user, input);
      const { sessionId, idHash } = await sessions.open(signIn, 'change-current', {
        method: current.method,
        phone: current.phone,
        change_to: JSON.stringify({ method: input.method, phone: input.phone ?? null }),
      });
      // A code sent, or the session armed; a ceremony factor is proven by its ceremony on the account page (its options arm the
      // session), never through a backend: there a recovery code stands in (verify).
      const to = { userId: user.id, email: user.email, phone: current.phone };
      await sessions.challenge(idHash, 'change-current', current.method, to, client, undefined);
      return { kind: 'current', sessionId, currentMethod: current.method };
    },

    /**
     * One step of a change: a right code of the factor in force (its ceremony for a ceremony
     * factor, or a recovery code when that factor is lost) opens the new method's confirmation (its code sent, or its TOTP secret
     * returned) under the same session id; a right code of the new method applies it, once,
     * atomically, and the user is told by mail. A recovery code never confirms a new method.
     */
    async verify(
      client: ClientRecord,
      user: { email: string },
      sessionId: string,
      given: string | CeremonyProof,
    ): Promise<Exclude<ChangeStep, { kind: 'current' }>> {
      const { idHash, session } = await sessions.load(client, user.email, sessionId);
      if (session.purpose !== 'change' && session.purpose !== 'change-current')
        throw new ServiceError('ERR_SESSION_INVALID', 'This change is unknown or has ended.');
      const typed = typeof given === 'string';
      const recovery = typed && recoveryCodes.isCode(given);
      if (session.purpose === 'change' && (recovery || !typed))
        throw new ServiceError('ERR_REQUEST_INVALID', 'Confirm the new method with its own code, not a recovery code.');
      const factor = sessions.factorOf(session.method);
      if (factor.proof === 'ceremony' && typed && !recovery) throw new ServiceError('ERR_REQUEST_INVALID', factor.refusal.change);
      const { spent, passed } = await sessions.checkGiven(session, user.email, given);
      if (passed.recovery) await recoveryCodes.recordUse(spent.user_id, client);
      if (spent.purpose === 'change') {
        await sessions.applyMethod(spent, passed.replayMark, client.name);
        return { kind: 'done', method: spent.method as MfaMethod };
      }
      const next = JSON.parse(spent.change_to as string) as { method: MfaMethod; phone: string | null };
      const prepared = sessions.factorOf(next.method).prepare({ email: user.email, phone: next.phone });
      const started = await store.beginNewMethod(idHash, {
        method: next.method,
        phone: prepared.phone,
        totpSecretSealed: prepared.secretSealed,
        initiatedAt: now(),
      });
      if (!started) throw new ServiceError('ERR_SESSION_STEP', 'This change has moved on already.');
      const to = { userId: spent.user_id, email: user.email, phone: prepared.phone };
      await sessions.challenge(idHash, 'change', next.method, to, client, undefined);
      return { kind: 'new', sessionId, method: next.method, ...prepared.shown };
    },
  };
}
