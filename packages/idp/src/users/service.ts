import { type AdminLinkedIdentity, isValidEmail, normalizeEmail } from 'service-protocol';
import type { SecretHasher } from '../crypto/secrets.js';
import { PAGE_SIZE_MAX } from '../defaults.js';
import { ServiceError } from '../errors.js';
import type { EventLog } from '../events/service.js';
import type { AuditEvent } from '../events/store.js';
import { checkPageSize, checkQueryText, decodeCursor, encodeCursor } from '../storage/pagination.js';
import type { UserHoldings, UserRecord, UserStore } from './store.js';

/** Who asked: 'cli', or an admin key's id. Recorded with every change. */
export type Actor = string;

/**
 * What an operator revokes of a user: a remembered browser (devices/store.ts, by `find`) or a
 * passkey (factors/passkey/store.ts, by `findById`). A port the composition fills: users/ is
 * ground that devices/ and the factors read, so it names neither.
 */
export interface RevocableDevices {
  find(id: string): Promise<{ userId: string; clientId: string } | undefined>;
  revokeById(id: string, at: number): Promise<boolean>;
}
export interface RevocablePasskeys {
  findById(id: string): Promise<{ userId: string; clientId: string } | undefined>;
  revokeById(id: string, at: number): Promise<boolean>;
}

/** Ends a user's SSO sessions and tells their apps (oidc/store.ts, through devices/service.ts SessionEnder). */
export interface UserSessions {
  endAll(userId: string): Promise<unknown>;
  endUnbound(userId: string): Promise<unknown>;
}

/** Everything the service holds about one person (the export). */
export interface UserExport extends UserHoldings {
  account: UserRecord;
  events: AuditEvent[];
  /** Identities at upstream providers linked to the account (never their tokens). */
  identities: AdminLinkedIdentity[];
}

/** What an external id (SCIM's externalId) may be, on users, organizations and memberships: printable ASCII, 1 to 200. */
export const EXTERNAL_ID = /^[\x21-\x7e]{1,200}$/;

/** An operator's search of the users (admin API, CLI, console). */
export interface UserQuery {
  email?: string;
  /** The external id, exactly. */
  externalId?: string;
  createdSince?: number;
  createdBefore?: number;
  cursor?: string;
  limit: number;
}

export interface UserService {
  find: (key: string) => Promise<UserRecord>;
  /** Oldest first; `email`: part of the address; created in [createdSince, createdBefore) (epoch ms). */
  list(query: UserQuery): Promise<{
    users: UserRecord[];
    nextCursor: string | null;
  }>;
  /** The account with what hangs on it (devices, MFA method without secrets, client sign-ins). */
  show(key: string): Promise<UserRecord & UserHoldings>;
  /** No sign-in path sees the user until enabled again; devices and MFA stay as they were. */
  disable: (key: string, actor: Actor) => Promise<UserRecord>;
  enable: (key: string, actor: Actor) => Promise<UserRecord>;
  /**
   * Sets the id a provisioning system (SCIM) knows the user by, or with null clears it: printable
   * ASCII, 1 to 200 characters, one user per id (ERR_REQUEST_INVALID, nothing changed, when taken).
   */
  setExternalId(key: string, externalId: string | null, actor: Actor): Promise<UserRecord>;
  /** Everything held about the person, as the export of a data-subject access request. */
  export(key: string): Promise<UserExport>;
  /** Deletes every row about the user in one transaction; one event naming no one records that it happened. */
  delete(key: string, actor: Actor): Promise<void>;
  /** A new set of recovery codes, to hand to the user once; the old set stops working and the user is mailed. */
  regenerateRecoveryCodes(key: string, actor: Actor): Promise<string[]>;
  /** Removes the user's second factor and recovery codes (the user is mailed); returns the method removed. */
  resetMfa(key: string, actor: Actor): Promise<string>;
  /** The user's devices (remembered browsers and passkeys) for every client, revoked and expired ones included. */
  devices(key: string): Promise<UserHoldings['devices']>;
  /** Revokes one device or passkey by id: its key stops working on every node at once. */
  revokeDevice(deviceId: string, actor: Actor): Promise<void>;
}

/**
 * The people who sign in, as operators manage them: find, disable, enable, delete, export, and
 * their devices. Every change is recorded in the audit trail with the actor.
 */
export function createUserService(deps: {
  store: UserStore;
  /** Ends the user's SSO sessions and tells their apps (oidc/): at disabling, deletion and a revocation. */
  sessions?: UserSessions;
  devices: RevocableDevices;
  /** factors/passkey/: passkeys are listed and revoked with the devices (same `dev_` ids). */
  passkeys: RevocablePasskeys;
  events: EventLog;
  hash: SecretHasher;
  now: () => number;
  /** sign-in/mfa-step.ts: a new recovery-code set for a user with MFA (undefined when the user has none). */
  regenerateRecoveryCodes: (email: string, actor: Actor) => Promise<string[] | undefined>;
  /** sign-in/mfa-step.ts: removes a user's MFA method and recovery codes (undefined when the user has none). */
  resetMfa: (email: string, actor: Actor) => Promise<string | undefined>;
  /** After a passkey is revoked (factors/passkey/fallback.ts: the last passkey of a passkey-MFA user falls back to email MFA, the user told by mail). */
  onPasskeyRevoked?: (userId: string, context: { clientId: string; actor: string }) => Promise<unknown>;
  /** oidc/: ends every refresh token family of a user being disabled (enabling does not bring them back). */
  revokeRefreshTokens: (userId: string) => Promise<unknown>;
  /** factors/upstream/: the identities linked to a user, for the export. */
  identitiesOf: (userId: string) => Promise<AdminLinkedIdentity[]>;
}): UserService {
  const { store, devices, passkeys, events, hash, now } = deps;
  const notFound = (key: string) => new ServiceError('ERR_NOT_FOUND', `No user ${key}.`);

  /** A user by id (usr_…) or email address; ERR_NOT_FOUND when there is none. */
  async function find(key: string): Promise<UserRecord> {
    const user = isValidEmail(key) ? await store.findByEmail(normalizeEmail(key)) : await store.findById(key);
    if (!user) throw notFound(key);
    return user;
  }

  async function setDisabled(key: string, disabled: boolean, actor: Actor): Promise<UserRecord> {
    const user = await find(key);
    const at = disabled ? now() : null;
    const event = { type: disabled ? 'user.disabled' : 'user.enabled', userId: user.id, actor } as const;
    if (!(await store.setDisabled(user.id, at, event, now()))) throw notFound(key);
    // The redeeming statement refuses a disabled user's refresh tokens already; this makes it final.
    if (disabled) await deps.revokeRefreshTokens(user.id);
    // Every page already refuses the user's sessions; ending them tells the apps (back-channel logout).
    if (disabled) await deps.sessions?.endAll(user.id);
    return { ...user, disabledAt: at };
  }

  return {
    find,

    async list(query: UserQuery): Promise<{ users: UserRecord[]; nextCursor: string | null }> {
      const limit = checkPageSize(query.limit, PAGE_SIZE_MAX);
      if (query.email !== undefined) checkQueryText('email', query.email);
      const { createdSince, createdBefore } = query;
      for (const [name, at] of Object.entries({ createdSince, createdBefore }))
        if (at !== undefined && (!Number.isSafeInteger(at) || at < 0))
          throw new ServiceError('ERR_REQUEST_INVALID', `${name} must be a time in Unix epoch milliseconds.`);
      if (createdSince !== undefined && createdBefore !== undefined && createdSince >= createdBefore)
        throw new ServiceError('ERR_REQUEST_INVALID', 'createdSince must be earlier than createdBefore.');
      const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
      const users = await store.list({
        ...(query.email ? { email: query.email } : {}),
        ...(query.externalId !== undefined ? { externalId: query.externalId } : {}),
        ...(createdSince !== undefined ? { createdSince } : {}),
        ...(createdBefore !== undefined ? { createdBefore } : {}),
        ...(after ? { after } : {}),
        limit,
      });
      const last = users.at(-1);
      return { users, nextCursor: users.length === limit && last ? encodeCursor(last.createdAt, last.id) : null };
    },

    async setExternalId(key, externalId, actor) {
      if (externalId !== null && !EXTERNAL_ID.test(externalId))
        throw new ServiceError('ERR_REQUEST_INVALID', 'An external id is 1 to 200 printable ASCII characters, without spaces.');
      const user = await find(key);
      const event = { type: 'user.updated', userId: user.id, actor, detail: { externalId: externalId ?? 'none' } } as const;
      const outcome = await store.setExternalId(user.id, externalId, event, now());
      if (outcome === 'gone') throw notFound(key);
      if (outcome === 'taken') throw new ServiceError('ERR_REQUEST_INVALID', 'Another user has this external id.');
      return { ...user, externalId };
    },

    async show(key: string): Promise<UserRecord & UserHoldings> {
      const user = await find(key);
      return { ...user, ...(await store.holdings(user.id)) };
    },

    disable: (key: string, actor: Actor) => setDisabled(key, true, actor),
    enable: (key: string, actor: Actor) => setDisabled(key, false, actor),

    async export(key: string): Promise<UserExport> {
      const account = await find(key);
      const [holdings, trail, identities] = await Promise.all([
        store.holdings(account.id),
        events.forUser(account.id),
        deps.identitiesOf(account.id),
      ]);
      return { account, ...holdings, events: trail, identities };
    },

    async delete(key: string, actor: Actor): Promise<void> {
      const user = await find(key);
      // First, so the apps hear of it (back-channel logout rows outlive the user's rows, naming only sub and sid).
      await deps.sessions?.endAll(user.id);
      if (!(await store.delete(user, hash('account', user.email), { type: 'user.deleted', actor }, now()))) throw notFound(key);
    },

    async regenerateRecoveryCodes(key: string, actor: Actor): Promise<string[]> {
      const user = await find(key);
      const codes = await deps.regenerateRecoveryCodes(user.email, actor);
      if (!codes) throw new ServiceError('ERR_REQUEST_INVALID', `User ${key} has no second factor: recovery codes back one up.`);
      return codes;
    },

    async resetMfa(key: string, actor: Actor): Promise<string> {
      const user = await find(key);
      const method = await deps.resetMfa(user.email, actor);
      if (!method) throw new ServiceError('ERR_REQUEST_INVALID', `User ${key} has no second factor: nothing to reset.`);
      return method;
    },

    async devices(key: string): Promise<UserHoldings['devices']> {
      return (await store.holdings((await find(key)).id)).devices;
    },

    async revokeDevice(deviceId: string, actor: Actor): Promise<void> {
      const device = await devices.find(deviceId);
      if (!device) {
        const passkey = await passkeys.findById(deviceId);
        if (!passkey) throw new ServiceError('ERR_DEVICE_NOT_FOUND', `No device ${deviceId}.`);
        if (!(await passkeys.revokeById(deviceId, now())))
          throw new ServiceError('ERR_DEVICE_NOT_FOUND', `Passkey ${deviceId} is already revoked.`);
        await events.record({ type: 'passkey.revoked', userId: passkey.userId, clientId: passkey.clientId, deviceId, actor });
        await deps.sessions?.endUnbound(passkey.userId);
        await deps.onPasskeyRevoked?.(passkey.userId, { clientId: passkey.clientId, actor });
        return;
      }
      if (!(await devices.revokeById(deviceId, now())))
        throw new ServiceError('ERR_DEVICE_NOT_FOUND', `Device ${deviceId} is already revoked.`);
      await events.record({ type: 'device.revoked', userId: device.userId, clientId: device.clientId, deviceId, actor });
      await deps.sessions?.endUnbound(device.userId);
    },
  };
}
