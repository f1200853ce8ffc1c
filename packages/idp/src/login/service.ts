import type { MfaMethod } from 'service-protocol';
import type { AccountStore } from '../accounts/store.js';
import type { ClientRecord } from '../clients/store.js';
import type { SecretHasher } from '../crypto/secrets.js';
import { DEVICE_CHALLENGE_TTL_SECONDS, DEVICE_LAST_USED_RESOLUTION_SECONDS } from '../defaults.js';
import { createChallengeCodec } from '../devices/challenge.js';
import { verifyDeviceProof } from '../devices/proof.js';
import type { DeviceStore } from '../devices/store.js';
import type { MfaService } from '../mfa/service.js';
import type { RegistrationService } from '../registration/service.js';
import type { FinishSignIn, SignIn } from '../sign-in/finish.js';

export interface LoginDeps {
  accounts: AccountStore;
  devices: DeviceStore;
  mfa: MfaService;
  finish: FinishSignIn;
  registration: RegistrationService;
  hash: SecretHasher;
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
  | { kind: 'otp'; deviceToken: string; otp: string };

/**
 * authenticate(): a remembered device that proves possession of its key gets a code at once;
 * anything else (no proof, a forged proof, another user's device, a removed key) starts an
 * email-OTP registration, answered identically for known and unknown addresses.
 */
export function createLoginService(deps: LoginDeps) {
  const { accounts, devices, mfa, finish, registration, hash, now } = deps;

  const challenges = createChallengeCodec(hash);

  async function trustedDevice(client: ClientRecord, input: AuthenticateInput) {
    if (!input.deviceProof) return undefined;
    const verified = await verifyDeviceProof(input.deviceProof, input.cryptoVersion, (kid) => devices.findActive(kid));
    if (!verified || verified.payload.sub !== input.email || verified.device.clientId !== client.id) return undefined;
    const user = await accounts.findById(verified.device.userId);
    if (!user || user.email !== input.email) return undefined;
    // The challenge is spent last, after everything else matched, and only once.
    const expiresAt = challenges.check(verified.payload.nonce, client.id, now());
    if (expiresAt === undefined) return undefined;
    if (!(await devices.spendChallenge(hash('device-challenge', verified.payload.nonce), client.id, expiresAt, now()))) return undefined;
    // last_used_at is for operators, not security: a write per minute per device is enough.
    const lastUsed = verified.device.lastUsedAt ?? 0;
    if (now() - lastUsed >= DEVICE_LAST_USED_RESOLUTION_SECONDS * 1000) await devices.touch(verified.device.id, now());
    return { user, deviceId: verified.device.id };
  }

  return {
    /** A single-use challenge for a remembered device to sign. */
    issueChallenge(client: ClientRecord): { challenge: string; expiresIn: number } {
      return {
        challenge: challenges.issue(client.id, now() + DEVICE_CHALLENGE_TTL_SECONDS * 1000),
        expiresIn: DEVICE_CHALLENGE_TTL_SECONDS,
      };
    },

    async authenticate(client: ClientRecord, input: AuthenticateInput): Promise<AuthenticateOutcome> {
      const trusted = await trustedDevice(client, input);
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
      return { kind: 'otp', ...started };
    },
  };
}

export type LoginService = ReturnType<typeof createLoginService>;
