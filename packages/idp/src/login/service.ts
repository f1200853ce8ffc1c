import type { MfaMethod } from 'service-protocol';
import type { ClientRecord } from '../clients/store.js';
import type { DeviceProver } from '../devices/prover.js';
import type { MfaService } from '../mfa/service.js';
import type { RegistrationService } from '../registration/service.js';
import type { FinishSignIn, SignIn } from '../sign-in/finish.js';

export interface LoginDeps {
  prover: DeviceProver;
  mfa: MfaService;
  finish: FinishSignIn;
  registration: RegistrationService;
  now: () => number;
}

export interface AuthenticateInput {
  email: string;
  cryptoVersion: string;
  rememberDevice: boolean;
  codeChallenge: string | null;
  deviceProof?: string;
  ip: string;
}

export type AuthenticateOutcome =
  | { kind: 'trusted'; code: string }
  | { kind: 'mfa'; sessionId: string; method: MfaMethod }
  /** `deviceRefused`: a device proof was sent and not accepted (the browser drops its key). */
  | { kind: 'otp'; deviceToken: string; otp: string; deviceRefused: boolean };

/**
 * authenticate(): a remembered device that proves possession of its key gets a code at once;
 * anything else (no proof, a forged proof, another user's device, a removed key) starts an
 * email-OTP registration, answered identically for known and unknown addresses.
 */
export function createLoginService(deps: LoginDeps) {
  const { prover, mfa, finish, registration, now } = deps;

  return {
    /** A single-use challenge for a remembered device to sign. */
    issueChallenge: (client: ClientRecord) => prover.issueChallenge(client),

    async authenticate(client: ClientRecord, input: AuthenticateInput): Promise<AuthenticateOutcome> {
      const trusted = input.deviceProof ? await prover.prove(client, input.email, input.deviceProof, input.cryptoVersion) : undefined;
      if (trusted) {
        const signIn: SignIn = {
          clientId: client.id,
          userId: trusted.user.id,
          device: { id: trusted.deviceId },
          codeChallenge: input.codeChallenge,
          amr: ['swk'],
          authTime: Math.floor(now() / 1000),
        };
        const method = await mfa.methodOf(trusted.user.id);
        if (method && !(await mfa.isRemembered(trusted.deviceId, trusted.user.id, method))) {
          return { kind: 'mfa', ...(await mfa.startLogin(signIn, method)) };
        }
        // A client that requires MFA sends a user without it through registration, where enrollment happens.
        if (method || client.mfaPolicy !== 'required') return { kind: 'trusted', code: (await finish(signIn)).code };
      }
      const started = await registration.start(client, input.email, {
        rememberDevice: input.rememberDevice,
        cryptoVersion: input.cryptoVersion,
        codeChallenge: input.codeChallenge,
        ip: input.ip,
      });
      return { kind: 'otp', ...started, deviceRefused: input.deviceProof !== undefined && !trusted };
    },
  };
}

export type LoginService = ReturnType<typeof createLoginService>;
