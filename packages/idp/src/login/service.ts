import type { MfaMethod } from 'service-protocol';
import type { CodeService } from '../authorization-codes/service.js';
import type { ClientService } from '../clients/service.js';
import type { ClientRecord } from '../clients/store.js';
import type { EventLog } from '../events/service.js';
import { deviceKeyFactor } from '../factors/device-key/factor.js';
import { deviceProofKeyId } from '../factors/device-key/proof.js';
import type { DeviceProver } from '../factors/device-key/prover.js';
import type { RegistrationService } from '../registration/service.js';
import { type SignIn, signInRecords } from '../sign-in/finish.js';
import type { MfaStep } from '../sign-in/mfa-step.js';
import type { LoginIssue, LoginRead, LoginStore } from './store.js';

export interface LoginDeps {
  prover: DeviceProver;
  mfa: MfaStep;
  registration: RegistrationService;
  store: LoginStore;
  clients: ClientService;
  codes: CodeService;
  events: EventLog;
  now: () => number;
}

export interface AuthenticateInput {
  email: string;
  cryptoVersion: string;
  rememberDevice: boolean;
  codeChallenge: string | null;
  deviceProof?: string;
  ip: string;
  /** The login's read, when open() made it with the client; otherwise authenticate() reads. */
  read?: LoginRead;
}

export type AuthenticateOutcome =
  | { kind: 'trusted'; code: string }
  | { kind: 'mfa'; sessionId: string; method: MfaMethod }
  /** `deviceRefused`: a device proof was sent and not accepted (the browser drops its key). */
  | { kind: 'otp'; deviceToken: string; otp: string; deviceRefused: boolean };

export interface LoginService {
  /**
   * The client of an authenticate request (the checks and errors of every browser route).
   * With a device proof, it is read in the login's one read, with the device the proof names.
   */
  open(
    credentials: {
      publishableKey?: string;
      origin?: string;
    },
    deviceProof?: string,
  ): Promise<{
    client: ClientRecord;
    read?: LoginRead;
  }>;
  authenticate(client: ClientRecord, input: AuthenticateInput): Promise<AuthenticateOutcome>;
}

/**
 * authenticate(): a remembered device that proves possession of its key gets a code at once;
 * anything else (no proof, a forged proof, another user's device, a removed key) starts an
 * email-OTP registration, answered identically for known and unknown addresses.
 *
 * A trusted-device login is two statements (login/store.ts): the client, device, user and MFA
 * state in one read, then one write that spends the challenge and issues the code and its
 * event. The proof is checked between them, with the key that read returned.
 */
export function createLoginService(deps: LoginDeps): LoginService {
  const { prover, mfa, registration, store, clients, codes, events, now } = deps;

  return {
    async open(
      credentials: { publishableKey?: string; origin?: string },
      deviceProof?: string,
    ): Promise<{ client: ClientRecord; read?: LoginRead }> {
      const kid = deviceProof === undefined ? undefined : deviceProofKeyId(deviceProof);
      if (kid === undefined || credentials.publishableKey === undefined) {
        return { client: await clients.authenticateBrowser(credentials.publishableKey, credentials.origin) };
      }
      const read = await store.read(
        { publishableKeyHash: clients.publishableKeyHash(credentials.publishableKey) },
        kid,
        prover.usedSince(),
        now(),
      );
      return { client: clients.checkBrowserOrigin(read?.client, credentials.origin), ...(read ? { read } : {}) };
    },

    async authenticate(client: ClientRecord, input: AuthenticateInput): Promise<AuthenticateOutcome> {
      let proven = false;
      const proof = input.deviceProof;
      const kid = proof === undefined ? undefined : deviceProofKeyId(proof);
      const read =
        kid === undefined ? undefined : (input.read ?? (await store.read({ clientId: client.id }, kid, prover.usedSince(), now())));
      const checked = proof && read ? await prover.checkRead(client, input.email, proof, input.cryptoVersion, read) : undefined;
      if (checked) {
        const signIn: SignIn = {
          clientId: client.id,
          userId: checked.user.id,
          device: { id: checked.deviceId },
          codeChallenge: input.codeChallenge,
          amr: [...deviceKeyFactor.first],
          authTime: Math.floor(now() / 1000),
        };
        // The challenge is spent last, after everything else matched, and only once.
        const spend = (issue?: LoginIssue) => store.spendAndIssue(checked.challenge, checked.deviceId, checked.touch, now(), issue);
        const state = read?.mfa;
        if (state && !state.remembered) {
          proven = await spend();
          if (proven) return { kind: 'mfa', ...(await mfa.startLogin(signIn, state.method)) };
        } else if (state || client.mfaPolicy !== 'required') {
          const records = signInRecords(signIn, checked.deviceId);
          const code = codes.draw(records.code);
          const prepared = events.prepare(records.event);
          if (await spend({ code, ...prepared })) {
            if (prepared.deliveries.length > 0) events.enqueued();
            return { kind: 'trusted', code: code.value };
          }
        } else {
          // A client that requires MFA sends a user without it through registration, where enrollment happens.
          proven = await spend();
        }
      }
      const started = await registration.start(client, input.email, {
        rememberDevice: input.rememberDevice,
        cryptoVersion: input.cryptoVersion,
        codeChallenge: input.codeChallenge,
        ip: input.ip,
      });
      return { kind: 'otp', ...started, deviceRefused: proof !== undefined && !proven };
    },
  };
}
