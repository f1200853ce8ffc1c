import type { MfaMethod } from 'service-protocol';
import type { OtpPurpose } from '../otp/service.js';
import type { MfaSessionRow } from './mfa-store.js';

/** A factor's name: its folder under factors/, or a factor the composition was given (factors/index.ts holds the list). */
export type FactorName = string;

/**
 * A way to prove who signs in. `first` and `second` are the amr values (RFC 8176, and our MFA
 * method names) a pass adds where the factor can stand: as the first factor of a sign-in, as
 * the MFA step, or both; absent where it cannot. A factor whose pass adds one value of several
 * (a passkey: hwk or swk) lists them all, and its check says which.
 */
export interface Factor {
  readonly name: FactorName;
  readonly first?: readonly string[];
  readonly second?: readonly string[];
}

/**
 * A factor's verdict on a proof at the MFA step: right (with the amr it adds, and `replayMark`,
 * the mark kept with the method against a replay: TOTP's time step), wrong (counted), or right
 * but already used (the guess is given back).
 */
export type FactorCheck = { kind: 'match'; amr: string[]; replayMark?: number } | { kind: 'wrong' } | { kind: 'used' };

/** The MFA session as a factor's challenge sees it: whom the code goes to, and how the session is armed. */
export interface FactorChallenge {
  /** The session's keyed id: a sent code's HMAC covers it, so a code works for its own session only. */
  sessionId: string;
  /** The send-spacing purpose (otp/): proving the method in force and confirming a new one are two steps. */
  purpose: OtpPurpose;
  /** The account's address. */
  email: string;
  /** The phone the method uses (the one being confirmed, or the user's method's), read only when needed. */
  phone: () => Promise<string>;
  /** The application the step is for (its send budget is spent), and its name as mails show it. */
  clientId: string;
  clientName: string;
  /** The browser's address; absent for a delegated change (an application's backend speaks for all its users). */
  ip: string | undefined;
  /** Arms the session: with a sent code's HMAC and expiry, or with none (nothing sent); false when the session has ended. */
  arm(otpHash: string | null, expiresAt: number | null): Promise<boolean>;
  /** Forgets a code that was not delivered, so it can never be used. */
  disarm(): Promise<void>;
}

/** What an MFA session keeps of a method being confirmed (an enrollment, or a change's new method), and what the user is shown. */
export interface NewMethod {
  phone: string | null;
  /** A sealed secret kept with the method (TOTP's). */
  secretSealed: string | null;
  /** Shown once to the user (TOTP: the secret for the authenticator app). */
  shown?: { secret: string; otpauthUri: string };
}

interface MfaFactorBase extends Factor {
  /** The MFA method this factor is (service-protocol MfaMethod). */
  readonly method: MfaMethod;
  readonly second: readonly string[];
  /** What initiateMfa tells the user. */
  readonly prompt: string;
  /** The session fields of this factor as a new method; `phone` is the one asked for (SMS). */
  prepare(input: { email: string; phone: string | null }): NewMethod;
  /** The step's challenge: send a code (email, SMS), arm the session (TOTP), or nothing (a passkey's own options route arms it). */
  challenge(target: FactorChallenge): Promise<void>;
}

/** A factor proven by a code typed at the MFA step (/v1/mfa/verify, or a delegated change). */
export interface CodeFactor extends MfaFactorBase {
  readonly proof: 'code';
  /** Whether the session holds something to guess now (a sent code expires); false: nothing is counted. */
  live(session: MfaSessionRow): boolean;
  /** Checks the code; called after the guess is counted (the MFA step's one rule, otp/). */
  verify(session: MfaSessionRow, code: string): Promise<FactorCheck>;
}

/**
 * A factor proven by a ceremony of its own routes (a passkey), which complete the session through
 * the MfaStep's `completeWith`. A typed code never stands for it (a recovery code can): `refusal`
 * says so at a sign-in step and at a change.
 */
export interface CeremonyFactor extends MfaFactorBase {
  readonly proof: 'ceremony';
  readonly refusal: { step: string; change: string };
}

/**
 * A ceremony factor's proof handed to a proof or a change's first step (the account page's
 * passkey): `begin` checks that its challenge is this session's and its user's and spends it
 * (before anything else is checked: a replay is refused), then returns the check that runs once
 * the attempt is counted.
 */
export interface CeremonyProof {
  readonly method: MfaMethod;
  begin(session: { idHash: string; userId: string }): Promise<(session: MfaSessionRow) => Promise<FactorCheck>>;
}

/** A factor that can be the user's MFA method: the MFA step dispatches to it by the session's method. */
export type MfaFactor = CodeFactor | CeremonyFactor;

/** Who asked for a set of recovery codes: the user at a sign-in (their client), or an operator ('cli' or an admin key's id). */
export type IssueCause =
  | { type: 'recovery_codes.generated'; clientId: string }
  | { type: 'recovery_codes.regenerated'; clientId: string; clientName: string }
  | { type: 'recovery_codes.regenerated'; actor: string; clientName: string };

/**
 * The stand-in for a lost method (factors/recovery-code): single-use codes of their own shape,
 * accepted at a sign-in step and at a change's first step, under the step's guess rules.
 */
export interface RecoveryCodeFactor extends Factor {
  /** True when `text` has the shape of a recovery code (not of a 6-digit code): the MFA steps tell the two apart by it. */
  isCode(text: string): boolean;
  /** Spends the code if it is one of the user's unused codes: true for exactly one caller. */
  consume(userId: string, code: string): Promise<boolean>;
  /** After a code passed an MFA step: the audit event and the user's notice, with how many are left. */
  recordUse(userId: string, client: { id: string; name: string; app?: { id: string } | undefined }): Promise<number>;
  /** Draws a new set, replaces the old one, records why; returns the codes to show once. */
  issue(userId: string, cause: IssueCause): Promise<string[]>;
  /** The set goes with the factor it backs up (operator reset). */
  removeAll(userId: string): Promise<void>;
}
