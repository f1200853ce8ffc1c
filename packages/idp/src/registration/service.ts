import type { DevicePublicJwk, MfaMethod } from 'service-protocol';
import type { AccountStore } from '../accounts/store.js';
import type { ClientRecord } from '../clients/store.js';
import type { CodeService } from '../codes/service.js';
import { randomDigits, randomToken, type SecretHasher, safeEqual } from '../crypto/secrets.js';
import {
  ACCOUNT_LOCKOUT_SECONDS,
  ACCOUNT_MAX_FAILURES,
  OTP_DIGITS,
  OTP_MAX_ATTEMPTS,
  OTP_TTL_SECONDS,
  REGISTRATION_TTL_SECONDS,
  SEND_PER_IP,
  SEND_PER_RECIPIENT,
} from '../defaults.js';
import { isValidDevicePublicKey } from '../devices/public-key.js';
import type { DeviceStore } from '../devices/store.js';
import { ServiceError } from '../errors.js';
import type { Mailer } from '../mail/mailer.js';
import { otpMail } from '../mail/templates.js';
import type { Throttle } from '../throttle/service.js';
import type { RegistrationStore } from './store.js';

export interface RegistrationDeps {
  store: RegistrationStore;
  accounts: AccountStore;
  devices: DeviceStore;
  codes: CodeService;
  throttle: Throttle;
  mailer: Mailer;
  hash: SecretHasher;
  now: () => number;
}

export interface StartOptions {
  rememberDevice: boolean;
  cryptoVersion: string;
  codeChallenge: string | null;
  ip: string;
}

/**
 * Registration of a new device: an emailed OTP proves the address, then the device's
 * public key is registered and an authorization code issued. Known and unknown addresses
 * take the same path, so responses say nothing about whether an account exists.
 */
export function createRegistrationService(deps: RegistrationDeps) {
  const { store, accounts, devices, codes, throttle, mailer, hash, now } = deps;
  const accountKey = (email: string) => hash('account', email);

  /** Finds the registration behind a device token, refusing one that belongs to another client or address. */
  async function load(client: ClientRecord, email: string, deviceToken: string) {
    const idHash = hash('device-token', deviceToken);
    const state = await store.find(idHash);
    if (!state || state.clientId !== client.id || !safeEqual(state.email, email)) {
      throw new ServiceError('ERR_SESSION_INVALID', 'This sign-in session is unknown or has ended. Start again.');
    }
    return { idHash, state };
  }

  return {
    /** Emails a fresh OTP and returns the device token that names this registration. */
    async start(client: ClientRecord, email: string, options: StartOptions): Promise<{ deviceToken: string; otp: string }> {
      await throttle.consume(`send:ip:${options.ip}`, SEND_PER_IP, 'Too many codes were requested from this network. Try again later.');
      await throttle.consume(
        `send:to:${accountKey(email)}`,
        SEND_PER_RECIPIENT,
        'A code was sent to this address moments ago. Wait before asking for another.',
      );
      const deviceToken = randomToken('dt_');
      const otp = randomDigits(OTP_DIGITS);
      const at = now();
      const idHash = hash('device-token', deviceToken);
      await store.insert({
        idHash,
        clientId: client.id,
        email,
        otpHash: hash('otp', `${idHash}:${otp}`),
        rememberDevice: options.rememberDevice,
        cryptoVersion: options.cryptoVersion,
        codeChallenge: options.codeChallenge,
        createdAt: at,
        otpExpiresAt: at + OTP_TTL_SECONDS * 1000,
        expiresAt: at + OTP_TTL_SECONDS * 1000,
      });
      try {
        await mailer.send(otpMail(email, otp, client.name));
      } catch (error) {
        // Never leave a usable code that was not delivered.
        await store.expire(idHash, now());
        throw new ServiceError('ERR_DELIVERY_FAILED', 'The sign-in code could not be sent. Try again shortly.', {}, error);
      }
      return { deviceToken, otp };
    },

    /** Checks the emailed OTP. The guess is counted before it is compared. */
    async verifyOtp(client: ClientRecord, email: string, deviceToken: string, otp: string): Promise<void> {
      const { idHash, state } = await load(client, email, deviceToken);
      if (state.verifiedAt !== null) throw new ServiceError('ERR_SESSION_STEP', 'This code was already accepted. Register the device now.');
      const lockedUntil = await accounts.lockedUntil(accountKey(email), now());
      if (lockedUntil !== undefined) {
        throw new ServiceError('ERR_ACCOUNT_LOCKED', 'Too many wrong codes for this address. Try again later.', {
          retryAfter: Math.ceil((lockedUntil - now()) / 1000),
        });
      }
      const attempt = await store.spendAttempt(idHash, OTP_MAX_ATTEMPTS, now());
      if (!attempt)
        throw new ServiceError('ERR_OTP_EXPIRED', 'This code has expired or too many wrong codes were tried. Request a new code.');
      if (!safeEqual(attempt.otpHash, hash('otp', `${idHash}:${otp}`))) {
        await accounts.recordFailure(accountKey(email), ACCOUNT_MAX_FAILURES, now() + ACCOUNT_LOCKOUT_SECONDS * 1000);
        throw new ServiceError('ERR_OTP_INVALID', 'The code is not correct.', { attemptsRemaining: OTP_MAX_ATTEMPTS - attempt.attempts });
      }
      if (!(await store.markVerified(idHash, now(), now() + REGISTRATION_TTL_SECONDS * 1000))) {
        throw new ServiceError('ERR_SESSION_STEP', 'This code was already accepted. Register the device now.');
      }
      await accounts.clearFailures(accountKey(email));
      // The account exists from the first verified email, whether or not a device follows.
      await accounts.findOrCreate(email, now());
    },

    /**
     * Finishes the registration: creates the user on first verification, stores the device
     * key when the device is to be remembered, and issues the authorization code.
     */
    async registerDevice(
      client: ClientRecord,
      email: string,
      input: { deviceToken: string; devicePublicKey?: DevicePublicJwk; mfaMethod?: MfaMethod },
    ): Promise<{ code: string; deviceId?: string }> {
      if (input.mfaMethod) {
        // MFA enrollment is the next milestone; refuse rather than pretend it happened.
        throw new ServiceError('ERR_REQUEST_INVALID', 'MFA enrollment is not available on this service yet.');
      }
      if (input.devicePublicKey && !isValidDevicePublicKey(input.devicePublicKey)) {
        throw new ServiceError('ERR_DEVICE_KEY_INVALID', 'The device public key is not a valid P-256 key.');
      }
      const { idHash, state } = await load(client, email, input.deviceToken);
      if (state.verifiedAt === null) throw new ServiceError('ERR_SESSION_STEP', 'Verify the emailed code before registering the device.');
      const done = await store.complete(idHash, now());
      if (!done) throw new ServiceError('ERR_SESSION_INVALID', 'This sign-in session is complete or has expired. Start again.');
      const user = await accounts.findOrCreate(email, now());
      let deviceId: string | undefined;
      if (done.rememberDevice && input.devicePublicKey) {
        deviceId = randomToken('dev_', 16);
        await devices.insert(
          { id: deviceId, userId: user.id, clientId: client.id, publicJwk: input.devicePublicKey, cryptoVersion: done.cryptoVersion },
          now(),
        );
      }
      const code = await codes.issue({
        clientId: client.id,
        userId: user.id,
        codeChallenge: done.codeChallenge,
        amr: ['otp'],
        authTime: Math.floor(state.verifiedAt / 1000),
      });
      return deviceId ? { code, deviceId } : { code };
    },
  };
}

export type RegistrationService = ReturnType<typeof createRegistrationService>;
