import type { DevicePublicJwk, MfaMethod } from 'service-protocol';
import { normalizePhone } from 'service-protocol';
import type { ClientRecord } from '../../clients/store.js';
import { randomToken, type SecretHasher, safeEqual } from '../../crypto/secrets.js';
import { NEW_DEVICE_SIGN_IN_TTL_SECONDS, OTP_MAX_ATTEMPTS } from '../../defaults.js';
import { isValidDevicePublicKey } from '../../devices/public-key.js';
import { describeUserAgent } from '../../devices/user-agent.js';
import { ServiceError } from '../../errors.js';
import type { OtpService } from '../../otp/service.js';
import type { SignIn } from '../../sign-in/finish.js';
import type { MfaStep } from '../../sign-in/mfa-step.js';
import { countsAsSecond, MFA_UNAVAILABLE_MESSAGE, nextStep, type PipelineOutcome, type SignInPipeline } from '../../sign-in/pipeline.js';
import type { EnabledUserStore } from '../../users/enabled-store.js';
import { emailCodeFirst } from './factor.js';
import type { NewDeviceStore } from './new-device-store.js';

export interface NewDeviceSignInDeps {
  store: NewDeviceStore;
  enabledUsers: EnabledUserStore;
  /** The MFA step, asked only whether the user has a method. */
  mfa: Pick<MfaStep, 'methodOf'>;
  /** MFA methods users may enroll in on this service. */
  mfaMethods: MfaMethod[];
  pipeline: SignInPipeline;
  otp: OtpService;
  hash: SecretHasher;
  now: () => number;
}

export interface StartOptions {
  rememberDevice: boolean;
  cryptoVersion: string;
  codeChallenge: string | null;
  ip: string;
}

/** What /v1/devices brings to `finish`. */
export interface NewDeviceFinishInput {
  deviceToken: string;
  devicePublicKey?: DevicePublicJwk;
  mfaMethod?: MfaMethod;
  phoneNumber?: string;
  ip: string;
  userAgent?: string;
  place?: string;
}

export interface NewDeviceSignIn {
  /** Emails a fresh OTP and returns the device token that names this sign-in. */
  start(
    client: ClientRecord,
    email: string,
    options: StartOptions,
  ): Promise<{
    deviceToken: string;
    otp: string;
  }>;
  /** Checks the emailed OTP by the one rule of otp/ (guess counted before it is compared). */
  verifyOtp(
    client: ClientRecord,
    email: string,
    deviceToken: string,
    code: string,
  ): Promise<{
    mfaEnrolled: boolean;
  }>;
  /**
   * Finishes the sign-in. A user with MFA passes it on this new device too; a user
   * choosing a method is enrolled; a client that requires MFA gets no code without it.
   * Otherwise the device key (when remembered) is stored and the code issued.
   */
  finish(client: ClientRecord, email: string, input: NewDeviceFinishInput): Promise<NewDeviceFinishOutcome>;
}

/**
 * A new device's sign-in: an emailed OTP proves the address, then the device's public key
 * (when remembered) is registered and an authorization code issued. Known and unknown addresses
 * take the same path, so responses say nothing about whether an account exists.
 */
export function createNewDeviceSignIn(deps: NewDeviceSignInDeps): NewDeviceSignIn {
  const { store, enabledUsers, mfa, mfaMethods, pipeline, otp, hash, now } = deps;

  /** Finds the sign-in behind a device token, refusing one that belongs to another client or address. */
  async function load(client: ClientRecord, email: string, deviceToken: string) {
    const idHash = hash('device-token', deviceToken);
    const state = await store.find(idHash);
    if (!state || state.clientId !== client.id || !safeEqual(state.email, email)) {
      throw new ServiceError('ERR_SESSION_INVALID', 'This sign-in session is unknown or has ended. Start again.');
    }
    return { idHash, state };
  }

  return {
    async start(client: ClientRecord, email: string, options: StartOptions): Promise<{ deviceToken: string; otp: string }> {
      const deviceToken = randomToken('dt_');
      const idHash = hash('device-token', deviceToken);
      const code = await otp.send({
        challengeId: idHash,
        purpose: 'sign-in',
        channel: { kind: 'email', to: email },
        ip: options.ip,
        clientId: client.app?.id ?? client.id,
        clientName: client.name,
        // A disabled user gets the same throttles and answer, and a challenge no code opens: nothing is sent.
        silent: await enabledUsers.isDisabled(email),
        arm: async (otpHash, otpExpiresAt) => {
          await store.insert({
            idHash,
            clientId: client.id,
            email,
            otpHash,
            rememberDevice: options.rememberDevice,
            cryptoVersion: options.cryptoVersion,
            codeChallenge: options.codeChallenge,
            createdAt: now(),
            otpExpiresAt,
            expiresAt: otpExpiresAt,
          });
          return true;
        },
        disarm: () => store.expire(idHash, now()),
      });
      return { deviceToken, otp: code };
    },

    async verifyOtp(client: ClientRecord, email: string, deviceToken: string, code: string): Promise<{ mfaEnrolled: boolean }> {
      const { idHash, state } = await load(client, email, deviceToken);
      if (state.verifiedAt !== null) throw new ServiceError('ERR_SESSION_STEP', 'This code was already accepted. Register the device now.');
      await otp.check({
        email,
        maxAttempts: OTP_MAX_ATTEMPTS,
        live: true, // spendAttempt refuses an expired code itself
        spend: () => store.spendAttempt(idHash, OTP_MAX_ATTEMPTS, now()),
        compare: async (spent) => (otp.matchesStored(idHash, spent.otpHash, code) ? { kind: 'match', value: null } : { kind: 'wrong' }),
        refund: async () => {},
        complete: () => store.markVerified(idHash, now(), now() + NEW_DEVICE_SIGN_IN_TTL_SECONDS * 1000),
        attemptsOf: (spent) => spent.attempts,
      });
      // The account exists from the first verified email, whether or not a device follows.
      const user = await enabledUsers.findOrCreate(email, now());
      if (!user) throw new ServiceError('ERR_SESSION_INVALID', 'This sign-in session is unknown or has ended. Start again.');
      return { mfaEnrolled: (await mfa.methodOf(user.id)) !== undefined };
    },

    async finish(client: ClientRecord, email: string, input: NewDeviceFinishInput): Promise<NewDeviceFinishOutcome> {
      if (input.devicePublicKey && !isValidDevicePublicKey(input.devicePublicKey)) {
        throw new ServiceError('ERR_DEVICE_KEY_INVALID', 'The device public key is not a valid P-256 key.');
      }
      if (input.mfaMethod && !mfaMethods.includes(input.mfaMethod)) {
        throw new ServiceError('ERR_REQUEST_INVALID', `MFA by ${input.mfaMethod} is not available on this service.`);
      }
      const phone = input.mfaMethod === 'sms' ? normalizePhone(input.phoneNumber ?? '') : undefined;
      if (input.mfaMethod === 'sms' && !phone) {
        throw new ServiceError('ERR_REQUEST_INVALID', 'MFA by SMS needs phoneNumber in E.164 form, such as +14155550100.');
      }
      // A number the send rules refuse (otp/send-rules.ts) is refused before the sign-in is completed.
      if (phone) await otp.admit(client.app?.id ?? client.id, { kind: 'sms', to: phone });
      const { idHash, state } = await load(client, email, input.deviceToken);
      if (state.verifiedAt === null) throw new ServiceError('ERR_SESSION_STEP', 'Verify the emailed code before registering the device.');
      const user = await enabledUsers.findOrCreate(email, now());
      if (!user) throw new ServiceError('ERR_SESSION_INVALID', 'This sign-in session is unknown or has ended. Start again.');
      const method = await mfa.methodOf(user.id);
      const enroll = input.mfaMethod ? { method: input.mfaMethod, email, ip: input.ip, ...(phone ? { phone } : {}) } : undefined;
      const facts = { client, method, ...(enroll ? { enroll } : {}) };
      // A client that requires MFA gives a user without a method no code: the sign-in stays
      // open (asked before it is completed), and the page calls verifyDevice again with one it
      // counts after the email code (not email: the same mailbox; at the console, an app or a passkey).
      // A method that cannot be a second factor here is refused before anything changes.
      const step = nextStep({ ...facts, amr: emailCodeFirst }).kind;
      if (step === 'enrollment-required')
        return { kind: 'enroll', methods: mfaMethods.filter((m) => countsAsSecond(client, emailCodeFirst, m)) };
      if (step === 'mfa-unavailable') throw new ServiceError('ERR_MFA_UNAVAILABLE', MFA_UNAVAILABLE_MESSAGE);
      const done = await store.complete(idHash, now());
      if (!done) throw new ServiceError('ERR_SESSION_INVALID', 'This sign-in session is complete or has expired. Start again.');
      const signIn: SignIn = {
        clientId: client.id,
        userId: user.id,
        device:
          done.rememberDevice && input.devicePublicKey
            ? {
                publicJwk: { ...input.devicePublicKey },
                cryptoVersion: done.cryptoVersion,
                ...describeUserAgent(input.userAgent),
                ...(input.place ? { place: input.place } : {}),
              }
            : null,
        codeChallenge: done.codeChallenge,
        amr: [...emailCodeFirst],
        authTime: Math.floor(state.verifiedAt / 1000),
      };
      const outcome = await pipeline.continue({ ...facts, signIn });
      // Asked above, before the sign-in was completed.
      if (outcome.kind === 'enrollment-required') throw new Error('unreachable: enrollment was asked before completing');
      return outcome;
    },
  };
}

export type NewDeviceFinishOutcome = Exclude<PipelineOutcome, { kind: 'enrollment-required' }> | { kind: 'enroll'; methods: MfaMethod[] };
