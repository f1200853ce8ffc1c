import type { MfaMethod } from 'service-protocol';
import { CONSOLE_CLIENT_ID } from '../clients/service.js';
import { appOf, type ClientRecord } from '../clients/store.js';
import { ServiceError } from '../errors.js';
import type { FinishedSignIn, FinishSignIn, SignIn } from './finish.js';
import type { MfaStep } from './mfa-step.js';
import type { MfaMethodRecord } from './mfa-store.js';

/**
 * What the pipeline knows once a first factor passed (start → first factor → MFA step →
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
  /** A method the user chose to enroll in at this sign-in (a new device's). */
  enroll?: { method: MfaMethod; email: string; ip: string; phone?: string };
}

/** What the policy reads: everything but the sign-in itself, and the amr of its first factor. */
export type PolicyFacts = Omit<FirstFactorPassed, 'signIn'> & { amr: readonly string[] };

/**
 * The pipeline's verdict: finish now, the MFA step, an enrollment, no code without a second
 * factor (a method to set up), or none at all: the client requires a second factor and the
 * user's method cannot be one after this first factor (ERR_MFA_UNAVAILABLE).
 */
export type NextStep =
  | { kind: 'finish'; amr: string[] }
  | { kind: 'mfa'; method: MfaMethodRecord }
  | { kind: 'enroll'; enroll: NonNullable<FirstFactorPassed['enroll']> }
  | { kind: 'enrollment-required' }
  | { kind: 'mfa-unavailable' };

/** The first factor proved only the mailbox: the new-device email code (amr `otp` alone). */
export const mailboxOnly = (amr: readonly string[]) => amr.length > 0 && amr.every((value) => value === 'otp');

/**
 * The second factors a client takes: the operator console (its hosted sign-in: the hosted client
 * acting for it) only an authenticator app or a passkey (whoever reads an operator's mail must
 * not run the service); every other client any method.
 */
export const acceptedMethods = (client: Pick<ClientRecord, 'id' | 'name' | 'app'>): readonly MfaMethod[] | undefined =>
  appOf(client).id === CONSOLE_CLIENT_ID ? ['totp', 'passkey'] : undefined;

/**
 * Whether a pass of `method` after a first factor with this amr is a second factor for this
 * client. A code mailed after the mailbox was the first factor proves the same mailbox again
 * (NIST SP 800-63B counts authenticators, RFC 8176 `mfa` two different ones): it never is.
 */
export function countsAsSecond(client: Pick<ClientRecord, 'id' | 'name' | 'app'>, amr: readonly string[], method: MfaMethod): boolean {
  const accepted = acceptedMethods(client);
  if (accepted && !accepted.includes(method)) return false;
  return method !== 'email' || !mailboxOnly(amr);
}

/**
 * The MFA policy of every sign-in, in one place: what follows a first factor. A first factor
 * that counts as two finishes with `mfa`; a user with a method passes it (unless this device is
 * remembered for it) where it counts as a second factor; a user choosing a method enrolls; a
 * client that requires MFA gives a user without one no code. A method that cannot count here
 * (email after the mailbox; anything but an app or a passkey at the console) is not asked: the
 * sign-in finishes without `mfa`, except at a client that requires MFA, which refuses it; the
 * console has an operator whose method is email set up one it takes (replacing the mailbox, no
 * stronger factor is lost).
 */
export function nextStep(passed: PolicyFacts): NextStep {
  const amr = [...passed.amr];
  const { client, method, enroll } = passed;
  const required = client.mfaPolicy === 'required';
  if (passed.satisfiesMfa) return { kind: 'finish', amr: [...amr, 'mfa'] };
  if (method && countsAsSecond(client, amr, method.method)) return passed.remembered ? { kind: 'finish', amr } : { kind: 'mfa', method };
  const replaceable = !method || (method.method === 'email' && acceptedMethods(client) !== undefined);
  if (!replaceable) return required ? { kind: 'mfa-unavailable' } : { kind: 'finish', amr };
  if (enroll) {
    // An enrollment that would not count (email after the mailbox) is no way into a client that requires MFA.
    if (required && !countsAsSecond(client, amr, enroll.method)) return { kind: 'mfa-unavailable' };
    return { kind: 'enroll', enroll };
  }
  if (required) return { kind: 'enrollment-required' };
  return { kind: 'finish', amr };
}

/** What the refusal of a client that requires a second factor says when the user's method cannot be one here. */
export const MFA_UNAVAILABLE_MESSAGE =
  'This application requires a second factor other than your email inbox. Sign in on a browser you used before, or set up an authenticator app or a passkey as your second factor.';

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
 * The steps after the first factor, shared by every way in. The trusted-device sign-in decides
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
          return { kind: 'mfa', ...(await mfa.startSignIn(passed.signIn, step.method)) };
        case 'enroll': {
          const started = await mfa.startEnrollment(passed.client, passed.signIn, step.enroll);
          return started.kind === 'done' ? { kind: 'done', ...started.finished } : started;
        }
        case 'enrollment-required':
          return step;
        case 'mfa-unavailable':
          throw new ServiceError('ERR_MFA_UNAVAILABLE', MFA_UNAVAILABLE_MESSAGE);
      }
    },
  };
}
