import {
  type MfaMethod,
  PASSKEY_REGISTER_OP,
  type PasskeyAssertionJson,
  type PasskeyAttestationJson,
  type PasskeyCreationOptionsJson,
  type PasskeyRequestOptionsJson,
} from 'service-protocol';
import type { ClientRecord } from '../../clients/store.js';
import { PASSKEY_OPTIONS_PER_IP, PASSKEY_SIGN_IN_PER_IP } from '../../defaults.js';
import type { DeviceCaller, DeviceService } from '../../devices/service.js';
import { ServiceError } from '../../errors.js';
import type { EventLog } from '../../events/service.js';
import type { SignIn } from '../../sign-in/finish.js';
import type { MfaStep } from '../../sign-in/mfa-step.js';
import type { SignInPipeline } from '../../sign-in/pipeline.js';
import type { Throttle } from '../../throttle/service.js';
import type { EnabledUserStore } from '../../users/enabled-store.js';
import { type PasskeyCeremony, simpleWebAuthn } from './ceremony.js';
import type { Passkey, PasskeyStore } from './store.js';

export interface PasskeyDeps {
  ceremony: PasskeyCeremony;
  store: PasskeyStore;
  devices: DeviceService;
  enabledUsers: EnabledUserStore;
  /** Asked for the user's method only when a passkey does not count as MFA here. */
  mfa: Pick<MfaStep, 'methodOf'>;
  pipeline: SignInPipeline;
  events: EventLog;
  /** The per-IP limits of the unauthenticated sign-in routes (PASSKEY_OPTIONS_PER_IP, PASSKEY_SIGN_IN_PER_IP). */
  throttle: Throttle;
  now: () => number;
}

export type PasskeySignInOutcome = { kind: 'code'; code: string } | { kind: 'mfa'; sessionId: string; method: MfaMethod; email: string };

/**
 * A passkey as the first factor: registration by a signed-in device (or the hosted pages'
 * offer), and sign-in with a discoverable credential, which ends like every sign-in in an
 * authorization code, or in the MFA step when the application does not count a passkey as MFA.
 * The ceremonies' rules are ceremony.ts's. A sign-in also checks the credential is active, the
 * application's and the rp id's, the named user's and the user handle's, and moves the signature
 * counter forward atomically (a counter that does not grow means a cloned authenticator,
 * WebAuthn L3 6.1.1: refused and recorded).
 */
export interface PasskeyService {
  /** Creation options for a signed-in user, whose device proves itself with op PASSKEY_REGISTER_OP. */
  registrationOptions(caller: DeviceCaller, originHeader: string | undefined): Promise<PasskeyCreationOptionsJson>;
  /** Creation options for the hosted pages' "Add a passkey" offer, bound to the pending request (`context`) and its user. */
  heldRegistrationOptions(
    client: ClientRecord,
    originHeader: string | undefined,
    user: { id: string; email: string },
    context: string,
  ): Promise<PasskeyCreationOptionsJson>;
  /** Verifies an attestation made with a creation challenge and stores the passkey (`held`: the hosted pages' offer). */
  register(
    client: ClientRecord,
    originHeader: string | undefined,
    credential: PasskeyAttestationJson,
    name: string | undefined,
    held?: { context: string; userId: string },
  ): Promise<{ deviceId: string; synced: boolean; userId: string }>;
  /** Request options for a sign-in: any discoverable passkey of this rp id may answer (no address needed). */
  authenticationOptions(
    client: ClientRecord,
    originHeader: string | undefined,
    ip?: string,
    context?: string,
  ): Promise<PasskeyRequestOptionsJson>;
  /** Verifies an assertion; ends, like every sign-in, in an authorization code (or the MFA step the application asks for). */
  authenticate(
    client: ClientRecord,
    originHeader: string | undefined,
    input: { credential: PasskeyAssertionJson; email?: string; codeChallenge: string | null },
    ip?: string,
    context?: string,
  ): Promise<PasskeySignInOutcome>;
  /** The user's active passkeys for one application (the device list shows them). */
  list(clientId: string, userId: string): Promise<Passkey[]>;
}

export function createPasskeyService(deps: PasskeyDeps): PasskeyService {
  const { ceremony, store, devices, enabledUsers, mfa, pipeline, events, throttle, now } = deps;
  const { ttlMs, rpIdFor, ceremonyChallenge, spend, verifyAttestation, refuse, storePasskey, checkAssertion, amrOf, creationOptions } =
    ceremony;
  /** ERR_RATE_LIMITED (429, with retryAfter) past the IP's budget for the route; no IP (not behind HTTP): no limit. */
  const limitIp = async (route: string, ip: string | undefined, limits: typeof PASSKEY_OPTIONS_PER_IP | typeof PASSKEY_SIGN_IN_PER_IP) => {
    if (ip !== undefined)
      await throttle.consume(`passkey:${route}:ip:${ip}`, limits, 'Too many passkey sign-ins from this network. Try again later.');
  };

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
    const user = challenge.userId === undefined ? undefined : await enabledUsers.findById(challenge.userId);
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
      const challenge = ceremony.issue({ ceremony: 'authentication', clientId: client.id, origin, rpId, ...(context ? { context } : {}) });
      const { generateAuthenticationOptions } = await simpleWebAuthn();
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
      const user = await enabledUsers.findById(passkey.userId);
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
      // Possession of the authenticator and its user verification: two factors (NIST SP 800-63B 5.1.9.1), where the client agrees.
      const satisfiesMfa = client.passkeySatisfiesMfa !== false;
      const method = satisfiesMfa ? undefined : await mfa.methodOf(user.id);
      const outcome = await pipeline.continue({ client, signIn, method, satisfiesMfa });
      // The address goes back with the session: a sign-in without one could not call initiateMfa otherwise.
      if (outcome.kind === 'mfa') return { ...outcome, email: user.email };
      if (outcome.kind === 'done') return { kind: 'code', code: outcome.code };
      throw new ServiceError(
        'ERR_REQUEST_INVALID',
        'This application requires a second factor: sign in with your email address once to set one up.',
      );
    },

    /** The user's active passkeys for one application (the device list shows them). */
    list: (clientId: string, userId: string) => store.list({ clientId, userId }),
  };
}
