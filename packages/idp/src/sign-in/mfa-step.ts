import type { DevicePublicJwk, MfaMethod } from 'service-protocol';
import type { ClientRecord } from '../clients/store.js';
import { randomToken } from '../crypto/secrets.js';
import { ServiceError } from '../errors.js';
import type { CeremonyProof, FactorCheck } from './factor.js';
import type { SignIn } from './finish.js';
import { type ChangeStep, createMfaChange } from './mfa-change.js';
import { createMfaProof, type ProofStart } from './mfa-proof.js';
import { createMfaSessions, type FinishedMfa, type MfaSessionDeps } from './mfa-session.js';
import type { MfaMethodRecord, MfaSessionRow } from './mfa-store.js';

export interface MfaDeps extends MfaSessionDeps {
  /** Shown in authenticator apps as the account's issuer, and in operators' notices. */
  issuerName: string;
}

export type EnrollmentStart =
  | { kind: 'done'; finished: FinishedMfa }
  | { kind: 'confirm'; sessionId: string; method: MfaMethod; otpauthUri?: string; secret?: string };

/**
 * The MFA step of every sign-in (the /v1 API, the hosted pages, a passkey sign-in that asks for
 * it), enrollment of a first method, a delegated change of method, and remember_me. Each MFA
 * method is a factor (sign-in/factor.ts, registered in factors/index.ts): the step dispatches to
 * the session's factor for its challenge and its check, and keeps the rest to itself: the
 * session's order (initiate, then verify), the guess counted before checking, completion for one
 * caller, the recovery-code stand-in, and the end of the sign-in (sign-in/finish.ts).
 */
export interface MfaStep {
  methodOf(userId: string): Promise<MfaMethodRecord | undefined>;
  /** The user has MFA: open the session that initiateMfa and verifyMfa (or a ceremony factor's routes) complete. */
  startSignIn(signIn: SignIn, method: MfaMethodRecord): Promise<{ sessionId: string; method: MfaMethod }>;
  /** Enrolls the user in a first method (a new device's sign-in): at once when the sign-in's first factor proved it, else a session to confirm it. */
  startEnrollment(
    client: ClientRecord,
    signIn: SignIn,
    input: { method: MfaMethod; phone?: string; email: string; ip: string },
  ): Promise<EnrollmentStart>;
  /** initiateMfa: the factor's challenge for a sign-in step (a code sent, the session armed, or nothing), and what to tell the user. */
  initiate(client: ClientRecord, email: string, sessionId: string, ip: string): Promise<{ method: MfaMethod; prompt: string }>;
  /**
   * verifyMfa: checks the code (counted before checking), then finishes the sign-in once. At a
   * sign-in step a recovery code may stand in for the method's code (the user is told by mail;
   * the device is not remembered). `regenerate` with the method's own code replaces the recovery
   * codes; an enrollment's confirmation issues the first set.
   */
  verify(
    client: ClientRecord,
    email: string,
    sessionId: string,
    code: string,
    rememberMe: boolean,
    regenerate?: boolean,
  ): Promise<FinishedMfa>;
  /**
   * The session of a ceremony factor's step (its own routes): a live, unverified session of this
   * client and user asking for `method` at `purpose` (the sign-in's step, an enrollment, a
   * proof, or a change's first step). `arm` marks it initiated, so its attempts count.
   */
  ceremonySession(
    client: ClientRecord,
    email: string,
    sessionId: string,
    ask: { method: MfaMethod; purpose: 'login' | 'enroll' | 'proof' | 'change-current'; arm: boolean },
  ): Promise<{ idHash: string; user: { id: string; email: string } }>;
  /**
   * Completes a ceremony factor's step as verify completes a code's: the attempt is counted
   * before `prove` runs, the session completes for one caller, then the sign-in finishes
   * (remember_me as for every method; an enrollment makes the factor the user's method and
   * issues the first recovery codes). `prove` throwing leaves the attempt spent; a refused proof
   * throws as a wrong code does (ERR_OTP_INVALID, attemptsRemaining).
   */
  completeWith(
    client: ClientRecord,
    email: string,
    idHash: string,
    prove: (session: MfaSessionRow) => Promise<FactorCheck>,
    options: { rememberMe: boolean; devicePublicKey?: DevicePublicJwk | undefined },
  ): Promise<FinishedMfa>;
  /**
   * A change of method asked for by the client's backend (delegation): the method in force is
   * proven first (a code, a ceremony factor's proof, or a recovery code standing in), then the
   * new method's first code.
   */
  startChange(
    client: ClientRecord,
    user: { id: string; email: string },
    input: { method: MfaMethod; phone?: string },
  ): Promise<Extract<ChangeStep, { kind: 'current' | 'new' }>>;
  verifyChange(
    client: ClientRecord,
    user: { email: string },
    sessionId: string,
    given: string | CeremonyProof,
  ): Promise<Exclude<ChangeStep, { kind: 'current' }>>;
  /**
   * A fresh proof of the factor in force for one action of the user's own (sign-in/mfa-proof.ts):
   * a code sent or the session armed; a user without a second factor gets a code by email.
   */
  startProof(client: ClientRecord, user: { id: string; email: string }, ip: string | undefined): Promise<ProofStart>;
  /** Checks the proof, a code or a ceremony (counted before checking, once); a recovery code stands in where `recoveryAllowed`. */
  verifyProof(
    client: ClientRecord,
    user: { id: string; email: string },
    sessionId: string,
    given: string | CeremonyProof,
    options: { recoveryAllowed: boolean },
  ): Promise<{ recovery: boolean }>;
  /**
   * Recovery when the factor in force and the recovery codes are lost: the operator removes the
   * factor and its codes (service-idp users reset-mfa). Not reachable over HTTP or delegation;
   * the user is told by mail, then enrolls again at their next new-device sign-in or through an
   * application.
   */
  resetByOperator(email: string, actor: string): Promise<MfaMethod | undefined>;
  /**
   * A new set of recovery codes made by an operator (service-idp users recovery-codes, or the
   * admin API) for a user with MFA, to hand over after checking who asks. The old set stops
   * working; the user is told by mail. Undefined when the user is unknown or has no MFA.
   */
  regenerateRecoveryCodesByOperator(email: string, actor: string): Promise<string[] | undefined>;
}

export function createMfaStep(deps: MfaDeps): MfaStep {
  const { store, enabledUsers, events, recoveryCodes, now } = deps;
  const sessions = createMfaSessions(deps);
  const change = createMfaChange(sessions, deps);
  const proof = createMfaProof(sessions, deps);

  return {
    methodOf: (userId) => store.findMethod(userId),

    async startSignIn(signIn, method) {
      const { sessionId } = await sessions.open(signIn, 'login', { method: method.method });
      return { sessionId, method: method.method };
    },

    async startEnrollment(client, signIn, input) {
      const factor = sessions.factorOf(input.method);
      // The sign-in's first factor was this very factor (the email code that just proved the address):
      // nothing more to prove, and nothing more proven: the sign-in finishes with its first factor's amr, no `mfa`.
      if (factor.first?.every((value) => signIn.amr.includes(value))) {
        await store.setMethod(
          signIn.userId,
          { method: input.method, phone: null, totpSecretSealed: null, lastTotpStep: null, version: randomToken('', 12) },
          now(),
        );
        await sessions.notify(signIn.userId, client.name, input.method, true);
        await events.record({ type: 'mfa.enrolled', userId: signIn.userId, clientId: client.id, detail: { method: input.method } });
        const codes = await recoveryCodes.issue(signIn.userId, { type: 'recovery_codes.generated', clientId: client.id });
        const finished = await deps.finish(signIn, client);
        return { kind: 'done', finished: { ...finished, recoveryCodes: codes } };
      }
      const prepared = factor.prepare({ email: input.email, phone: input.phone ?? null });
      await sessions.admitPhone(client, prepared.phone);
      const { sessionId, idHash } = await sessions.open(signIn, 'enroll', {
        method: input.method,
        phone: prepared.phone,
        totp_secret_sealed: prepared.secretSealed,
      });
      const to = { userId: signIn.userId, email: input.email, phone: prepared.phone };
      await sessions.challenge(idHash, 'enroll', input.method, to, client, input.ip);
      return { kind: 'confirm', sessionId, method: input.method, ...prepared.shown };
    },

    async initiate(client, email, sessionId, ip) {
      const { idHash, session } = await sessions.load(client, email, sessionId);
      if (session.purpose !== 'login') throw new ServiceError('ERR_SESSION_STEP', 'Confirm the new method with verifyMfa.');
      const method = session.method as MfaMethod;
      await sessions.challenge(idHash, 'login', method, { userId: session.user_id, email, phone: session.phone }, client, ip);
      return { method, prompt: sessions.factorOf(method).prompt };
    },

    async verify(client, email, sessionId, code, rememberMe, regenerate = false) {
      const recovery = recoveryCodes.isCode(code);
      if (recovery && regenerate)
        throw new ServiceError('ERR_REQUEST_INVALID', 'New recovery codes need a code of your MFA method, not a recovery code.');
      const { session } = await sessions.load(client, email, sessionId);
      if (session.purpose === 'change' || session.purpose === 'change-current' || session.purpose === 'proof')
        throw new ServiceError('ERR_SESSION_INVALID', 'This verification is unknown or has ended. Sign in again.');
      if (recovery && session.purpose !== 'login')
        throw new ServiceError('ERR_REQUEST_INVALID', 'Confirm the new method with its own code, not a recovery code.');
      const factor = sessions.factorOf(session.method);
      if (factor.proof === 'ceremony' && !recovery) throw new ServiceError('ERR_REQUEST_INVALID', factor.refusal.step);
      if (session.initiated_at === null && !recovery) throw new ServiceError('ERR_SESSION_STEP', 'Call initiateMfa before verifyMfa.');
      const { spent, passed } = await sessions.checkCode(session, email, code);
      return sessions.finishStep(client, spent, passed, { rememberMe, regenerate });
    },

    async ceremonySession(client, email, sessionId, ask) {
      const { idHash, session, user } = await sessions.load(client, email, sessionId);
      if (session.purpose !== ask.purpose || session.method !== ask.method)
        throw new ServiceError('ERR_SESSION_STEP', `This verification does not ask for a ${ask.method} here.`);
      if (ask.arm && !(await store.initiate(idHash, null, null, now())))
        throw new ServiceError('ERR_SESSION_INVALID', 'This verification has ended.');
      return { idHash, user };
    },

    async completeWith(client, email, idHash, prove, options) {
      const { spent, value } = await sessions.checkProof(idHash, email, prove);
      return sessions.finishStep(client, spent, value, { ...options, regenerate: false });
    },

    startChange: change.start,
    verifyChange: change.verify,
    startProof: proof.start,
    verifyProof: proof.verify,

    async resetByOperator(email, actor) {
      const user = await enabledUsers.findByEmail(email);
      const method = user && (await store.findMethod(user.id));
      if (!user || !method || !(await store.removeMethod(user.id))) return undefined;
      await recoveryCodes.removeAll(user.id);
      await deps.mailer.send(deps.templates.render('mfa-reset', email, { client: deps.issuerName, method: method.method }));
      await events.record({ type: 'mfa.reset', userId: user.id, actor, detail: { method: method.method } });
      return method.method;
    },

    async regenerateRecoveryCodesByOperator(email, actor) {
      const user = await enabledUsers.findByEmail(email);
      if (!user || !(await store.findMethod(user.id))) return undefined;
      return recoveryCodes.issue(user.id, { type: 'recovery_codes.regenerated', actor, clientName: deps.issuerName });
    },
  };
}
