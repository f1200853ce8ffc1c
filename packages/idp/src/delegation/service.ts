import type { KeyObject } from 'node:crypto';
import { DelegationEnvelopeError, openEnvelope, responseClaims, sealEnvelope } from 'service-oauth-client/delegation';
import {
  canonicalEmail,
  DEVICE_ID_PATTERN,
  type DelegationRequestClaims,
  type DelegationResults,
  type MfaMethod,
  normalizePhone,
  OTP_PATTERN,
  RECOVERY_CODE_PATTERN,
} from 'service-protocol';
import { type ClientService, isBuiltInClient } from '../clients/service.js';
import type { ClientRecord } from '../clients/store.js';
import type { Sealer } from '../crypto/seal.js';
import type { SecretHasher } from '../crypto/secrets.js';
import { DELEGATION_RESPONSE_TTL_SECONDS } from '../defaults.js';
import type { DeviceService } from '../devices/service.js';
import { ServiceError } from '../errors.js';
import type { EventLog } from '../events/service.js';
import type { ChangeStep } from '../sign-in/mfa-change.js';
import type { MfaStep } from '../sign-in/mfa-step.js';
import type { SpentTokenStore } from '../spent-tokens/store.js';
import type { EnabledUserStore, User } from '../users/enabled-store.js';
import { createIdpKeyring, type IdpKeys, importSpPublicKeys, newKeySet, publicKeyOf, type SpKeyPair } from './keys.js';
import type { DelegationStore } from './store.js';

export interface DelegationDeps {
  store: DelegationStore;
  spent: SpentTokenStore;
  clients: ClientService;
  enabledUsers: EnabledUserStore;
  mfa: MfaStep;
  mfaMethods: MfaMethod[];
  devices: DeviceService;
  hash: SecretHasher;
  sealer: Sealer;
  events: EventLog;
  /** The service's issuer URL: the audience of every request and the issuer of every response. */
  issuer: string;
  now: () => number;
}

type Result<Op extends keyof DelegationResults> = DelegationResults[Op];

/** Longest string accepted in a request body field (an address is at most 254; ids are shorter). */
const BODY_STRING_MAX_LENGTH = 320;

/** The fields of each operation's body, all strings: required, or optional. */
const BODY_FIELDS: Record<keyof DelegationResults, Record<string, 'required' | 'optional'>> = {
  initiate_mfa_change: { userid: 'required', mfaMethod: 'required', phoneNumber: 'optional' },
  verify_mfa_change: { userid: 'required', sessionId: 'required', otp: 'required' },
  get_user_credentials: { userid: 'required' },
  list_devices: { userid: 'required' },
  revoke_device: { userid: 'required', deviceId: 'required' },
  revoke_all_devices: { userid: 'required' },
};

/** Each operation's documented failure, sealed like any answer (docs/delegation.md). */
const FAILED: { [Op in keyof DelegationResults]: (message: string) => Result<Op> } = {
  initiate_mfa_change: (message) => ({ session_id: '', status: 'failed', message }),
  verify_mfa_change: (message) => ({ status: 'failed', message }),
  get_user_credentials: (message) => ({ mfa_method: 'none', status: 'failed', message }),
  list_devices: (message) => ({ status: 'failed', devices: [], message }),
  revoke_device: (message) => ({ status: 'failed', message }),
  revoke_all_devices: (message) => ({ status: 'failed', revoked: 0, message }),
};

/** The first body field that is missing (when required) or not a short string, if any. */
function misshapenField(op: keyof DelegationResults, body: Record<string, unknown>): string | undefined {
  for (const [name, need] of Object.entries(BODY_FIELDS[op])) {
    const value = body[name];
    if (value === undefined && need === 'optional') continue;
    if (typeof value !== 'string' || value.length > BODY_STRING_MAX_LENGTH) return name;
  }
  return undefined;
}

export interface DelegationService {
  idpKeys: {
    get(): Promise<IdpKeys | undefined>;
    ensure(): Promise<IdpKeys>;
  };
  /**
   * Makes (or replaces) a client's delegation keys. Without `imported`, a new SP key set is
   * made and its private halves returned, once; with it, the SP's own public keys are stored.
   */
  createKeys(
    clientId: string,
    imported?: {
      verifyPem: string;
      encryptionPem: string;
    },
  ): Promise<{
    client: ClientRecord;
    idp: {
      verifyPublicPem: string;
      encryptionPublicPem: string;
    };
    sp: SpKeyPair | undefined;
  }>;
  /** One request envelope in, one response envelope out. */
  handle(jwe: string, bearer: string | undefined): Promise<string>;
}

/**
 * MFA delegation: a client's backend (the service provider, SP) reads and changes a user's MFA
 * method over nested JWTs, signed by the sender and encrypted to the receiver (docs/delegation.md).
 * Every request is checked before anything else happens: decryptable with the service's key,
 * signed by the key registered for its `iss`, addressed to this service, fresh, and never seen
 * before (its `jti` is spent in the database, so across nodes too). The SP may act only on
 * users who have signed in to it.
 */
export function createDelegationService(deps: DelegationDeps): DelegationService {
  const { store, clients, enabledUsers, mfa, hash, now } = deps;
  const idpKeys = createIdpKeyring({ store, sealer: deps.sealer, now });
  const spKeyCache = new Map<string, { verify: KeyObject; encryption: KeyObject; pem: string }>();

  async function spKeys(clientId: string) {
    const row = await store.spKeys(clientId);
    if (!row) return undefined;
    const cached = spKeyCache.get(clientId);
    if (cached?.pem === row.verifyPublicPem + row.encryptionPublicPem) return cached;
    const keys = {
      verify: publicKeyOf(row.verifyPublicPem),
      encryption: publicKeyOf(row.encryptionPublicPem),
      pem: row.verifyPublicPem + row.encryptionPublicPem,
    };
    spKeyCache.set(clientId, keys);
    return keys;
  }

  /** The user the SP names (email or user id), if that user has signed in to this SP. */
  async function userFor(client: ClientRecord, userid: string): Promise<User | undefined> {
    const email = canonicalEmail(userid);
    const user = email !== null ? await enabledUsers.findByEmail(email) : await enabledUsers.findById(userid);
    return user && (await clients.hasSignedIn(client.id, user.id)) ? user : undefined;
  }

  const failed = (error: unknown) => (error instanceof ServiceError ? error.message : 'The request could not be completed.');

  async function getUserCredentials(client: ClientRecord, body: { userid: string }): Promise<Result<'get_user_credentials'>> {
    const user = await userFor(client, body.userid);
    const method = user && (await mfa.methodOf(user.id));
    // Unknown users and users without MFA get the same answer.
    return method
      ? { mfa_method: method.method, status: 'enrolled' }
      : { mfa_method: 'none', status: 'not_enrolled', message: 'No MFA method is enrolled.' };
  }

  /** What the SP's backend shows next: the current factor's code to ask for, or the new method's. */
  function changeResult(step: Exclude<ChangeStep, { kind: 'done' }>): Result<'initiate_mfa_change'> {
    if (step.kind === 'current') {
      const how = {
        email: 'a code sent by email',
        sms: 'a code sent by SMS',
        totp: 'the code from the authenticator app',
        // A passkey cannot be proven through a backend: nothing was sent, a recovery code stands in for it.
        passkey: 'the user has a passkey, which a backend cannot check; enter one of their recovery codes',
      }[step.currentMethod];
      return {
        session_id: step.sessionId,
        status: 'current_factor_needed',
        current_method: step.currentMethod,
        message: `Confirm with the current method first: ${how}.`,
      };
    }
    if (step.method === 'totp') {
      return {
        session_id: step.sessionId,
        status: 'totp_pending',
        message: 'Show the QR code; the first code from the app confirms the change.',
        otpauth_uri: step.otpauthUri as string,
        secret: step.secret as string,
      };
    }
    return { session_id: step.sessionId, status: 'otp_sent', message: `A code was sent by ${step.method === 'sms' ? 'SMS' : 'email'}.` };
  }

  async function initiateChange(
    client: ClientRecord,
    body: { userid: string; mfaMethod: MfaMethod; phoneNumber?: string },
  ): Promise<Result<'initiate_mfa_change'>> {
    // The passkey's ceremony needs the user's authenticator, in the browser: an application's backend cannot enroll it.
    if (body.mfaMethod === 'passkey')
      return {
        session_id: '',
        status: 'failed',
        message: 'A passkey is enrolled by the user in the browser (service-web/passkeys), not through delegation.',
      };
    if (!deps.mfaMethods.includes(body.mfaMethod))
      return { session_id: '', status: 'failed', message: `MFA by ${body.mfaMethod} is not available.` };
    const phone = body.mfaMethod === 'sms' ? normalizePhone(body.phoneNumber) : undefined;
    if (body.mfaMethod === 'sms' && !phone) return { session_id: '', status: 'failed', message: 'phoneNumber must be an E.164 number.' };
    const user = await userFor(client, body.userid);
    if (!user) return { session_id: '', status: 'failed', message: 'No such user has signed in to this application.' };
    try {
      const started = await mfa.startChange(client, user, {
        method: body.mfaMethod,
        ...(phone ? { phone } : {}),
      });
      return changeResult(started);
    } catch (error) {
      if (!(error instanceof ServiceError) || !error.expose) throw error;
      return { session_id: '', status: 'failed', message: failed(error) };
    }
  }

  async function verifyChange(
    client: ClientRecord,
    body: { userid: string; sessionId: string; otp: string },
  ): Promise<Result<'verify_mfa_change'>> {
    const user = await userFor(client, body.userid);
    if (!user) return { status: 'failed', message: 'This change is unknown or has ended.' };
    // A recovery code stands in for a lost current factor (sign-in/mfa-change.ts).
    if (!OTP_PATTERN.test(body.otp) && !RECOVERY_CODE_PATTERN.test(body.otp))
      return { status: 'failed', message: 'The code must be 6 digits, or a recovery code.' };
    try {
      const step = await mfa.verifyChange(client, user, body.sessionId, body.otp);
      // The user is told of the change by mail (sign-in/mfa-session.ts applyMethod).
      if (step.kind === 'done') return { status: 'success', message: `The MFA method is now ${step.method}.` };
      return changeResult(step) as Result<'verify_mfa_change'>;
    } catch (error) {
      if (!(error instanceof ServiceError) || !error.expose) throw error;
      return { status: 'failed', message: failed(error) };
    }
  }

  const noUser = 'No such user has signed in to this application.';

  async function listDevices(client: ClientRecord, body: { userid: string }): Promise<Result<'list_devices'>> {
    const user = await userFor(client, body.userid);
    if (!user) return { status: 'failed', devices: [], message: noUser };
    const devices = await deps.devices.list(client.id, user.id);
    return {
      status: 'success',
      devices: devices.map((d) => ({
        id: d.id,
        name: d.name,
        browser: d.browser,
        os: d.os,
        created_at: d.createdAt,
        last_used_at: d.lastUsedAt,
      })),
    };
  }

  async function revokeDevice(client: ClientRecord, body: { userid: string; deviceId: string }): Promise<Result<'revoke_device'>> {
    const user = await userFor(client, body.userid);
    if (!user) return { status: 'failed', message: noUser };
    if (typeof body.deviceId !== 'string' || !DEVICE_ID_PATTERN.test(body.deviceId))
      return { status: 'failed', message: 'deviceId is not a device id.' };
    try {
      await deps.devices.revoke(client.id, user.id, body.deviceId);
      return { status: 'success', message: 'Device revoked.' };
    } catch (error) {
      if (!(error instanceof ServiceError) || !error.expose) throw error;
      return { status: 'failed', message: failed(error) };
    }
  }

  async function revokeAllDevices(client: ClientRecord, body: { userid: string }): Promise<Result<'revoke_all_devices'>> {
    const user = await userFor(client, body.userid);
    if (!user) return { status: 'failed', revoked: 0, message: noUser };
    const revoked = await deps.devices.revokeAll(client.id, user.id);
    return { status: 'success', revoked, message: `${revoked} device(s) signed out.` };
  }

  async function perform(client: ClientRecord, claims: DelegationRequestClaims): Promise<DelegationResults[keyof DelegationResults]> {
    switch (claims.op) {
      case 'get_user_credentials':
        return getUserCredentials(client, claims.body);
      case 'initiate_mfa_change':
        return initiateChange(client, claims.body);
      case 'verify_mfa_change':
        return verifyChange(client, claims.body);
      case 'list_devices':
        return listDevices(client, claims.body);
      case 'revoke_device':
        return revokeDevice(client, claims.body);
      case 'revoke_all_devices':
        return revokeAllDevices(client, claims.body);
    }
  }

  return {
    idpKeys,

    async createKeys(clientId: string, imported?: { verifyPem: string; encryptionPem: string }) {
      // A built-in client is the service's own: no SP backend acts through it.
      const client = isBuiltInClient(clientId) ? undefined : await clients.findById(clientId);
      if (!client) throw new Error(`no client ${clientId}`);
      const idp = await idpKeys.ensure();
      const sp = imported ? undefined : newKeySet();
      const publicKeys = imported ? importSpPublicKeys(imported.verifyPem, imported.encryptionPem) : (sp as ReturnType<typeof newKeySet>);
      await store.setSpKeys(
        clientId,
        { verifyPublicPem: publicKeys.verifyPublicPem, encryptionPublicPem: publicKeys.encryptionPublicPem },
        now(),
      );
      spKeyCache.delete(clientId);
      return { client, idp: { verifyPublicPem: idp.signingPublicPem, encryptionPublicPem: idp.encryptionPublicPem }, sp };
    },

    async handle(jwe: string, bearer: string | undefined): Promise<string> {
      const idp = await idpKeys.get();
      if (!idp)
        throw new ServiceError('ERR_DELEGATION_NOT_CONFIGURED', 'Delegation is not configured: run service-idp clients delegation-keys.');
      let claims: DelegationRequestClaims;
      try {
        const opened = await openEnvelope(jwe, {
          decryptionKey: idp.encryptionPrivate,
          verifyKey: async (iss) => (await spKeys(iss))?.verify,
          audience: deps.issuer,
          now: new Date(now()),
        });
        if (!('body' in opened) || 'irt' in opened) throw new DelegationEnvelopeError('ERR_DELEGATION_MALFORMED', 'not a request');
        claims = opened;
      } catch (error) {
        if (error instanceof DelegationEnvelopeError)
          throw new ServiceError('ERR_DELEGATION_INVALID', `The request envelope was refused (${error.code}).`);
        throw error;
      }
      const client = await clients.findById(claims.iss);
      const sp = await spKeys(claims.iss);
      if (!client || !sp) throw new ServiceError('ERR_DELEGATION_INVALID', 'The request envelope was refused (ERR_DELEGATION_ISSUER).');
      // The secret key is optional (the signature authenticates the SP); when sent, it must match.
      if (bearer !== undefined && !(await clients.authenticateBackend(client.id, bearer))) {
        throw new ServiceError('ERR_CLIENT_KEY_INVALID', 'The API key does not belong to this service provider.');
      }
      const jti = {
        purpose: 'delegation-request',
        idHash: hash('delegation-jti', `${client.id}\0${claims.jti}`),
        expiresAt: claims.exp * 1000,
      } as const;
      if (!(await deps.spent.spend(jti, now()))) {
        throw new ServiceError('ERR_DELEGATION_REPLAYED', 'This request was already received.');
      }
      const misshapen = misshapenField(claims.op, claims.body as Record<string, unknown>);
      // A signed request with a field of the wrong type gets the operation's sealed failure, never a 500.
      const result =
        misshapen === undefined
          ? await perform(client, claims)
          : FAILED[claims.op](`The field ${misshapen} must be a string of at most ${BODY_STRING_MAX_LENGTH} characters.`);
      await deps.events.record({ type: 'delegation.called', clientId: client.id, detail: { op: claims.op } });
      const response = responseClaims(claims, {
        result: result as never,
        ttlSeconds: DELEGATION_RESPONSE_TTL_SECONDS,
        now: new Date(now()),
      });
      return sealEnvelope({ claims: response, signingKey: idp.signingPrivate, encryptionKey: sp.encryption });
    },
  };
}
