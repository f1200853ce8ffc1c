import type { MfaMethod } from 'service-protocol';
import type { ClientRecord } from '../clients/store.js';
import type { FinishedSignIn, FinishSignIn, SignIn } from './finish.js';
import type { MfaStep } from './mfa-step.js';
import type { MfaMethodRecord } from './mfa-store.js';

/**
 * What the pipeline knows once a first factor passed (identify → first factor → MFA step →
 * finish). Every first factor (the device key, the new-device email code, a passkey) fills
 * this in and hands it on; the hosted pages reach the same factors through the `/v1` calls.
 */
export interface FirstFactorPassed {
  client: ClientRecord;
  /** The sign-in so far; its `amr` is the first factor's. */
  signIn: SignIn;
  /** The user's MFA method, if any. */
  method: MfaMethodRecord | undefined;
  /** This device skips the method: remembered for its version (remember_me; a trusted device only). */
  remembered?: boolean;
  /** The first factor counts as two (a user-verified passkey where the application accepts it). */
  satisfiesMfa?: boolean;
  /** A method the user chose to enroll in at this sign-in (a new device's registration). */
  enroll?: { method: MfaMethod; email: string; ip: string; phone?: string };
}

/** What the policy reads: everything but the sign-in itself, and the amr of its first factor. */
export type PolicyFacts = Omit<FirstFactorPassed, 'signIn'> & { amr: readonly string[] };

/** The pipeline's verdict: finish now, the MFA step, an enrollment, or no code without a second factor. */
export type NextStep =
  | { kind: 'finish'; amr: string[] }
  | { kind: 'mfa'; method: MfaMethodRecord }
  | { kind: 'enroll'; enroll: NonNullable<FirstFactorPassed['enroll']> }
  | { kind: 'enrollment-required' };

/**
 * The MFA policy of every sign-in, in one place: what follows a first factor. A first factor
 * that counts as two finishes with `mfa`; a user with a method passes it (unless this device is
 * remembered for it); a user choosing a method enrolls; a client that requires MFA gives a user
 * without one no code; anyone else finishes.
 */
export function nextStep(passed: PolicyFacts): NextStep {
  const amr = [...passed.amr];
  if (passed.satisfiesMfa) return { kind: 'finish', amr: [...amr, 'mfa'] };
  if (passed.method) return passed.remembered ? { kind: 'finish', amr } : { kind: 'mfa', method: passed.method };
  if (passed.enroll) return { kind: 'enroll', enroll: passed.enroll };
  if (passed.client.mfaPolicy === 'required') return { kind: 'enrollment-required' };
  return { kind: 'finish', amr };
}

export type PipelineOutcome =
  | ({ kind: 'done'; recoveryCodes?: string[] } & FinishedSignIn)
  | { kind: 'mfa'; sessionId: string; method: MfaMethod }
  | { kind: 'confirm'; sessionId: string; method: MfaMethod; otpauthUri?: string; secret?: string }
  | { kind: 'enrollment-required' };

export interface SignInPipeline {
  /** Takes a passed first factor through the MFA step (or an enrollment) to the finish. */
  continue(passed: FirstFactorPassed): Promise<PipelineOutcome>;
}

/**
 * The steps after the first factor, shared by every way in. The trusted-device login decides
 * with the same `nextStep` but writes its finish in its own statement (factors/device-key/
 * sign-in.ts: the one deliberate exception, for its two-statement hot path).
 */
export function createSignInPipeline({ mfa, finish }: { mfa: MfaStep; finish: FinishSignIn }): SignInPipeline {
  return {
    async continue(passed) {
      const step = nextStep({ ...passed, amr: passed.signIn.amr });
      switch (step.kind) {
        case 'finish':
          return { kind: 'done', ...(await finish({ ...passed.signIn, amr: step.amr }, passed.client)) };
        case 'mfa':
          return { kind: 'mfa', ...(await mfa.startLogin(passed.signIn, step.method)) };
        case 'enroll': {
          const started = await mfa.startEnrollment(passed.client, passed.signIn, step.enroll);
          return started.kind === 'done' ? { kind: 'done', ...started.finished } : started;
        }
        case 'enrollment-required':
          return step;
      }
    },
  };
}
