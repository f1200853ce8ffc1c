import type { DevicePublicJwk, MfaMethod } from 'service-protocol';
import type { AccountStore } from '../accounts/store.js';
import type { ClientRecord } from '../clients/store.js';
import type { Sealer } from '../crypto/seal.js';
import { randomToken, type SecretHasher, safeEqual } from '../crypto/secrets.js';
import { MFA_MAX_ATTEMPTS, MFA_SESSION_TTL_SECONDS } from '../defaults.js';
import { ServiceError } from '../errors.js';
import type { EventLog } from '../events/service.js';
import { isRecoveryCode, type RecoveryCodes } from '../factors/recovery-code/service.js';
import { base32Encode, generateTotpSecret, matchTotp, otpauthUri } from '../factors/totp/totp.js';
import type { Mailer } from '../mail/mailer.js';
import type { MailTemplates } from '../mail/templates.js';
import type { OtpChannel, OtpMatch, OtpPurpose, OtpService } from '../otp/service.js';
import type { FinishedSignIn, FinishSignIn, SignIn } from './finish.js';
import type { MfaMethodRecord, MfaSessionRow, MfaStore } from './mfa-store.js';

export interface MfaDeps {
  store: MfaStore;
  accounts: AccountStore;
  finish: FinishSignIn;
  otp: OtpService;
  hash: SecretHasher;
  events: EventLog;
  /** Seals TOTP secrets at rest. */
  sealer: Sealer;
  /** Tells the user, on the address we know, of every enrollment and change (ASVS 2.5.5). */
  mailer: Mailer;
  templates: MailTemplates;
  /** Single-use codes that stand in for the method in force (sign-in step, a change's first step). */
  recoveryCodes: RecoveryCodes;
  now: () => number;
  rememberMs: number;
  /** Shown in authenticator apps as the account's issuer. */
  issuerName: string;
  /** How many active passkeys the user holds (any application): a passkey-MFA user keeps at least one, or falls back to email. */
  activePasskeys: (userId: string) => Promise<number>;
}

/**
 * A second factor proven outside this module (webauthn/: a passkey assertion or, at an
 * enrollment, an attestation): `match` with the amr it adds, or `wrong` (counted like a wrong code).
 */
export type FactorProof = { kind: 'match'; amr: string[] } | { kind: 'wrong' };

/** Said when a code is sent for a passkey step: the passkey is the factor, and a code cannot stand in for it (a recovery code can). */
const PASSKEY_NOT_A_CODE = 'This step needs your passkey (service-web/passkeys verifyMfa), or a recovery code.';

/** Where a change of method stands after a step: the current factor to prove, the new one to confirm, or done. */
export type ChangeStep =
  | { kind: 'current'; sessionId: string; currentMethod: MfaMethod }
  | { kind: 'new'; sessionId: string; method: MfaMethod; otpauthUri?: string; secret?: string }
  | { kind: 'done'; method: MfaMethod };

type SessionPurpose = 'login' | 'enroll' | 'change-current' | 'change';

/** The send-spacing purpose of each session's code: proving the current factor and confirming the new one are two steps. */
const SEND_PURPOSE: Record<SessionPurpose, OtpPurpose> = {
  login: 'mfa',
  enroll: 'mfa-enroll',
  'change-current': 'mfa-change-current',
  change: 'mfa-change',
};

/** A finished MFA step; `recoveryCodes` when it issued a set (enrollment, regeneration), to show once. */
export type FinishedMfa = FinishedSignIn & { recoveryCodes?: string[] };

export type EnrollmentStart =
  | { kind: 'done'; finished: FinishedMfa }
  | { kind: 'confirm'; sessionId: string; method: MfaMethod; otpauthUri?: string; secret?: string };

/**
 * Second factors: enrollment (email, SMS, TOTP), the MFA step of a sign-in, and remember_me.
 * An MFA session is bound to one client, one user and one device (remembered, or pending
 * registration); it expires, allows MFA_MAX_ATTEMPTS wrong codes counted before checking,
 * and its steps (initiate, then verify) must come in order.
 */
export function createMfaService(deps: MfaDeps) {
  const { store, accounts, finish, otp, hash, events, sealer, recoveryCodes, now } = deps;

  async function newSession(signIn: SignIn, purpose: SessionPurpose, fields: Partial<MfaSessionRow> & { method: MfaMethod }) {
    const sessionId = randomToken('mfa_');
    const at = now();
    const device = signIn.device;
    await store.insertSession({
      id: hash('mfa-session', sessionId),
      purpose,
      client_id: signIn.clientId,
      user_id: signIn.userId,
      phone: null,
      totp_secret_sealed: null,
      device_id: device && 'id' in device ? device.id : null,
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
    return sessionId;
  }

  /** Sends a fresh code by email or SMS through otp/ and arms the session with it. */
  async function sendCode(idHash: string, purpose: SessionPurpose, channel: OtpChannel, clientName: string, ip: string | undefined) {
    await otp.send({
      challengeId: idHash,
      purpose: SEND_PURPOSE[purpose],
      channel,
      ip,
      clientName,
      arm: (otpHash, expiresAt) => store.initiate(idHash, otpHash, expiresAt, now()),
      disarm: () => store.clearOtp(idHash),
    });
  }

  async function load(client: ClientRecord, email: string, sessionId: string) {
    const idHash = hash('mfa-session', sessionId);
    const session = await store.findSession(idHash);
    const user = session && (await accounts.findById(session.user_id));
    if (!session || !user || session.client_id !== client.id || !safeEqual(user.email, email) || Number(session.expires_at) <= now()) {
      throw new ServiceError('ERR_SESSION_INVALID', 'This verification is unknown or has ended. Sign in again.');
    }
    if (session.verified_at !== null) throw new ServiceError('ERR_SESSION_STEP', 'This verification is already complete.');
    return { idHash, session, user };
  }

  /**
   * The code is right for this session: a one-time code by hash, a TOTP step never used
   * before, or (`recovery`) one of the user's unused recovery codes, spent by this very check.
   * A right TOTP code of a step already used (by this or a parallel request) is `used`; a
   * recovery code used before is wrong (it proves nothing but that it was once seen).
   */
  async function codeMatches(
    idHash: string,
    session: MfaSessionRow,
    code: string,
  ): Promise<OtpMatch<{ totpStep?: number; recovery?: boolean }>> {
    if (isRecoveryCode(code))
      return (await recoveryCodes.consume(session.user_id, code)) ? { kind: 'match', value: { recovery: true } } : { kind: 'wrong' };
    if (session.method === 'passkey') return { kind: 'wrong' };
    if (session.method !== 'totp') {
      const live = Number(session.otp_expires_at) > now();
      return live && otp.matchesStored(idHash, session.otp_hash, code) ? { kind: 'match', value: {} } : { kind: 'wrong' };
    }
    // A new method (enrollment, or a change's second step) is checked against its own secret;
    // the factor in force (login, or a change's first step) against the user's, never twice a step.
    if (session.purpose === 'enroll' || session.purpose === 'change') {
      const step = matchTotp(Buffer.from(sealer.open(session.totp_secret_sealed as string), 'base64url'), code, now());
      return step === undefined ? { kind: 'wrong' } : { kind: 'match', value: { totpStep: step } };
    }
    const method = await store.findMethod(session.user_id);
    if (!method?.totpSecretSealed) return { kind: 'wrong' };
    const secret = Buffer.from(sealer.open(method.totpSecretSealed), 'base64url');
    const step = matchTotp(secret, code, now(), { lastStep: method.lastTotpStep ?? undefined });
    // Two parallel right codes for the same step: only one advances the step; the other was used.
    if (step !== undefined)
      return (await store.advanceTotpStep(session.user_id, method.version, step))
        ? { kind: 'match', value: { totpStep: step } }
        : { kind: 'used' };
    return matchTotp(secret, code, now()) === undefined ? { kind: 'wrong' } : { kind: 'used' };
  }

  /**
   * The checks every MFA code passes, by the one rule of otp/ (recovery codes included: the
   * same attempt cap and account lock-out); the session completes for exactly one caller.
   */
  async function checkCode(idHash: string, session: MfaSessionRow, email: string, code: string) {
    // A recovery code needs no sent code (the factor may be lost): always live, no initiateMfa needed.
    const recovery = isRecoveryCode(code);
    const { spent, value } = await otp.check({
      email,
      maxAttempts: MFA_MAX_ATTEMPTS,
      // No live code: nothing to guess, so nothing is counted. A new code can be sent.
      live: recovery || session.method === 'totp' || (session.otp_hash !== null && Number(session.otp_expires_at) > now()),
      spend: () => store.spendAttempt(idHash, MFA_MAX_ATTEMPTS, now(), { initiated: !recovery }),
      compare: (row) => codeMatches(idHash, row, code),
      refund: () => store.refundAttempt(idHash),
      complete: () => store.markVerified(idHash, now()),
      attemptsOf: (row) => Number(row.attempts),
    });
    return { spent, match: value };
  }

  /** Makes the session's method the user's method, under a new version (ending every remember_me), and says so by mail. */
  async function applyMethod(spent: MfaSessionRow, totpStep: number | undefined, clientName: string): Promise<string> {
    const version = randomToken('', 12);
    const method = spent.method as MfaMethod;
    const previous = await store.findMethod(spent.user_id);
    await store.setMethod(
      spent.user_id,
      { method, phone: spent.phone, totpSecretSealed: spent.totp_secret_sealed, lastTotpStep: totpStep ?? null, version },
      now(),
    );
    await notify(spent.user_id, clientName, method, previous === undefined);
    const type = previous === undefined ? 'mfa.enrolled' : 'mfa.changed';
    await events.record({ type, userId: spent.user_id, clientId: spent.client_id, detail: { method } });
    return version;
  }

  /** The notice of an enrollment or a change, to the account's address. A lost notice must not undo the change. */
  async function notify(userId: string, clientName: string, method: MfaMethod, enrolled: boolean) {
    const user = await accounts.findById(userId);
    if (!user) return;
    await deps.mailer
      .send(deps.templates.render(enrolled ? 'mfa-enrolled' : 'mfa-changed', user.email, { client: clientName, method }))
      .catch(() => undefined);
  }

  /** A session holding a new method to confirm (enrollment at registration, or a delegated change). */
  async function newMethodSession(
    client: ClientRecord,
    signIn: SignIn,
    purpose: 'enroll' | 'change',
    input: { method: MfaMethod; phone?: string; email: string; ip?: string },
  ) {
    if (input.method === 'passkey') {
      // Nothing is sent: the passkey's creation options (webauthn/, mfaEnrollmentOptions) arm the session.
      return { sessionId: await newSession(signIn, purpose, { method: 'passkey' }), method: 'passkey' as const };
    }
    if (input.method === 'totp') {
      const secret = generateTotpSecret();
      const sessionId = await newSession(signIn, purpose, {
        method: 'totp',
        totp_secret_sealed: sealer.seal(secret.toString('base64url')),
        initiated_at: now(), // nothing to send: the page shows the secret
      });
      return {
        sessionId,
        method: 'totp' as const,
        secret: base32Encode(secret),
        otpauthUri: otpauthUri({ secret, account: input.email, issuer: deps.issuerName }),
      };
    }
    const channel: OtpChannel = input.method === 'sms' ? { kind: 'sms', to: input.phone as string } : { kind: 'email', to: input.email };
    const sessionId = await newSession(signIn, purpose, { method: input.method, phone: channel.kind === 'sms' ? channel.to : null });
    await sendCode(hash('mfa-session', sessionId), purpose, channel, client.name, input.ip);
    return { sessionId, method: input.method };
  }

  return {
    methodOf: (userId: string) => store.findMethod(userId),

    isRemembered: (deviceId: string, userId: string, method: MfaMethodRecord) =>
      store.isRemembered(deviceId, userId, method.version, now()),

    /**
     * Recovery when the factor in force and the recovery codes are lost: the operator removes
     * the factor and its codes (service-idp users reset-mfa). Not reachable over HTTP or
     * delegation; the user is told by mail, then enrolls again at their next new-device
     * sign-in or through an application.
     */
    async resetByOperator(email: string): Promise<MfaMethod | undefined> {
      const user = await accounts.findByEmail(email);
      const method = user && (await store.findMethod(user.id));
      if (!user || !method || !(await store.removeMethod(user.id))) return undefined;
      await recoveryCodes.removeAll(user.id);
      await deps.mailer.send(deps.templates.render('mfa-reset', email, { client: deps.issuerName, method: method.method }));
      // Only the CLI reaches this (see above), so the operator's command is the actor.
      await events.record({ type: 'mfa.reset', userId: user.id, actor: 'cli', detail: { method: method.method } });
      return method.method;
    },

    /**
     * A new set of recovery codes made by an operator (service-idp users recovery-codes, or the
     * admin API) for a user with MFA, to hand over after checking who asks. The old set stops
     * working; the user is told by mail. Undefined when the user is unknown or has no MFA.
     */
    async regenerateRecoveryCodesByOperator(email: string, actor: string): Promise<string[] | undefined> {
      const user = await accounts.findByEmail(email);
      if (!user || !(await store.findMethod(user.id))) return undefined;
      return recoveryCodes.issue(user.id, { type: 'recovery_codes.regenerated', actor, clientName: deps.issuerName });
    },

    /** The user has MFA: open the session that initiateMfa and verifyMfa complete. */
    async startLogin(signIn: SignIn, method: MfaMethodRecord): Promise<{ sessionId: string; method: MfaMethod }> {
      return { sessionId: await newSession(signIn, 'login', { method: method.method }), method: method.method };
    },

    /** Enrolls the user in a first method; email is confirmed already (the address was just verified). */
    async startEnrollment(
      client: ClientRecord,
      signIn: SignIn,
      input: { method: MfaMethod; phone?: string; email: string; ip: string },
    ): Promise<EnrollmentStart> {
      if (input.method === 'email') {
        await store.setMethod(
          signIn.userId,
          { method: 'email', phone: null, totpSecretSealed: null, lastTotpStep: null, version: randomToken('', 12) },
          now(),
        );
        await notify(signIn.userId, client.name, 'email', true);
        await events.record({ type: 'mfa.enrolled', userId: signIn.userId, clientId: client.id, detail: { method: 'email' } });
        const codes = await recoveryCodes.issue(signIn.userId, { type: 'recovery_codes.generated', clientId: client.id });
        return { kind: 'done', finished: { ...(await finish({ ...signIn, amr: [...signIn.amr, 'mfa', 'email'] })), recoveryCodes: codes } };
      }
      return { kind: 'confirm', ...(await newMethodSession(client, signIn, 'enroll', input)) };
    },

    /**
     * A change of method asked for by the client's backend (delegation, or any later path). A
     * user with a second factor proves it first: a code of the method in force (sent, or read
     * from the authenticator app), then the new method's first code. An application alone,
     * which for TOTP receives the new secret and could compute its codes, can therefore never
     * move a user to a factor it holds. A user without one confirms the new method only.
     */
    async startChange(
      client: ClientRecord,
      user: { id: string; email: string },
      input: { method: MfaMethod; phone?: string },
    ): Promise<Extract<ChangeStep, { kind: 'current' | 'new' }>> {
      const signIn: SignIn = {
        clientId: client.id,
        userId: user.id,
        device: null,
        codeChallenge: null,
        amr: [],
        authTime: Math.floor(now() / 1000),
      };
      const current = await store.findMethod(user.id);
      if (!current) return { kind: 'new', ...(await newMethodSession(client, signIn, 'change', { ...input, email: user.email })) };
      const sessionId = await newSession(signIn, 'change-current', {
        method: current.method,
        phone: current.phone,
        change_to: JSON.stringify({ method: input.method, phone: input.phone ?? null }),
        initiated_at: current.method === 'totp' ? now() : null,
      });
      // A passkey cannot be proven through a backend: a recovery code stands in for it (verifyChange).
      if (current.method !== 'totp' && current.method !== 'passkey') {
        const channel: OtpChannel =
          current.method === 'sms' ? { kind: 'sms', to: current.phone as string } : { kind: 'email', to: user.email };
        await sendCode(hash('mfa-session', sessionId), 'change-current', channel, client.name, undefined);
      }
      return { kind: 'current', sessionId, currentMethod: current.method };
    },

    /**
     * One step of a change: a right code of the factor in force (or a recovery code, when that
     * factor is lost) opens the new method's confirmation (its code sent, or its TOTP secret
     * returned) under the same session id; a right code of the new method applies it, once,
     * atomically, and the user is told by mail. A recovery code never confirms a new method.
     */
    async verifyChange(
      client: ClientRecord,
      user: { email: string },
      sessionId: string,
      code: string,
    ): Promise<Exclude<ChangeStep, { kind: 'current' }>> {
      const { idHash, session } = await load(client, user.email, sessionId);
      if (session.purpose !== 'change' && session.purpose !== 'change-current')
        throw new ServiceError('ERR_SESSION_INVALID', 'This change is unknown or has ended.');
      if (session.purpose === 'change' && isRecoveryCode(code))
        throw new ServiceError('ERR_REQUEST_INVALID', 'Confirm the new method with its own code, not a recovery code.');
      if (session.method === 'passkey' && !isRecoveryCode(code))
        throw new ServiceError('ERR_REQUEST_INVALID', 'The current method is a passkey: confirm the change with a recovery code.');
      const { spent, match } = await checkCode(idHash, session, user.email, code);
      if (match.recovery) await recoveryCodes.recordUse(spent.user_id, client);
      if (spent.purpose === 'change') {
        await applyMethod(spent, match.totpStep, client.name);
        return { kind: 'done', method: spent.method as MfaMethod };
      }
      const next = JSON.parse(spent.change_to as string) as { method: MfaMethod; phone: string | null };
      if (next.method === 'totp') {
        const secret = generateTotpSecret();
        const started = await store.beginNewMethod(idHash, {
          method: 'totp',
          phone: null,
          totpSecretSealed: sealer.seal(secret.toString('base64url')),
          initiatedAt: now(),
        });
        if (!started) throw new ServiceError('ERR_SESSION_STEP', 'This change has moved on already.');
        return {
          kind: 'new',
          sessionId,
          method: 'totp',
          secret: base32Encode(secret),
          otpauthUri: otpauthUri({ secret, account: user.email, issuer: deps.issuerName }),
        };
      }
      if (!(await store.beginNewMethod(idHash, { method: next.method, phone: next.phone, totpSecretSealed: null, initiatedAt: now() })))
        throw new ServiceError('ERR_SESSION_STEP', 'This change has moved on already.');
      const channel: OtpChannel = next.method === 'sms' ? { kind: 'sms', to: next.phone as string } : { kind: 'email', to: user.email };
      await sendCode(idHash, 'change', channel, client.name, undefined);
      return { kind: 'new', sessionId, method: next.method };
    },

    /** initiateMfa: sends the code for an email or SMS login step; TOTP only arms the session. */
    async initiate(client: ClientRecord, email: string, sessionId: string, ip: string): Promise<MfaMethod> {
      const { idHash, session } = await load(client, email, sessionId);
      if (session.purpose !== 'login') throw new ServiceError('ERR_SESSION_STEP', 'Confirm the new method with verifyMfa.');
      const method = session.method as MfaMethod;
      // Nothing to send: the passkey's request options (webauthn/, mfaOptions) arm the session.
      if (method === 'passkey') return method;
      if (method === 'totp') {
        if (!(await store.initiate(idHash, null, null, now())))
          throw new ServiceError('ERR_SESSION_INVALID', 'This verification has ended.');
        return method;
      }
      const channel: OtpChannel =
        method === 'email' ? { kind: 'email', to: email } : { kind: 'sms', to: (await store.findMethod(session.user_id))?.phone ?? '' };
      await sendCode(idHash, 'login', channel, client.name, ip);
      return method;
    },

    /**
     * verifyMfa: checks the code (counted before checking), then finishes the sign-in once. At
     * a sign-in step a recovery code may stand in for the method's code (the user is told by
     * mail; the device is not remembered). `regenerate` with the method's own code replaces
     * the recovery codes; an enrollment's confirmation issues the first set.
     */
    async verify(
      client: ClientRecord,
      email: string,
      sessionId: string,
      otp: string,
      rememberMe: boolean,
      regenerate = false,
    ): Promise<FinishedMfa> {
      const recovery = isRecoveryCode(otp);
      if (recovery && regenerate)
        throw new ServiceError('ERR_REQUEST_INVALID', 'New recovery codes need a code of your MFA method, not a recovery code.');
      const { idHash, session } = await load(client, email, sessionId);
      if (session.purpose === 'change' || session.purpose === 'change-current')
        throw new ServiceError('ERR_SESSION_INVALID', 'This verification is unknown or has ended. Sign in again.');
      if (recovery && session.purpose !== 'login')
        throw new ServiceError('ERR_REQUEST_INVALID', 'Confirm the new method with its own code, not a recovery code.');
      if (session.method === 'passkey' && !recovery) throw new ServiceError('ERR_REQUEST_INVALID', PASSKEY_NOT_A_CODE);
      if (session.initiated_at === null && !recovery) throw new ServiceError('ERR_SESSION_STEP', 'Call initiateMfa before verifyMfa.');
      const { spent, match } = await checkCode(idHash, session, email, otp);
      return finishStep(client, spent, {
        amr: [match.recovery ? 'recovery_code' : (spent.method as MfaMethod)],
        totpStep: match.totpStep,
        recovery: match.recovery === true,
        rememberMe,
        regenerate,
      });
    },

    /**
     * The MFA session of a passkey step (webauthn/): a live, unverified session of this client
     * and user whose method is a passkey; `login` (the sign-in's MFA step) or `enroll` (a passkey
     * chosen as the method at registration). `arm` marks it initiated, so its attempts count.
     */
    async passkeySession(client: ClientRecord, email: string, sessionId: string, purpose: 'login' | 'enroll', arm: boolean) {
      const { idHash, session, user } = await load(client, email, sessionId);
      if (session.purpose !== purpose || session.method !== 'passkey')
        throw new ServiceError('ERR_SESSION_STEP', 'This verification does not ask for a passkey here.');
      if (arm && !(await store.initiate(idHash, null, null, now())))
        throw new ServiceError('ERR_SESSION_INVALID', 'This verification has ended.');
      return { idHash, session, user };
    },

    /**
     * Completes a passkey step as verifyMfa completes a code's: the attempt is counted before
     * `prove` runs (the same MFA_MAX_ATTEMPTS and account lock-out), the session completes for
     * one caller, then the sign-in finishes (remember_me as for every method; an enrollment makes
     * the passkey the user's method and issues the first recovery codes). `prove` throwing
     * leaves the attempt spent.
     */
    async verifyPasskey(
      client: ClientRecord,
      email: string,
      idHash: string,
      prove: (session: MfaSessionRow) => Promise<FactorProof>,
      rememberMe: boolean,
      devicePublicKey?: DevicePublicJwk,
    ): Promise<FinishedMfa> {
      let amr: string[] = [];
      let spent: MfaSessionRow;
      try {
        ({ spent } = await otp.check({
          email,
          maxAttempts: MFA_MAX_ATTEMPTS,
          live: true, // spendAttempt refuses an ended or unarmed session itself
          spend: () => store.spendAttempt(idHash, MFA_MAX_ATTEMPTS, now()),
          compare: async (row) => {
            const proof = await prove(row);
            if (proof.kind === 'wrong') return { kind: 'wrong' };
            amr = proof.amr;
            return { kind: 'match', value: null };
          },
          refund: () => store.refundAttempt(idHash),
          complete: () => store.markVerified(idHash, now()),
          attemptsOf: (row) => Number(row.attempts),
        }));
      } catch (error) {
        // The same counting as a wrong code, said as a passkey's refusal (PASSKEY_REFUSED in service-web/passkeys).
        if (error instanceof ServiceError && error.code === 'ERR_OTP_INVALID')
          throw new ServiceError(
            'ERR_PASSKEY_INVALID',
            'This passkey was not accepted. Use another passkey, or a recovery code.',
            error.details,
          );
        if (error instanceof ServiceError && error.code === 'ERR_OTP_EXPIRED')
          throw new ServiceError('ERR_SESSION_INVALID', 'This verification has ended or too many passkeys were refused. Sign in again.');
        throw error;
      }
      return finishStep(client, spent, { amr, totpStep: undefined, recovery: false, rememberMe, regenerate: false, devicePublicKey });
    },

    /**
     * The last passkey of a user whose MFA method is a passkey was revoked (by the user, the
     * application's backend or an operator): the method falls back to email rather than lock the
     * user out, the user is told by mail (the fall-back is never silent), and the event is
     * recorded. Nothing happens while the user keeps another passkey or has another method.
     */
    async passkeyRevoked(userId: string, context: { clientId?: string; clientName?: string; actor?: string }): Promise<boolean> {
      if ((await deps.activePasskeys(userId)) > 0) return false;
      const email = { method: 'email' as const, phone: null, totpSecretSealed: null, lastTotpStep: null, version: randomToken('', 12) };
      if (!(await store.replaceMethod(userId, 'passkey', email, now()))) return false;
      const user = await accounts.findById(userId);
      const notice =
        user &&
        deps.templates.render('mfa-passkey-fallback', user.email, { client: context.clientName ?? deps.issuerName, method: 'email' });
      // A lost notice must not undo the fall-back (the event below records it).
      if (notice) await deps.mailer.send(notice).catch(() => undefined);
      await events.record({
        type: 'mfa.changed',
        userId,
        ...(context.clientId ? { clientId: context.clientId } : {}),
        ...(context.actor ? { actor: context.actor } : {}),
        detail: { method: 'email', from: 'passkey', reason: 'last_passkey_revoked' },
      });
      return true;
    },
  };

  /** The end of every MFA step: the method applied (enrollment), the sign-in finished, remember_me, recovery codes. */
  async function finishStep(
    client: ClientRecord,
    spent: MfaSessionRow,
    step: {
      amr: string[];
      totpStep: number | undefined;
      recovery: boolean;
      rememberMe: boolean;
      regenerate: boolean;
      /** A new device's key made by service-web/passkeys (which keeps it): replaces the pending one. */
      devicePublicKey?: DevicePublicJwk | undefined;
    },
  ): Promise<FinishedMfa> {
    const { rememberMe, regenerate } = step;
    const match = { recovery: step.recovery, totpStep: step.totpStep };
    const version =
      spent.purpose === 'enroll'
        ? await applyMethod(spent, match.totpStep, client.name)
        : ((await store.findMethod(spent.user_id))?.version ?? '');
    const pending = spent.pending_device ? (JSON.parse(spent.pending_device) as Extract<SignIn['device'], { publicJwk: unknown }>) : null;
    // Only a step that asked to remember a new device registers one: the key just changes hands.
    if (pending && step.devicePublicKey) pending.publicJwk = { ...step.devicePublicKey };
    const finished = await finish({
      clientId: spent.client_id,
      userId: spent.user_id,
      device: spent.device_id ? { id: spent.device_id } : pending,
      codeChallenge: spent.code_challenge,
      // Once each (RFC 8176 lists methods): a remembered device's swk and a synced passkey's swk are one value.
      amr: [...new Set([...(JSON.parse(spent.amr) as string[]), 'mfa', ...step.amr])],
      authTime: Number(spent.auth_time),
    });
    const deviceId = spent.device_id ?? finished.deviceId;
    // A recovery code is a way back in, not a factor to skip later: remember_me needs the method itself.
    if (rememberMe && deviceId && !match.recovery) await store.remember(deviceId, spent.user_id, version, now() + deps.rememberMs);
    if (match.recovery) await recoveryCodes.recordUse(spent.user_id, client);
    const issued =
      spent.purpose === 'enroll'
        ? await recoveryCodes.issue(spent.user_id, { type: 'recovery_codes.generated', clientId: client.id })
        : regenerate && !match.recovery
          ? await recoveryCodes.issue(spent.user_id, { type: 'recovery_codes.regenerated', clientId: client.id, clientName: client.name })
          : undefined;
    return issued ? { ...finished, recoveryCodes: issued } : finished;
  }
}

export type MfaService = ReturnType<typeof createMfaService>;
