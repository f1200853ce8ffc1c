import type {
  DevicePublicJwk,
  PasskeyAssertionJson,
  PasskeyAttestationJson,
  PasskeyCreationOptionsJson,
  PasskeyRequestOptionsJson,
} from 'service-protocol';
import type { ClientRecord } from '../../clients/store.js';
import { ServiceError } from '../../errors.js';
import type { EventLog } from '../../events/service.js';
import type { CeremonyProof, FactorCheck } from '../../sign-in/factor.js';
import type { FinishedMfa } from '../../sign-in/mfa-session.js';
import type { MfaStep } from '../../sign-in/mfa-step.js';
import type { MfaSessionRow } from '../../sign-in/mfa-store.js';
import type { PasskeyCeremony } from './ceremony.js';
import type { PasskeyStore } from './store.js';

export interface PasskeyMfaDeps {
  ceremony: PasskeyCeremony;
  store: PasskeyStore;
  mfa: MfaStep;
  events: EventLog;
}

/**
 * A passkey as the MFA method (factor.ts): its ceremonies, each bound to one MFA session that
 * verifyDevice or authenticate opened. The challenge is this session's and is spent first (a
 * replay is refused); the attempt is counted before the passkey is checked (the MFA step's
 * guess rule: MFA_MAX_ATTEMPTS, the account lock-out); the sign-in then finishes as verifyMfa's.
 */
export interface PasskeyMfa {
  mfaEnrollmentOptions(
    client: ClientRecord,
    originHeader: string | undefined,
    email: string,
    sessionId: string,
  ): Promise<PasskeyCreationOptionsJson>;
  mfaEnroll(
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
  ): Promise<FinishedMfa>;
  mfaOptions(client: ClientRecord, originHeader: string | undefined, email: string, sessionId: string): Promise<PasskeyRequestOptionsJson>;
  mfaVerify(
    client: ClientRecord,
    originHeader: string | undefined,
    input: { email: string; sessionId: string; credential: PasskeyAssertionJson; rememberMe: boolean; devicePublicKey?: DevicePublicJwk },
  ): Promise<FinishedMfa>;
  /**
   * Request options to prove the passkey at an MFA session of the user's own that no sign-in
   * ends (the account page: a proof before an action, a change's first step), bound to that
   * session and its user, for the page's origin; they arm the session.
   */
  proofOptions(
    client: ClientRecord,
    origin: string,
    email: string,
    sessionId: string,
    purpose: 'proof' | 'change-current',
  ): Promise<PasskeyRequestOptionsJson>;
  /**
   * The assertion as the proof the MFA step checks (MfaStep verifyProof, verifyChange): its
   * challenge must be the session's and its user's and is spent first; the passkey must then be
   * active and the user's, its signature right for the page's origin and rp id.
   */
  ceremonyProof(client: ClientRecord, origin: string, credential: PasskeyAssertionJson): CeremonyProof;
}

export function createPasskeyMfa(deps: PasskeyMfaDeps): PasskeyMfa {
  const { ceremony, store, mfa, events } = deps;
  const { ttlMs, rpIdFor, mfaChallenge, spend, verifyAttestation, storePasskey, recordRefusal, checkAssertion, amrOf, creationOptions } =
    ceremony;

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

  /**
   * The step's session and the credential's challenge: the challenge must be this session's and
   * its user's (ERR_SESSION_INVALID otherwise) and is spent before anything else is checked, so a
   * replay is refused.
   */
  async function spendChallenge(
    client: ClientRecord,
    originHeader: string | undefined,
    input: { email: string; sessionId: string; credential: PasskeyAssertionJson | PasskeyAttestationJson },
    purpose: 'enroll' | 'login',
  ) {
    const { origin, rpId } = rpIdFor(originHeader);
    const { idHash, user } = await mfa.ceremonySession(client, input.email, input.sessionId, { method: 'passkey', purpose, arm: false });
    const ceremony = purpose === 'enroll' ? ('mfa-registration' as const) : ('mfa-authentication' as const);
    const challenge = mfaChallenge(input.credential, { ceremony, clientId: client.id, origin, rpId, session: idHash }, user.id);
    await spend(challenge.text, challenge.expiresAt);
    return { origin, rpId, idHash, user, challenge };
  }

  /**
   * Request options for a passkey MFA session at `purpose`: the challenge is bound to that
   * session and its user, allowCredentials lists the user's passkeys for this rp id (any
   * application's: the factor is the user's), and the session is armed. ERR_REQUEST_INVALID when
   * the user holds none here (a recovery code still passes).
   */
  async function requestOptions(
    client: ClientRecord,
    originHeader: string | undefined,
    email: string,
    sessionId: string,
    purpose: 'login' | 'proof' | 'change-current',
  ): Promise<PasskeyRequestOptionsJson> {
    const { origin, rpId } = rpIdFor(originHeader);
    const { idHash, user } = await mfa.ceremonySession(client, email, sessionId, { method: 'passkey', purpose, arm: true });
    const mine = (await store.listForUser(user.id)).filter((p) => p.rpId === rpId);
    if (mine.length === 0) {
      throw new ServiceError('ERR_REQUEST_INVALID', 'None of your passkeys works on this page: use a recovery code.');
    }
    const binding = { ceremony: 'mfa-authentication' as const, clientId: client.id, origin, rpId, userId: user.id, session: idHash };
    const challenge = ceremony.issue(binding);
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
  }

  /** Runs once the attempt is counted: the passkey must be active and the session user's, its assertion right; a refusal is recorded. */
  async function checkPasskey(
    client: ClientRecord,
    credential: PasskeyAssertionJson,
    at: { expected: string; origin: string; rpId: string; userId: string },
  ): Promise<FactorCheck> {
    const passkey = await store.findActiveByCredentialId(credential.id);
    const refusal = !passkey
      ? 'unknown'
      : passkey.userId !== at.userId
        ? 'user'
        : await checkAssertion(credential, at.expected, at.origin, at.rpId, passkey, false);
    if (!passkey || refusal) {
      await recordRefusal(refusal ?? 'unknown', client, passkey, at.userId);
      return { kind: 'wrong' };
    }
    return { kind: 'match', amr: amrOf(passkey) };
  }

  return {
    /**
     * Creation options for a passkey chosen as the MFA method at a registration
     * (verifyDevice with mfaMethod passkey answered FINALIZE_REGISTRATION_NEEDED): the challenge
     * is bound to that MFA session and its user, and arms the session.
     */
    async mfaEnrollmentOptions(client, originHeader, email, sessionId) {
      const { origin, rpId } = rpIdFor(originHeader);
      const { idHash, user } = await mfa.ceremonySession(client, email, sessionId, { method: 'passkey', purpose: 'enroll', arm: true });
      return creationOptions(client, origin, rpId, user, { ceremony: 'mfa-registration', session: idHash });
    },

    /**
     * The enrollment's attestation: counted as an MFA attempt before it is verified; the passkey
     * is stored, becomes the user's MFA method (mail, event), and the sign-in ends in a code with
     * the first recovery codes. amr: the first factor, then mfa, hwk or swk, user.
     */
    async mfaEnroll(client, originHeader, input) {
      const { origin, rpId, idHash, user, challenge } = await spendChallenge(client, originHeader, input, 'enroll');
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
    mfaOptions: (client, originHeader, email, sessionId) => requestOptions(client, originHeader, email, sessionId, 'login'),

    /**
     * The MFA step's assertion: its challenge must be this session's (and is spent first, so a
     * replay is refused); the attempt is counted before the assertion is checked; the passkey
     * must be active and the session user's. Then the sign-in finishes as verifyMfa's does.
     */
    async mfaVerify(client, originHeader, input) {
      const { origin, rpId, idHash, user, challenge } = await spendChallenge(client, originHeader, input, 'login');
      return completeStep(
        client,
        input.email,
        idHash,
        () => checkPasskey(client, input.credential, { ...challenge, origin, rpId, userId: user.id }),
        input.rememberMe,
        input.devicePublicKey,
      );
    },

    proofOptions: (client, origin, email, sessionId, purpose) => requestOptions(client, origin, email, sessionId, purpose),

    ceremonyProof: (client, originHeader, credential) => ({
      method: 'passkey',
      async begin(session) {
        const { origin, rpId } = rpIdFor(originHeader);
        const binding = { ceremony: 'mfa-authentication' as const, clientId: client.id, origin, rpId, session: session.idHash };
        const challenge = mfaChallenge(credential, binding, session.userId);
        await spend(challenge.text, challenge.expiresAt);
        return () => checkPasskey(client, credential, { expected: challenge.expected, origin, rpId, userId: session.userId });
      },
    }),
  };
}
