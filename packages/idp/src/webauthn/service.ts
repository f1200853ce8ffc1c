import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  generateRegistrationOptions,
  type RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import {
  type DevicePublicJwk,
  type MfaMethod,
  PASSKEY_REGISTER_OP,
  type PasskeyAssertionJson,
  type PasskeyAttestationJson,
  type PasskeyCreationOptionsJson,
  type PasskeyRequestOptionsJson,
} from 'service-protocol';
import type { AccountStore } from '../accounts/store.js';
import type { ClientRecord } from '../clients/store.js';
import { randomToken, type SecretHasher } from '../crypto/secrets.js';
import {
  PASSKEY_ALGORITHMS,
  PASSKEY_CEREMONY_TTL_SECONDS,
  PASSKEY_DEFAULT_NAME,
  PASSKEY_OPTIONS_PER_IP,
  PASSKEY_SIGN_IN_PER_IP,
  PASSKEYS_PER_USER_MAX,
} from '../defaults.js';
import type { DeviceCaller, DeviceService } from '../devices/service.js';
import { ServiceError } from '../errors.js';
import type { EventLog } from '../events/service.js';
import type { FactorCheck } from '../sign-in/factor.js';
import type { FinishSignIn, SignIn } from '../sign-in/finish.js';
import type { FinishedMfa, MfaStep } from '../sign-in/mfa-step.js';
import type { MfaSessionRow } from '../sign-in/mfa-store.js';
import type { Throttle } from '../throttle/service.js';
import { type CeremonyBinding, challengeOfClientData, createCeremonyChallenges } from './challenge.js';
import type { Passkey, PasskeyStore } from './store.js';

export interface PasskeyDeps {
  store: PasskeyStore;
  devices: DeviceService;
  accounts: AccountStore;
  mfa: MfaStep;
  finish: FinishSignIn;
  events: EventLog;
  hash: SecretHasher;
  /** The per-IP limits of the unauthenticated sign-in routes (PASSKEY_OPTIONS_PER_IP, PASSKEY_SIGN_IN_PER_IP). */
  throttle: Throttle;
  now: () => number;
  /** SERVICE_IDP_PASSKEY_RP_ID; undefined: each page's own host. */
  rpId: string | undefined;
}

/** Why a ceremony was refused, kept in the `passkey.refused` event (never shown to the caller, who gets one answer). */
export type PasskeyRefusal = 'unknown' | 'rp_id' | 'user' | 'user_handle' | 'verification' | 'counter' | 'duplicate';

export type PasskeySignInOutcome = { kind: 'code'; code: string } | { kind: 'mfa'; sessionId: string; method: MfaMethod; email: string };

type Verified<T extends (...args: never[]) => unknown> = NonNullable<Awaited<ReturnType<T>>>;
type RegistrationInfo = NonNullable<Verified<typeof verifyRegistrationResponse>['registrationInfo']>;

const IP_ADDRESS = /^(\d+\.){3}\d+$|^\[/;

/**
 * Passkeys (WebAuthn Level 3) through @simplewebauthn/server: registration by a signed-in
 * device, sign-in with a discoverable credential. Every ceremony:
 * - takes its relying party id from configuration (SERVICE_IDP_PASSKEY_RP_ID) or, unset, from the
 *   page's origin, which the browser-client hook already matched against the application's
 *   registered origins; the origin must be the rp id or a subdomain (WebAuthn L3 5.1.3 step 8);
 * - expects exactly that origin and rp id in the signed client data and authenticator data;
 * - requires user verification (UV flag) and accepts attestation `none` only;
 * - spends its challenge once, before verifying anything else (stateless until spent, challenge.ts),
 *   within PASSKEY_CEREMONY_TTL_SECONDS.
 * A sign-in also checks the credential is active, the application's and the rp id's, the named
 * user's and the user handle's, and moves the signature counter forward atomically (a counter
 * that does not grow means a cloned authenticator, WebAuthn L3 6.1.1: refused and recorded).
 */
export function createPasskeyService(deps: PasskeyDeps) {
  const { store, devices, accounts, mfa, finish, events, hash, throttle, now } = deps;
  /** ERR_RATE_LIMITED (429, with retryAfter) past the IP's budget for the route; no IP (not behind HTTP): no limit. */
  const limitIp = async (route: string, ip: string | undefined, limits: typeof PASSKEY_OPTIONS_PER_IP | typeof PASSKEY_SIGN_IN_PER_IP) => {
    if (ip !== undefined)
      await throttle.consume(`passkey:${route}:ip:${ip}`, limits, 'Too many passkey sign-ins from this network. Try again later.');
  };
  const challenges = createCeremonyChallenges(hash);
  const ttlMs = PASSKEY_CEREMONY_TTL_SECONDS * 1000;

  /** WebAuthn L3 5.1.3 step 8: the rp id is the origin's host or a registrable suffix of it. */
  function rpIdFor(origin: string | undefined): { origin: string; rpId: string } {
    let host: string;
    try {
      host = new URL(origin ?? '').hostname;
    } catch {
      throw new ServiceError('ERR_REQUEST_INVALID', 'Passkeys need the request to come from a page (an Origin header).');
    }
    const rpId = deps.rpId ?? host;
    if (IP_ADDRESS.test(rpId) || !(host === rpId || host.endsWith(`.${rpId}`))) {
      throw new ServiceError(
        'ERR_REQUEST_INVALID',
        'Passkeys are not available on this page: its origin is not under the relying party id.',
      );
    }
    return { origin: origin as string, rpId };
  }

  /** The user handle given to authenticators (user.id): a keyed hash of the user id, so it names nobody elsewhere. */
  const userHandleOf = (userId: string) => hash('passkey-user-handle', userId);

  /** Records a refused ceremony (`mfa`: at an MFA step, where the step's user is known). */
  async function recordRefusal(reason: PasskeyRefusal, client: ClientRecord, passkey?: Passkey, mfaUserId?: string) {
    const userId = mfaUserId ?? passkey?.userId;
    await events.record({
      type: 'passkey.refused',
      clientId: client.id,
      ...(userId ? { userId } : {}),
      ...(passkey ? { deviceId: passkey.id } : {}),
      detail: { reason, ...(mfaUserId ? { step: 'mfa' } : {}) },
    });
  }

  async function refuse(reason: PasskeyRefusal, client: ClientRecord, passkey?: Passkey): Promise<never> {
    await recordRefusal(reason, client, passkey);
    throw new ServiceError('ERR_PASSKEY_INVALID', 'This passkey was not accepted. Sign in another way, or use another passkey.');
  }

  /** Verifies an attestation (user verification, attestation none); undefined when refused. */
  async function verifyAttestation(
    credential: PasskeyAttestationJson,
    expectedChallenge: string,
    origin: string,
    rpId: string,
  ): Promise<RegistrationInfo | undefined> {
    try {
      const verified = await verifyRegistrationResponse({
        response: credential as RegistrationResponseJSON,
        expectedChallenge,
        expectedOrigin: origin,
        expectedRPID: rpId,
        requireUserVerification: true,
        supportedAlgorithmIDs: [...PASSKEY_ALGORITHMS],
      });
      const info = verified.verified ? verified.registrationInfo : undefined;
      return info?.fmt === 'none' ? info : undefined;
    } catch {
      return undefined;
    }
  }

  /** Stores a verified passkey for the user; undefined when its credential id is registered already. */
  async function storePasskey(user: { id: string }, client: ClientRecord, rpId: string, info: RegistrationInfo, name: string | undefined) {
    const id = randomToken('dev_', 16);
    const backupEligible = info.credentialDeviceType === 'multiDevice';
    const inserted = await store.insert({
      id,
      userId: user.id,
      clientId: client.id,
      rpId,
      credentialId: info.credential.id,
      publicKey: Buffer.from(info.credential.publicKey).toString('base64url'),
      userHandle: userHandleOf(user.id),
      signCount: info.credential.counter,
      transports: info.credential.transports ?? [],
      backupEligible,
      backedUp: info.credentialBackedUp,
      aaguid: info.aaguid,
      name: name?.trim() || PASSKEY_DEFAULT_NAME,
      createdAt: now(),
    });
    return inserted ? { id, synced: info.credentialBackedUp, backupEligible } : undefined;
  }

  /**
   * Checks an assertion against the stored passkey it names (rp id, user handle, signature, user
   * verification) and moves the counter forward atomically; the refusal's reason, or undefined.
   * `discoverable`: the request named no credential (allowCredentials empty, a username-less
   * sign-in), so the assertion must carry the user handle.
   */
  async function checkAssertion(
    credential: PasskeyAssertionJson,
    expectedChallenge: string,
    origin: string,
    rpId: string,
    passkey: Passkey,
    discoverable: boolean,
  ): Promise<PasskeyRefusal | undefined> {
    if (passkey.rpId !== rpId) return 'rp_id';
    // WebAuthn L3 7.2 step 6: when the request named no credential, the authenticator must return the
    // user handle (a discoverable credential always stores one) and it must be the passkey's user's; when
    // it named the user's credentials (an MFA step) the user handle may be absent, but if present must match.
    const userHandle = credential.response.userHandle;
    if (userHandle === undefined ? discoverable : userHandle !== passkey.userHandle) return 'user_handle';
    let info: Verified<typeof verifyAuthenticationResponse>['authenticationInfo'] | undefined;
    let counterWentBack = false;
    try {
      const verified = await verifyAuthenticationResponse({
        response: credential as AuthenticationResponseJSON,
        expectedChallenge,
        expectedOrigin: origin,
        expectedRPID: rpId,
        credential: { id: passkey.credentialId, publicKey: Buffer.from(passkey.publicKey, 'base64url'), counter: passkey.signCount },
        requireUserVerification: true,
      });
      info = verified.verified ? verified.authenticationInfo : undefined;
    } catch (error) {
      counterWentBack = error instanceof Error && /counter value/i.test(error.message);
    }
    if (!info) return counterWentBack ? 'counter' : 'verification';
    // The counter moves forward in the statement that records the use: of two assertions with one counter value, one wins.
    if (!(await store.recordUse(passkey.id, passkey.signCount, info.newCounter, info.credentialBackedUp, now()))) return 'counter';
    return undefined;
  }

  /** RFC 8176: hwk for a device-bound key, swk for a synced one (its private key leaves the hardware); user verification was required (user). */
  const amrOf = (passkey: { backupEligible: boolean }) => [passkey.backupEligible ? 'swk' : 'hwk', 'user'];

  /** A challenge of an MFA step: bound to this session and issued for its user, or ERR_SESSION_INVALID. */
  function mfaChallenge(
    credential: PasskeyAssertionJson | PasskeyAttestationJson,
    binding: Omit<CeremonyBinding, 'userId'>,
    userId: string,
  ) {
    const challenge = ceremonyChallenge(credential.response.clientDataJSON, binding);
    if (challenge.userId !== userId) {
      throw new ServiceError('ERR_SESSION_INVALID', 'This passkey request has expired or was already used. Start again.');
    }
    return challenge;
  }

  /** Creation options (WebAuthn L3 5.4) for a user and a challenge; `existing` are excluded (the authenticator says PASSKEY_EXISTS). */
  async function creationOptionsFor(
    client: ClientRecord,
    rpId: string,
    user: { id: string; email: string },
    challenge: string,
    existing: Passkey[],
  ): Promise<PasskeyCreationOptionsJson> {
    const options = await generateRegistrationOptions({
      rpName: client.name,
      rpID: rpId,
      userName: user.email,
      userDisplayName: user.email,
      userID: Buffer.from(userHandleOf(user.id), 'base64url'),
      challenge: Buffer.from(challenge, 'utf8'),
      timeout: ttlMs,
      attestationType: 'none',
      excludeCredentials: existing.map((p) => ({ id: p.credentialId })),
      authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
      supportedAlgorithmIDs: [...PASSKEY_ALGORITHMS],
    });
    return {
      rp: { id: rpId, name: client.name },
      user: { id: options.user.id, name: options.user.name, displayName: options.user.displayName },
      challenge: options.challenge,
      pubKeyCredParams: options.pubKeyCredParams.map((p) => ({ type: 'public-key' as const, alg: p.alg })),
      timeout: ttlMs,
      excludeCredentials: existing.map((p) => ({
        type: 'public-key' as const,
        id: p.credentialId,
        ...(p.transports.length ? { transports: p.transports } : {}),
      })),
      authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
      attestation: 'none',
    };
  }

  function ceremonyChallenge(clientData: unknown, binding: Omit<CeremonyBinding, 'userId'>) {
    const text = challengeOfClientData(clientData);
    const checked = text === undefined ? undefined : challenges.check(text, binding, now());
    if (!text || !checked) {
      throw new ServiceError('ERR_SESSION_INVALID', 'This passkey request has expired or was already used. Start again.');
    }
    return { text, expected: Buffer.from(text, 'utf8').toString('base64url'), ...checked };
  }

  async function spend(text: string, expiresAt: number): Promise<void> {
    if (!(await store.spendChallenge(hash('passkey-challenge-spent', text), expiresAt, now()))) {
      throw new ServiceError('ERR_SESSION_INVALID', 'This passkey request has expired or was already used. Start again.');
    }
  }

  /**
   * Creation options for `user` (resident key, user verification, attestation none) within the
   * per-user cap, the challenge bound to them and to `bound`: the ceremony, and the MFA session
   * or the hosted request when there is one.
   */
  async function creationOptions(
    client: ClientRecord,
    origin: string,
    rpId: string,
    user: { id: string; email: string },
    bound: Pick<CeremonyBinding, 'ceremony' | 'session' | 'context'>,
  ): Promise<PasskeyCreationOptionsJson> {
    const existing = await store.list({ userId: user.id, clientId: client.id });
    if (existing.length >= PASSKEYS_PER_USER_MAX) {
      throw new ServiceError('ERR_REQUEST_INVALID', `At most ${PASSKEYS_PER_USER_MAX} passkeys: revoke one first.`);
    }
    const challenge = challenges.issue({ ...bound, clientId: client.id, origin, rpId, userId: user.id }, now() + ttlMs);
    return creationOptionsFor(client, rpId, user, challenge, existing);
  }

  /**
   * Verifies an attestation made with a creation challenge and stores the passkey. `held` (the
   * hosted pages' offer): the challenge must have been issued for that pending request
   * (`context`) and that request's user, else ERR_SESSION_INVALID before anything is spent.
   */
  async function register(
    client: ClientRecord,
    originHeader: string | undefined,
    credential: PasskeyAttestationJson,
    name: string | undefined,
    held?: { context: string; userId: string },
  ): Promise<{ deviceId: string; synced: boolean; userId: string }> {
    const { origin, rpId } = rpIdFor(originHeader);
    const challenge = ceremonyChallenge(credential.response.clientDataJSON, {
      ceremony: 'registration',
      clientId: client.id,
      origin,
      rpId,
      ...(held ? { context: held.context } : {}),
    });
    const user = challenge.userId === undefined ? undefined : await accounts.findById(challenge.userId);
    if (!user || (held && user.id !== held.userId)) {
      throw new ServiceError('ERR_SESSION_INVALID', 'This passkey request has expired or was already used. Start again.');
    }
    // Spent before anything else is checked: one attempt per challenge, whatever its outcome.
    await spend(challenge.text, challenge.expiresAt);
    const info = await verifyAttestation(credential, challenge.expected, origin, rpId);
    if (!info) return refuse('verification', client);
    const stored = await storePasskey(user, client, rpId, info, name);
    if (!stored) return refuse('duplicate', client);
    await events.record({
      type: 'passkey.registered',
      userId: user.id,
      clientId: client.id,
      deviceId: stored.id,
      detail: held ? { synced: stored.synced, via: 'hosted_offer' } : { synced: stored.synced },
    });
    return { deviceId: stored.id, synced: stored.synced, userId: user.id };
  }

  /**
   * A passkey step completed through the MFA step (the attempt counted before `prove` runs); a
   * refused passkey counts as a wrong code does, said as a passkey's refusal (PASSKEY_REFUSED
   * in service-web/passkeys).
   */
  async function completeStep(
    client: ClientRecord,
    email: string,
    idHash: string,
    prove: (session: MfaSessionRow) => Promise<FactorCheck>,
    rememberMe: boolean,
    devicePublicKey: DevicePublicJwk | undefined,
  ): Promise<FinishedMfa> {
    try {
      return await mfa.completeWith(client, email, idHash, prove, { rememberMe, devicePublicKey });
    } catch (error) {
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
  }

  return {
    /** Creation options for a signed-in user, whose device proves itself with op PASSKEY_REGISTER_OP. */
    async registrationOptions(caller: DeviceCaller, originHeader: string | undefined): Promise<PasskeyCreationOptionsJson> {
      const { origin, rpId } = rpIdFor(originHeader);
      const { userId } = await devices.authorize(caller, PASSKEY_REGISTER_OP);
      return creationOptions(caller.client, origin, rpId, { id: userId, email: caller.email }, { ceremony: 'registration' });
    },

    /**
     * Creation options for the hosted pages' "Add a passkey" offer: the user is the one whose
     * sign-in the pending request holds (oidc/passkey-offer.ts found it, bound to this browser),
     * and the challenge is bound to that request (`context`), so only `register` for the same
     * request and user spends it. The same rp id, origin and user-verification rules as above.
     */
    async heldRegistrationOptions(
      client: ClientRecord,
      originHeader: string | undefined,
      user: { id: string; email: string },
      context: string,
    ): Promise<PasskeyCreationOptionsJson> {
      const { origin, rpId } = rpIdFor(originHeader);
      return creationOptions(client, origin, rpId, user, { ceremony: 'registration', context });
    },

    register,
    /** Request options for a sign-in: any discoverable passkey of this rp id may answer (no address needed). */
    async authenticationOptions(
      client: ClientRecord,
      originHeader: string | undefined,
      ip?: string,
      context?: string,
    ): Promise<PasskeyRequestOptionsJson> {
      await limitIp('options', ip, PASSKEY_OPTIONS_PER_IP);
      const { origin, rpId } = rpIdFor(originHeader);
      const challenge = challenges.issue(
        { ceremony: 'authentication', clientId: client.id, origin, rpId, ...(context ? { context } : {}) },
        now() + ttlMs,
      );
      const options = await generateAuthenticationOptions({
        rpID: rpId,
        challenge: Buffer.from(challenge, 'utf8'),
        timeout: ttlMs,
        userVerification: 'required',
        allowCredentials: [],
      });
      return { rpId, challenge: options.challenge, timeout: ttlMs, userVerification: 'required' };
    },

    /** Verifies an assertion; ends, like every sign-in, in an authorization code (or the MFA step the application asks for). */
    async authenticate(
      client: ClientRecord,
      originHeader: string | undefined,
      input: { credential: PasskeyAssertionJson; email?: string; codeChallenge: string | null },
      ip?: string,
      context?: string,
    ): Promise<PasskeySignInOutcome> {
      await limitIp('sign-in', ip, PASSKEY_SIGN_IN_PER_IP);
      const { origin, rpId } = rpIdFor(originHeader);
      const { credential } = input;
      const challenge = ceremonyChallenge(credential.response.clientDataJSON, {
        ceremony: 'authentication',
        clientId: client.id,
        origin,
        rpId,
        ...(context ? { context } : {}),
      });
      // Spent first: a replayed assertion is refused as such (and one attempt per challenge, whatever its outcome).
      await spend(challenge.text, challenge.expiresAt);
      const passkey = await store.findActiveByCredentialId(credential.id);
      if (!passkey || passkey.clientId !== client.id) return refuse('unknown', client);
      const user = await accounts.findById(passkey.userId);
      if (!user || (input.email !== undefined && user.email !== input.email)) return refuse('user', client, passkey);
      const refusal = await checkAssertion(credential, challenge.expected, origin, rpId, passkey, true);
      if (refusal) return refuse(refusal, client, passkey);

      const amr = amrOf(passkey);
      const signIn: SignIn = {
        clientId: client.id,
        userId: user.id,
        device: { id: passkey.id },
        codeChallenge: input.codeChallenge,
        amr,
        authTime: Math.floor(now() / 1000),
      };
      if (client.passkeySatisfiesMfa !== false) {
        // Possession of the authenticator and its user verification: two factors (NIST SP 800-63B 5.1.9.1).
        return { kind: 'code', code: (await finish({ ...signIn, amr: [...amr, 'mfa'] })).code };
      }
      const method = await mfa.methodOf(user.id);
      // The address goes back with the session: a sign-in without one could not call initiateMfa otherwise.
      if (method) return { kind: 'mfa', ...(await mfa.startLogin(signIn, method)), email: user.email };
      if (client.mfaPolicy === 'required') {
        throw new ServiceError(
          'ERR_REQUEST_INVALID',
          'This application requires a second factor: sign in with your email address once to set one up.',
        );
      }
      return { kind: 'code', code: (await finish(signIn)).code };
    },

    /**
     * Creation options for a passkey chosen as the MFA method at a registration
     * (verifyDevice with mfaMethod passkey answered FINALIZE_REGISTRATION_NEEDED): the challenge
     * is bound to that MFA session and its user, and arms the session.
     */
    async mfaEnrollmentOptions(
      client: ClientRecord,
      originHeader: string | undefined,
      email: string,
      sessionId: string,
    ): Promise<PasskeyCreationOptionsJson> {
      const { origin, rpId } = rpIdFor(originHeader);
      const { idHash, user } = await mfa.ceremonySession(client, email, sessionId, { method: 'passkey', purpose: 'enroll', arm: true });
      return creationOptions(client, origin, rpId, user, { ceremony: 'mfa-registration', session: idHash });
    },

    /**
     * The enrollment's attestation: counted as an MFA attempt before it is verified; the passkey
     * is stored, becomes the user's MFA method (mail, event), and the sign-in ends in a code with
     * the first recovery codes. amr: the first factor, then mfa, hwk or swk, user.
     */
    async mfaEnroll(
      client: ClientRecord,
      originHeader: string | undefined,
      input: {
        email: string;
        sessionId: string;
        credential: PasskeyAttestationJson;
        name?: string;
        rememberMe: boolean;
        devicePublicKey?: DevicePublicJwk;
      },
    ): Promise<FinishedMfa> {
      const { origin, rpId } = rpIdFor(originHeader);
      const { idHash, user } = await mfa.ceremonySession(client, input.email, input.sessionId, {
        method: 'passkey',
        purpose: 'enroll',
        arm: false,
      });
      const binding = { ceremony: 'mfa-registration' as const, clientId: client.id, origin, rpId, session: idHash };
      const challenge = mfaChallenge(input.credential, binding, user.id);
      await spend(challenge.text, challenge.expiresAt);
      let added: { id: string; synced: boolean } | undefined;
      const finished = await completeStep(
        client,
        input.email,
        idHash,
        async () => {
          const info = await verifyAttestation(input.credential, challenge.expected, origin, rpId);
          const stored = info && (await storePasskey(user, client, rpId, info, input.name));
          if (!stored) {
            await recordRefusal(info ? 'duplicate' : 'verification', client, undefined, user.id);
            return { kind: 'wrong' };
          }
          added = stored;
          return { kind: 'match', amr: amrOf(stored) };
        },
        input.rememberMe,
        input.devicePublicKey,
      );
      if (added) {
        await events.record({
          type: 'passkey.registered',
          userId: user.id,
          clientId: client.id,
          deviceId: added.id,
          detail: { synced: added.synced, mfa: true },
        });
      }
      return finished;
    },

    /**
     * Request options for the MFA step of a sign-in whose user's method is a passkey: the
     * challenge is bound to that MFA session and its user, allowCredentials lists the user's
     * passkeys for this rp id (any application's: the factor is the user's), and the session is
     * armed. ERR_REQUEST_INVALID when the user holds none here (a recovery code still passes).
     */
    async mfaOptions(
      client: ClientRecord,
      originHeader: string | undefined,
      email: string,
      sessionId: string,
    ): Promise<PasskeyRequestOptionsJson> {
      const { origin, rpId } = rpIdFor(originHeader);
      const { idHash, user } = await mfa.ceremonySession(client, email, sessionId, { method: 'passkey', purpose: 'login', arm: true });
      const mine = (await store.listForUser(user.id)).filter((p) => p.rpId === rpId);
      if (mine.length === 0) {
        throw new ServiceError('ERR_REQUEST_INVALID', 'None of your passkeys works on this page: use a recovery code.');
      }
      const binding = { ceremony: 'mfa-authentication' as const, clientId: client.id, origin, rpId, userId: user.id, session: idHash };
      const challenge = challenges.issue(binding, now() + ttlMs);
      return {
        rpId,
        challenge: Buffer.from(challenge, 'utf8').toString('base64url'),
        timeout: ttlMs,
        userVerification: 'required',
        allowCredentials: mine.map((p) => ({
          type: 'public-key' as const,
          id: p.credentialId,
          ...(p.transports.length > 0 ? { transports: p.transports } : {}),
        })),
      };
    },

    /**
     * The MFA step's assertion: its challenge must be this session's (and is spent first, so a
     * replay is refused); the attempt is counted before the assertion is checked; the passkey
     * must be active and the session user's. Then the sign-in finishes as verifyMfa's does.
     */
    async mfaVerify(
      client: ClientRecord,
      originHeader: string | undefined,
      input: { email: string; sessionId: string; credential: PasskeyAssertionJson; rememberMe: boolean; devicePublicKey?: DevicePublicJwk },
    ): Promise<FinishedMfa> {
      const { origin, rpId } = rpIdFor(originHeader);
      const { idHash, user } = await mfa.ceremonySession(client, input.email, input.sessionId, {
        method: 'passkey',
        purpose: 'login',
        arm: false,
      });
      const binding = { ceremony: 'mfa-authentication' as const, clientId: client.id, origin, rpId, session: idHash };
      const challenge = mfaChallenge(input.credential, binding, user.id);
      await spend(challenge.text, challenge.expiresAt);
      return completeStep(
        client,
        input.email,
        idHash,
        async () => {
          const passkey = await store.findActiveByCredentialId(input.credential.id);
          const refusal = !passkey
            ? 'unknown'
            : passkey.userId !== user.id
              ? 'user'
              : await checkAssertion(input.credential, challenge.expected, origin, rpId, passkey, false);
          if (!passkey || refusal) {
            await recordRefusal(refusal ?? 'unknown', client, passkey, user.id);
            return { kind: 'wrong' };
          }
          return { kind: 'match', amr: amrOf(passkey) };
        },
        input.rememberMe,
        input.devicePublicKey,
      );
    },

    /** The user's active passkeys for one application (the device list shows them). */
    list: (clientId: string, userId: string) => store.list({ clientId, userId }),
  };
}

export type PasskeyService = ReturnType<typeof createPasskeyService>;
