import type {
  AuthenticationResponseJSON,
  RegistrationResponseJSON,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import type { PasskeyAssertionJson, PasskeyAttestationJson, PasskeyCreationOptionsJson } from 'service-protocol';
import type { ClientRecord } from '../../clients/store.js';
import { randomToken, type SecretHasher } from '../../crypto/secrets.js';
import { PASSKEY_ALGORITHMS, PASSKEY_CEREMONY_TTL_SECONDS, PASSKEY_DEFAULT_NAME, PASSKEYS_PER_USER_MAX } from '../../defaults.js';
import { ServiceError } from '../../errors.js';
import type { EventLog } from '../../events/service.js';
import type { SpentTokenStore } from '../../spent-tokens/store.js';
import { type CeremonyBinding, challengeOfClientData, createCeremonyChallenges } from './challenge.js';
import type { Passkey, PasskeyStore } from './store.js';

export interface PasskeyCeremonyDeps {
  store: PasskeyStore;
  /** Where a spent challenge is recorded (purpose `passkey-challenge`), to refuse its replay. */
  spent: SpentTokenStore;
  events: EventLog;
  hash: SecretHasher;
  now: () => number;
  /** SERVICE_IDP_PASSKEY_RP_ID; undefined: each page's own host. */
  rpId: string | undefined;
}

/** Why a ceremony was refused, kept in the `passkey.refused` event (never shown to the caller, who gets one answer). */
export type PasskeyRefusal = 'unknown' | 'rp_id' | 'user' | 'user_handle' | 'verification' | 'counter' | 'duplicate';

/**
 * @simplewebauthn/server, loaded at the first ceremony: with its certificate parsers it is a
 * quarter of what the service imports, which every start, every `service-idp` command that opens
 * the service context and every test file would load for nothing (about half a second of CPU).
 */
export const simpleWebAuthn = () => import('@simplewebauthn/server');

type Verified<T extends (...args: never[]) => unknown> = NonNullable<Awaited<ReturnType<T>>>;
type RegistrationInfo = NonNullable<Verified<typeof verifyRegistrationResponse>['registrationInfo']>;

/** What every ceremony's response must carry: this challenge, origin and rp id, and user verification. */
const expected = (expectedChallenge: string, origin: string, rpId: string) => ({
  expectedChallenge,
  expectedOrigin: origin,
  expectedRPID: rpId,
  requireUserVerification: true,
});

const IP_ADDRESS = /^(\d+\.){3}\d+$|^\[/;

export interface PasskeyCeremony {
  ttlMs: number;
  /** A challenge for `binding`, live for PASSKEY_CEREMONY_TTL_SECONDS. */
  issue: (binding: CeremonyBinding) => string;
  rpIdFor: (origin: string | undefined) => {
    origin: string;
    rpId: string;
  };
  recordRefusal: (reason: PasskeyRefusal, client: ClientRecord, passkey?: Passkey, mfaUserId?: string) => Promise<void>;
  refuse: (reason: PasskeyRefusal, client: ClientRecord, passkey?: Passkey) => Promise<never>;
  verifyAttestation: (
    credential: PasskeyAttestationJson,
    expectedChallenge: string,
    origin: string,
    rpId: string,
  ) => Promise<RegistrationInfo | undefined>;
  storePasskey: (
    user: {
      id: string;
    },
    client: ClientRecord,
    rpId: string,
    info: RegistrationInfo,
    name: string | undefined,
  ) => Promise<
    | {
        id: string;
        synced: boolean;
        backupEligible: boolean;
      }
    | undefined
  >;
  checkAssertion: (
    credential: PasskeyAssertionJson,
    expectedChallenge: string,
    origin: string,
    rpId: string,
    passkey: Passkey,
    discoverable: boolean,
  ) => Promise<PasskeyRefusal | undefined>;
  amrOf: (passkey: { backupEligible: boolean }) => string[];
  mfaChallenge: (
    credential: PasskeyAssertionJson | PasskeyAttestationJson,
    binding: Omit<CeremonyBinding, 'userId'>,
    userId: string,
  ) => {
    expiresAt: number;
    userId: string | undefined;
    text: string;
    expected: string;
  };
  ceremonyChallenge: (
    clientData: unknown,
    binding: Omit<CeremonyBinding, 'userId'>,
  ) => {
    expiresAt: number;
    userId: string | undefined;
    text: string;
    expected: string;
  };
  spend: (text: string, expiresAt: number) => Promise<void>;
  creationOptions: (
    client: ClientRecord,
    origin: string,
    rpId: string,
    user: {
      id: string;
      email: string;
    },
    bound: Pick<CeremonyBinding, 'ceremony' | 'session' | 'context'>,
  ) => Promise<PasskeyCreationOptionsJson>;
}

/**
 * The WebAuthn Level 3 ceremonies of every passkey route (sign-in, registration, and the MFA
 * step: service.ts, mfa.ts) through @simplewebauthn/server. Every ceremony:
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
export function createPasskeyCeremony(deps: PasskeyCeremonyDeps): PasskeyCeremony {
  const { store, events, hash, now } = deps;
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
    const { verifyRegistrationResponse } = await simpleWebAuthn();
    try {
      const verified = await verifyRegistrationResponse({
        response: credential as RegistrationResponseJSON,
        ...expected(expectedChallenge, origin, rpId),
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
  const checkAssertion: PasskeyCeremony['checkAssertion'] = async (credential, expectedChallenge, origin, rpId, passkey, discoverable) => {
    if (passkey.rpId !== rpId) return 'rp_id';
    // WebAuthn L3 7.2 step 6: when the request named no credential, the authenticator must return the
    // user handle (a discoverable credential always stores one) and it must be the passkey's user's; when
    // it named the user's credentials (an MFA step) the user handle may be absent, but if present must match.
    const userHandle = credential.response.userHandle;
    if (userHandle === undefined ? discoverable : userHandle !== passkey.userHandle) return 'user_handle';
    let info: Verified<typeof verifyAuthenticationResponse>['authenticationInfo'] | undefined;
    let counterWentBack = false;
    const { verifyAuthenticationResponse } = await simpleWebAuthn();
    try {
      const verified = await verifyAuthenticationResponse({
        response: credential as AuthenticationResponseJSON,
        ...expected(expectedChallenge, origin, rpId),
        credential: { id: passkey.credentialId, publicKey: Buffer.from(passkey.publicKey, 'base64url'), counter: passkey.signCount },
      });
      info = verified.verified ? verified.authenticationInfo : undefined;
    } catch (error) {
      counterWentBack = error instanceof Error && /counter value/i.test(error.message);
    }
    if (!info) return counterWentBack ? 'counter' : 'verification';
    // The counter moves forward in the statement that records the use: of two assertions with one counter value, one wins.
    if (!(await store.recordUse(passkey.id, passkey.signCount, info.newCounter, info.credentialBackedUp, now()))) return 'counter';
    return undefined;
  };

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
    const { generateRegistrationOptions } = await simpleWebAuthn();
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
    if (!(await deps.spent.spend({ purpose: 'passkey-challenge', idHash: hash('passkey-challenge-spent', text), expiresAt }, now()))) {
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

  return {
    ttlMs,
    issue: (binding: CeremonyBinding) => challenges.issue(binding, now() + ttlMs),
    rpIdFor,
    recordRefusal,
    refuse,
    verifyAttestation,
    storePasskey,
    checkAssertion,
    amrOf,
    mfaChallenge,
    ceremonyChallenge,
    spend,
    creationOptions,
  };
}
