import type { MfaMethod } from 'service-protocol';
import type { CodeService } from '../../authorization-codes/service.js';
import type { ClientRecord } from '../../clients/store.js';
import type { EventLog } from '../../events/service.js';
import { type SignIn, signInRecords } from '../../sign-in/finish.js';
import type { MfaStep } from '../../sign-in/mfa-step.js';
import { nextStep } from '../../sign-in/pipeline.js';
import { deviceKeyFactor } from './factor.js';
import { deviceProofKeyId } from './proof.js';
import type { DeviceProver } from './prover.js';
import type { DeviceKeyIssue, DeviceKeyRead, DeviceKeySignInStore } from './sign-in-store.js';

export interface DeviceKeySignInDeps {
  prover: DeviceProver;
  mfa: MfaStep;
  store: DeviceKeySignInStore;
  codes: CodeService;
  events: EventLog;
  now: () => number;
}

export interface DeviceKeyAttempt {
  email: string;
  cryptoVersion: string;
  codeChallenge: string | null;
  deviceProof: string;
  /** The sign-in's read, when the way in made it with the client (factors/start.ts); otherwise read here. */
  read?: DeviceKeyRead;
}

/**
 * The device key's verdict: signed in, at the MFA step, or not (`proven`: the proof was good and
 * its challenge spent, though the sign-in goes on by email code, as for a client that requires
 * MFA of a user without it).
 */
export type DeviceKeyOutcome =
  | { kind: 'trusted'; code: string }
  | { kind: 'mfa'; sessionId: string; method: MfaMethod }
  | { kind: 'not-signed-in'; proven: boolean };

export interface DeviceKeySignIn {
  /** The one read of a trusted sign-in (client, device, user, MFA state); the client by its publishable key or id, the device its proof names. */
  read(by: { publishableKeyHash: string } | { clientId: string }, deviceId: string): Promise<DeviceKeyRead | undefined>;
  attempt(client: ClientRecord, input: DeviceKeyAttempt): Promise<DeviceKeyOutcome>;
}

/**
 * The device key as a first factor: a remembered device proves possession of its key over a
 * fresh challenge, then the pipeline's policy (sign-in/pipeline.ts `nextStep`) decides. The finish
 * is written here, not by sign-in/finish.ts: the trusted-device sign-in is two statements
 * (sign-in-store.ts), one read and one write that spends the challenge and issues the code and
 * its event, checked against the key that read returned.
 */
export function createDeviceKeySignIn(deps: DeviceKeySignInDeps): DeviceKeySignIn {
  const { prover, mfa, store, codes, events, now } = deps;

  const read = (by: { publishableKeyHash: string } | { clientId: string }, deviceId: string) =>
    store.read(by, deviceId, prover.usedSince(), now());

  return {
    read,
    async attempt(client, input) {
      const kid = deviceProofKeyId(input.deviceProof);
      const found = kid === undefined ? undefined : (input.read ?? (await read({ clientId: client.id }, kid)));
      const checked = found ? await prover.checkRead(client, input.email, input.deviceProof, input.cryptoVersion, found) : undefined;
      if (!found || !checked) return { kind: 'not-signed-in', proven: false };
      const signIn: SignIn = {
        clientId: client.id,
        userId: checked.user.id,
        device: { id: checked.deviceId },
        codeChallenge: input.codeChallenge,
        amr: [...deviceKeyFactor.first],
        authTime: Math.floor(now() / 1000),
      };
      // The challenge is spent last, after everything else matched, and only once.
      const spend = (issue?: DeviceKeyIssue) => store.spendAndIssue(checked.challenge, checked.deviceId, checked.touch, now(), issue);
      const step = nextStep({ client, amr: signIn.amr, method: found.mfa?.method, remembered: found.mfa?.remembered ?? false });
      switch (step.kind) {
        case 'mfa':
          if (!(await spend())) return { kind: 'not-signed-in', proven: false };
          return { kind: 'mfa', ...(await mfa.startSignIn(signIn, step.method)) };
        case 'finish': {
          const records = signInRecords({ ...signIn, amr: step.amr }, checked.deviceId, client.app);
          const code = codes.draw(records.code);
          const prepared = events.prepare(records.event);
          if (!(await spend({ code, ...prepared }))) return { kind: 'not-signed-in', proven: false };
          events.written(prepared);
          return { kind: 'trusted', code: code.value };
        }
        default:
          // A client that requires MFA sends a user without it through the email code, where enrollment happens.
          return { kind: 'not-signed-in', proven: await spend() };
      }
    },
  };
}
