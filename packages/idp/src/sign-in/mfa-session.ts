import type { DevicePublicJwk, MfaMethod } from 'service-protocol';
import type { ClientRecord } from '../clients/store.js';
import { randomToken, type SecretHasher, safeEqual } from '../crypto/secrets.js';
import { MFA_MAX_ATTEMPTS, MFA_SESSION_TTL_SECONDS } from '../defaults.js';
import { ServiceError } from '../errors.js';
import type { EventLog } from '../events/service.js';
import type { Mailer } from '../mail/mailer.js';
import type { MailTemplates } from '../mail/templates.js';
import type { OtpPurpose, OtpService } from '../otp/service.js';
import type { EnabledUserStore, User } from '../users/enabled-store.js';
import type { CeremonyProof, FactorCheck, MfaFactor, RecoveryCodeFactor } from './factor.js';
import type { FinishedSignIn, FinishSignIn, SignIn } from './finish.js';
import type { MfaSessionRow, MfaStore } from './mfa-store.js';

export interface MfaSessionDeps {
  store: MfaStore;
  enabledUsers: EnabledUserStore;
  finish: FinishSignIn;
  otp: OtpService;
  hash: SecretHasher;
  events: EventLog;
  /** Tells the user, on the address we know, of every enrollment and change (ASVS 2.5.5). */
  mailer: Mailer;
  templates: MailTemplates;
  /** The MFA methods' factors (factors/index.ts): the step dispatches to one by the session's method. */
  factors: readonly MfaFactor[];
  /** Single-use codes that stand in for the method in force (sign-in step, a change's first step). */
  recoveryCodes: RecoveryCodeFactor;
  now: () => number;
  rememberMs: number;
}

/** `proof`: the factor in force proven for one action of the user's own (the account center), no sign-in finished. */
export type SessionPurpose = 'login' | 'enroll' | 'change-current' | 'change' | 'proof';

/** The send-spacing purpose of each session's code: proving the current factor and confirming the new one are two steps. */
const SEND_PURPOSE: Record<SessionPurpose, OtpPurpose> = {
  login: 'mfa',
  enroll: 'mfa-enroll',
  'change-current': 'mfa-change-current',
  change: 'mfa-change',
  proof: 'mfa-proof',
};

/** A finished MFA step; `recoveryCodes` when it issued a set (enrollment, regeneration), to show once. */
export type FinishedMfa = FinishedSignIn & { recoveryCodes?: string[] };

/** A proof that passed a step: the amr it adds, the factor's replay mark, and whether a recovery code stood in. */
export interface Passed {
  amr: string[];
  replayMark?: number | undefined;
  recovery: boolean;
}

export interface MfaSessions {
  factorOf: (method: string) => MfaFactor;
  /**
   * Refuses, before a session is opened, a new phone number the send rules exclude for the
   * client's application (otp/send-rules.ts: its countries, premium and unallocated ranges).
   */
  admitPhone: (client: { id: string; app?: { id: string } | undefined }, phone: string | null | undefined) => Promise<void>;
  open: (
    signIn: SignIn,
    purpose: SessionPurpose,
    fields: {
      method: MfaMethod;
      phone?: string | null;
      totp_secret_sealed?: string | null;
      change_to?: string | null;
    },
  ) => Promise<{
    sessionId: string;
    idHash: string;
  }>;
  load: (
    client: ClientRecord,
    email: string,
    sessionId: string,
  ) => Promise<{
    idHash: string;
    session: MfaSessionRow;
    user: User;
  }>;
  challenge: (
    idHash: string,
    purpose: SessionPurpose,
    method: MfaMethod,
    to: {
      userId: string;
      email: string;
      phone: string | null;
    },
    /** The client the step is for: the send budget of its application (the app a hosted page acts for) is spent. */
    client: { id: string; name: string; app?: { id: string } | undefined },
    ip: string | undefined,
  ) => Promise<void>;
  checkCode: (
    session: MfaSessionRow,
    email: string,
    code: string,
  ) => Promise<{
    spent: MfaSessionRow;
    passed: Passed;
  }>;
  checkGiven: (
    session: MfaSessionRow,
    email: string,
    given: string | CeremonyProof,
  ) => Promise<{
    spent: MfaSessionRow;
    passed: Passed;
  }>;
  checkProof: (
    idHash: string,
    email: string,
    prove: (session: MfaSessionRow) => Promise<FactorCheck>,
  ) => Promise<{
    spent: MfaSessionRow;
    value: Passed;
  }>;
  applyMethod: (spent: MfaSessionRow, replayMark: number | undefined, clientName: string) => Promise<string>;
  notify: (userId: string, clientName: string, method: MfaMethod, enrolled: boolean) => Promise<void>;
  finishStep: (
    client: ClientRecord,
    spent: MfaSessionRow,
    passed: Passed,
    options: {
      rememberMe: boolean;
      regenerate: boolean;
      /** A new device's key made by service-web/passkeys (which keeps it): replaces the pending one. */
      devicePublicKey?: DevicePublicJwk | undefined;
    },
  ) => Promise<FinishedMfa>;
}

/**
 * The MFA session's mechanics, shared by the sign-in step (mfa-step.ts) and a change of method
 * (mfa-change.ts): its rows, loading one for a caller, a factor's challenge, the one guess rule,
 * applying a new method, and the end of every step. A session is bound to one client, one user
 * and one device (remembered, or pending registration); it expires, allows MFA_MAX_ATTEMPTS
 * wrong proofs counted before checking, and completes for exactly one caller.
 */
export function createMfaSessions(deps: MfaSessionDeps): MfaSessions {
  const { store, enabledUsers, finish, otp, hash, events, recoveryCodes, now } = deps;
  const byMethod = new Map<string, MfaFactor>(deps.factors.map((factor) => [factor.method, factor]));

  function factorOf(method: string): MfaFactor {
    const factor = byMethod.get(method);
    if (!factor) throw new Error(`No factor is registered for the MFA method ${method}.`);
    return factor;
  }

  /** A new session; its id goes to the caller, its keyed hash is the row's id. */
  async function open(
    signIn: SignIn,
    purpose: SessionPurpose,
    fields: { method: MfaMethod; phone?: string | null; totp_secret_sealed?: string | null; change_to?: string | null },
  ): Promise<{ sessionId: string; idHash: string }> {
    const sessionId = randomToken('mfa_');
    const idHash = hash('mfa-session', sessionId);
    const at = now();
    const device = signIn.device;
    await store.insertSession({
      id: idHash,
      purpose,
      client_id: signIn.clientId,
      user_id: signIn.userId,
      phone: null,
      totp_secret_sealed: null,
      // A pending key may carry the id it will get (devices/pending.ts): it is still pending.
      device_id: device && !('publicJwk' in device) ? device.id : null,
      pending_device: device && 'publicJwk' in device ? JSON.stringify(device) : null,
      code_challenge: signIn.codeChallenge,
      amr: JSON.stringify(signIn.amr),
      auth_time: signIn.authTime,
      otp_hash: null,
      otp_expires_at: null,
      attempts: 0,
      created_at: at,
      initiated_at: null,
      verified_at: null,
      expires_at: at + MFA_SESSION_TTL_SECONDS * 1000,
      change_to: null,
      ...fields,
    });
    return { sessionId, idHash };
  }

  /** The session a caller names: live, unverified, of this client and of the user with this address. */
  async function load(client: ClientRecord, email: string, sessionId: string) {
    const idHash = hash('mfa-session', sessionId);
    const session = await store.findSession(idHash);
    const user = session && (await enabledUsers.findById(session.user_id));
    if (!session || !user || session.client_id !== client.id || !safeEqual(user.email, email) || Number(session.expires_at) <= now()) {
      throw new ServiceError('ERR_SESSION_INVALID', 'This verification is unknown or has ended. Sign in again.');
    }
    if (session.verified_at !== null) throw new ServiceError('ERR_SESSION_STEP', 'This verification is already complete.');
    return { idHash, session, user };
  }

  /** The factor's challenge for a session: a code sent through otp/ (the one sender), the session armed, or nothing. */
  async function challenge(
    idHash: string,
    purpose: SessionPurpose,
    method: MfaMethod,
    to: { userId: string; email: string; phone: string | null },
    client: { id: string; name: string; app?: { id: string } | undefined },
    ip: string | undefined,
  ): Promise<void> {
    await factorOf(method).challenge({
      sessionId: idHash,
      purpose: SEND_PURPOSE[purpose],
      email: to.email,
      // The session's phone (a method being confirmed, the method in force at a change), else the user's method's.
      phone: async () => to.phone ?? (await store.findMethod(to.userId))?.phone ?? '',
      clientId: client.app?.id ?? client.id,
      clientName: client.name,
      ip,
      arm: (otpHash, expiresAt) => store.initiate(idHash, otpHash, expiresAt, now()),
      disarm: () => store.clearOtp(idHash),
    });
  }

  /**
   * The checks every typed code passes, by the one rule of otp/ (recovery codes included: the
   * same attempt cap and account lock-out); the session completes for exactly one caller. A
   * recovery code (told apart by its shape) is spent by this very check; anything else goes to
   * the session's factor.
   */
  async function checkCode(session: MfaSessionRow, email: string, code: string): Promise<{ spent: MfaSessionRow; passed: Passed }> {
    const idHash = session.id;
    // A recovery code needs no sent code (the factor may be lost): always live, no initiateMfa needed.
    const recovery = recoveryCodes.isCode(code);
    const factor = factorOf(session.method);
    const { spent, value } = await otp.check<MfaSessionRow, Passed>({
      email,
      maxAttempts: MFA_MAX_ATTEMPTS,
      // No live code: nothing to guess, so nothing is counted. A new code can be sent.
      live: recovery || (factor.proof === 'code' && factor.live(session)),
      spend: () => store.spendAttempt(idHash, MFA_MAX_ATTEMPTS, now(), { initiated: !recovery }),
      compare: async (row) => {
        if (recovery)
          return (await recoveryCodes.consume(row.user_id, code))
            ? { kind: 'match', value: { amr: [...(recoveryCodes.second ?? [])], recovery: true } }
            : { kind: 'wrong' };
        if (factor.proof !== 'code') return { kind: 'wrong' };
        return passedOf(await factor.verify(row, code));
      },
      refund: () => store.refundAttempt(idHash),
      complete: () => store.markVerified(idHash, now()),
      attemptsOf: (row) => Number(row.attempts),
    });
    return { spent, passed: value };
  }

  /**
   * A proof made outside the step (a ceremony factor's routes): the attempt is counted before
   * `prove` runs, under the same cap and account lock-out, and the session completes for one
   * caller. `prove` throwing leaves the attempt spent.
   */
  async function checkProof(idHash: string, email: string, prove: (session: MfaSessionRow) => Promise<FactorCheck>) {
    return otp.check<MfaSessionRow, Passed>({
      email,
      maxAttempts: MFA_MAX_ATTEMPTS,
      live: true, // spendAttempt refuses an ended or unarmed session itself
      spend: () => store.spendAttempt(idHash, MFA_MAX_ATTEMPTS, now()),
      compare: async (row) => passedOf(await prove(row)),
      refund: () => store.refundAttempt(idHash),
      complete: () => store.markVerified(idHash, now()),
      attemptsOf: (row) => Number(row.attempts),
    });
  }

  /**
   * A typed code (checkCode), or the ceremony of the session's own factor: its challenge spent
   * first (CeremonyProof.begin), then the attempt counted before its check (checkProof).
   */
  async function checkGiven(session: MfaSessionRow, email: string, given: string | CeremonyProof) {
    if (typeof given === 'string') return checkCode(session, email, given);
    if (factorOf(session.method).proof !== 'ceremony' || given.method !== session.method)
      throw new ServiceError('ERR_REQUEST_INVALID', 'This verification does not ask for this proof.');
    const prove = await given.begin({ idHash: session.id, userId: session.user_id });
    const { spent, value } = await checkProof(session.id, email, prove);
    return { spent, passed: value };
  }

  /** Makes the session's method the user's method, under a new version (ending every remember_me), and says so by mail. */
  async function applyMethod(spent: MfaSessionRow, replayMark: number | undefined, clientName: string): Promise<string> {
    const version = randomToken('', 12);
    const method = spent.method as MfaMethod;
    const previous = await store.findMethod(spent.user_id);
    await store.setMethod(
      spent.user_id,
      { method, phone: spent.phone, totpSecretSealed: spent.totp_secret_sealed, lastTotpStep: replayMark ?? null, version },
      now(),
    );
    await notify(spent.user_id, clientName, method, previous === undefined);
    const type = previous === undefined ? 'mfa.enrolled' : 'mfa.changed';
    await events.record({ type, userId: spent.user_id, clientId: spent.client_id, detail: { method } });
    return version;
  }

  /** The notice of an enrollment or a change, to the account's address. A lost notice must not undo the change. */
  async function notify(userId: string, clientName: string, method: MfaMethod, enrolled: boolean) {
    const user = await enabledUsers.findById(userId);
    if (!user) return;
    await deps.mailer
      .send(deps.templates.render(enrolled ? 'mfa-enrolled' : 'mfa-changed', user.email, { client: clientName, method }))
      .catch(() => undefined);
  }

  /** The end of every MFA step: the method applied (enrollment), the sign-in finished, remember_me, recovery codes. */
  const finishStep: MfaSessions['finishStep'] = async (client, spent, passed, options) => {
    const { rememberMe, regenerate } = options;
    const version =
      spent.purpose === 'enroll'
        ? await applyMethod(spent, passed.replayMark, client.name)
        : ((await store.findMethod(spent.user_id))?.version ?? '');
    const pending = spent.pending_device ? (JSON.parse(spent.pending_device) as Extract<SignIn['device'], { publicJwk: unknown }>) : null;
    // Only a step that asked to remember a new device registers one: the key just changes hands.
    if (pending && options.devicePublicKey) pending.publicJwk = { ...options.devicePublicKey };
    const finished = await finish(
      {
        clientId: spent.client_id,
        userId: spent.user_id,
        device: spent.device_id ? { id: spent.device_id } : pending,
        codeChallenge: spent.code_challenge,
        // Once each (RFC 8176 lists methods): a remembered device's swk and a synced passkey's swk are one value.
        amr: [...new Set([...(JSON.parse(spent.amr) as string[]), 'mfa', ...passed.amr])],
        authTime: Number(spent.auth_time),
      },
      client,
    );
    const deviceId = spent.device_id ?? finished.deviceId;
    // A recovery code is a way back in, not a factor to skip later: remember_me needs the method itself.
    if (rememberMe && deviceId && !passed.recovery) await store.remember(deviceId, spent.user_id, version, now() + deps.rememberMs);
    if (passed.recovery) await recoveryCodes.recordUse(spent.user_id, client);
    const issued =
      spent.purpose === 'enroll'
        ? await recoveryCodes.issue(spent.user_id, { type: 'recovery_codes.generated', clientId: client.id })
        : regenerate && !passed.recovery
          ? await recoveryCodes.issue(spent.user_id, { type: 'recovery_codes.regenerated', clientId: client.id, clientName: client.name })
          : undefined;
    return issued ? { ...finished, recoveryCodes: issued } : finished;
  };

  async function admitPhone(client: { id: string; app?: { id: string } | undefined }, phone: string | null | undefined) {
    if (phone) await deps.otp.admit(client.app?.id ?? client.id, { kind: 'sms', to: phone });
  }

  return { factorOf, admitPhone, open, load, challenge, checkCode, checkGiven, checkProof, applyMethod, notify, finishStep };
}

/** A factor's verdict as the guess rule of otp/ takes it. */
function passedOf(check: FactorCheck): { kind: 'match'; value: Passed } | { kind: 'wrong' } | { kind: 'used' } {
  return check.kind === 'match' ? { kind: 'match', value: { amr: check.amr, replayMark: check.replayMark, recovery: false } } : check;
}
