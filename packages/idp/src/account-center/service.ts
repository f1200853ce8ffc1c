import { ACCOUNT_PAGE_PATH } from 'service-protocol';
import { ACCOUNT_CLIENT_ID, CONSOLE_CLIENT_ID, HOSTED_CLIENT_ID } from '../clients/service.js';
import { isNameUnverified } from '../clients/store.js';
import { createSignedTokens } from '../crypto/signed-token.js';
import { ACCOUNT_RECENT_SIGN_IN_SECONDS, ACCOUNT_SESSION_LIFETIME_SECONDS } from '../defaults.js';
import { ServiceError } from '../errors.js';
import type { EventLog } from '../events/service.js';
import type { AuditEvent } from '../events/store.js';
import type { Identities } from '../factors/upstream/identities.js';
import type { LinkedIdentity } from '../factors/upstream/store.js';
import type { FindApi } from '../oidc/authorize-request.js';
import type { ConsentStore } from '../oidc/consent-store.js';
import { createFirstPartySignIn, type FirstPartyDeps } from '../oidc/first-party-sign-in.js';
import type { UserService } from '../users/service.js';
import { type ActivityEntry, appIdOf, isShown, type ShownType } from './activity.js';
import { type AccountFactorDeps, type AccountFactors, createAccountFactors, type StepProof } from './factors.js';
import { type AccountPasskeyDeps, type AccountPasskeys, createAccountPasskeys } from './passkeys.js';

/** Where the account center lives and where the hosted sign-in sends users back to. */
export const ACCOUNT_PATH = ACCOUNT_PAGE_PATH;
export const ACCOUNT_CALLBACK_PATH = '/account/callback';

/** The service's own clients: not applications a user signs out of (or sees listed) at the account center. */
export const FIRST_PARTY_CLIENTS: ReadonlySet<string> = new Set([HOSTED_CLIENT_ID, ACCOUNT_CLIENT_ID, CONSOLE_CLIENT_ID]);

/** Who calls the account center through its session. */
export interface AccountCaller {
  userId: string;
  email: string;
  /** The remembered browser or passkey the sign-in behind the session used ("this device"). */
  deviceId: string;
  /** Unix seconds: when the user last signed in (the code's auth_time). */
  authTime: number;
  expiresAt: number;
}

export interface AccountCenter extends AccountFactors, AccountPasskeys {
  /** Creates or refreshes the account center's built-in client (its redirect URI follows the issuer). */
  ensureClient(): Promise<void>;
  /** The hosted sign-in to send the browser to (`fresh`: prompt=login, for a sensitive action), and the login cookie's value. */
  beginSignIn(fresh: boolean, uiLocales?: string): { location: string; login: string };
  /** The redirect back: the code (PKCE-bound to this browser's login cookie, its state compared) becomes a session cookie value. */
  finishSignIn(input: { code: string; state: string; iss: string | undefined; login: string | undefined }): Promise<{ session: string }>;
  /** The session behind the cookie: genuine, not expired, its user still there and its device or passkey still trusted. */
  authenticate(cookie: string | undefined): Promise<AccountCaller | undefined>;
  /**
   * ERR_FORBIDDEN (its message says to sign in again) unless the caller signed in within
   * ACCOUNT_RECENT_SIGN_IN_SECONDS. No new error code: ErrorStatus ships in service-web, whose
   * size budget has no byte to spare; the page knows the window from /account/session.
   */
  requireRecent(caller: AccountCaller): void;
  /** Unix milliseconds: until when the caller's sign-in counts as recent. */
  recentUntil(caller: AccountCaller): number;
  /** The per-session token every account call carries (x-account-csrf): a keyed hash of the cookie. */
  csrfToken(cookie: string): string;
  checkCsrf(cookie: string, token: string | undefined): boolean;
  /** The account with its devices, second factor, recovery-code count and applications (as `users show`). */
  overview(caller: AccountCaller): ReturnType<UserService['show']>;
  /** Revokes one of the caller's own devices or passkeys; ERR_NOT_FOUND for any other id (nothing changes). */
  revokeDevice(caller: AccountCaller, deviceId: string): Promise<void>;
  /** Revokes every live device and passkey of the caller but the one of this session; returns how many. */
  revokeOthers(caller: AccountCaller): Promise<number>;
  /** The caller's recent events the page shows (account-center/activity.ts), newest first, with the names they need. */
  activity(caller: AccountCaller): Promise<ActivityEntry[]>;
  /** The caller's linked upstream identities, each with its connection's name (the id when the connection is gone). */
  identities(caller: AccountCaller): Promise<(LinkedIdentity & { connectionName: string })[]>;
  /**
   * Unlinks one of the caller's own identities (recorded as identity.unlinked, actor user:<id>);
   * ERR_NOT_FOUND for any other. Always allowed: every account keeps its emailed code as a way in.
   */
  unlinkIdentity(caller: AccountCaller, connectionId: string, subject: string): Promise<void>;
  /** The export, after the proof of the factor in force (or its stand-in) on the form: its session, and a code or the passkey. */
  export(caller: AccountCaller, session: string, proof: StepProof): ReturnType<UserService['export']>;
  /**
   * Signs the caller out of one application they signed in to: its refresh tokens end (access
   * tokens already issued live out their few minutes). ERR_NOT_FOUND for any other client.
   */
  signOutApp(caller: AccountCaller, clientId: string): Promise<number>;
  /**
   * The applications and agents the caller approved, oldest first: each third-party client they
   * consented to (oidc/consent.ts) or that holds live refresh tokens of theirs, with what it was
   * granted, when, and when it last got tokens.
   */
  consents(caller: AccountCaller): Promise<AccountConsent[]>;
  /**
   * Revokes the caller's approval of one application in one transaction: the consent deleted (its
   * next sign-in asks again), its refresh tokens for the caller ended, `consent.revoked` recorded
   * (and so its webhooks). ERR_NOT_FOUND for a client the caller approved nothing of.
   */
  revokeConsent(caller: AccountCaller, clientId: string): Promise<void>;
  /** ERR_REQUEST_INVALID unless `confirm` is the caller's address (checked before any proof is asked or spent). */
  checkDeleteConfirmation(caller: AccountCaller, confirm: string): void;
  /**
   * Deletes the caller's account (the operator's delete path) when `confirm` is their address and
   * `proof` passes: the factor in force, a recovery code, or the emailed stand-in (AccountFactors.checkProof).
   */
  deleteAccount(caller: AccountCaller, confirm: string, session: string, proof: StepProof): Promise<void>;
}

/** A consent as the account page lists it: the application, and the permissions by their API's name. */
export interface AccountConsent {
  clientId: string;
  /** The application's name; undefined for a client since deleted (its consent went with it, so only in a race). */
  clientName: string | undefined;
  /** A name the client chose itself (it registered itself, or a metadata document's): the page marks it unverified. */
  nameUnverified: boolean;
  /** When it last got tokens for the caller (a code redeemed or a refresh); null when never. */
  lastUsedAt: number | null;
  /** OIDC scope values granted: openid, email, offline_access. */
  scope: string[];
  permissions: Array<{ apiName: string; permission: string }>;
  createdAt: number;
  updatedAt: number;
}

const actorOf = (userId: string) => `user:${userId}`;
/** The activity reads this many of the user's newest events, and shows at most ACTIVITY_SHOWN_MAX of those it shows. */
const ACTIVITY_READ = 100;
const ACTIVITY_SHOWN_MAX = 20;

/**
 * The account center (docs/operations.md, "The account center"): every user signs in through the
 * hosted sign-in as the built-in account client, and manages their own devices, sees their own
 * activity, exports and deletes their account. The session is a signed cookie (crypto/signed-token.ts)
 * naming the user, the device or passkey that signed in and the sign-in time: nothing is stored,
 * and it ends with that device (revoked) or the user (deleted, disabled).
 */
export function createAccountCenter(
  deps: FirstPartyDeps &
    Omit<AccountFactorDeps, 'users' | 'clients'> &
    Omit<AccountPasskeyDeps, 'clients' | 'now'> & {
      clients: FirstPartyDeps['clients'] & AccountFactorDeps['clients'];
      users: UserService;
      events: EventLog;
      /** factors/upstream/identities.ts: the same list and unlink as the operator's. */
      identities: Pick<Identities, 'list' | 'unlink'>;
      connections: { list(): Promise<{ id: string; name: string }[]> };
      /** oidc/refresh-tokens.ts: ends the user's refresh token families of one client. */
      revokeAppTokens: (userId: string, clientId: string) => Promise<number>;
      /** oidc/consent-store.ts: what the user granted third-party clients. */
      consents: Pick<ConsentStore, 'approvals' | 'revoke'>;
      /** The registered APIs, for their names (apis/). */
      findApi: FindApi;
    },
): AccountCenter {
  const { users, events, hash, now } = deps;
  const signIn = createFirstPartySignIn(deps, {
    clientId: ACCOUNT_CLIENT_ID,
    name: 'Account',
    callbackPath: ACCOUNT_CALLBACK_PATH,
    mfaPolicy: 'optional',
    purpose: 'account',
  });
  const refused = (message: string) => new ServiceError('ERR_FORBIDDEN', message);
  const tokens = createSignedTokens(hash, { purpose: 'account-session', visibleFields: 3, maxLength: 300 });
  const notFound = () => new ServiceError('ERR_NOT_FOUND', 'No such device.');
  const recentUntil = (caller: AccountCaller) => (caller.authTime + ACCOUNT_RECENT_SIGN_IN_SECONDS) * 1000;
  const owned = async (caller: AccountCaller) => (await users.devices(caller.userId)).filter((d) => d.removedAt === null);

  const factors = createAccountFactors(deps);
  const checkDeleteConfirmation = (caller: AccountCaller, confirm: string) => {
    if (confirm.trim().toLowerCase() !== caller.email.toLowerCase())
      throw new ServiceError('ERR_REQUEST_INVALID', 'Type your email address to confirm that the account is to be deleted.');
  };

  return {
    ...factors,
    ...createAccountPasskeys(deps),
    ensureClient: signIn.ensureClient,

    beginSignIn: (fresh, uiLocales) =>
      signIn.begin({ ...(fresh ? { prompt: 'login' } : {}), ...(uiLocales ? { ui_locales: uiLocales } : {}) }),

    async finishSignIn(input) {
      const { user, signedIn } = await signIn.redeem(input);
      const { deviceId, authTime } = signedIn;
      // A session is bound to what signed in: a sign-in that left no device or passkey opens none.
      if (!deviceId) throw refused('Sign in again and keep this browser remembered to open your account.');
      const expiresAt = Math.min(authTime * 1000, now()) + ACCOUNT_SESSION_LIFETIME_SECONDS * 1000;
      const session = tokens.issue({ visible: [user.id, deviceId, authTime.toString(36)], bound: [] }, expiresAt);
      await events.record({ type: 'account.signed_in', userId: user.id, deviceId, actor: actorOf(user.id) });
      return { session };
    },

    async authenticate(cookie) {
      if (!cookie) return undefined;
      const at = now();
      const checked = tokens.check(cookie, [], at);
      if (!checked.ok) return undefined;
      const [userId = '', deviceId = '', authTime = ''] = checked.visible;
      const user = await signIn.boundUser(userId, deviceId, at);
      if (!user) return undefined;
      return { userId, email: user.email, deviceId, authTime: Number.parseInt(authTime, 36), expiresAt: checked.expiresAt };
    },

    requireRecent(caller) {
      if (now() > recentUntil(caller))
        throw new ServiceError('ERR_FORBIDDEN', 'Sign in again to do this: your last sign-in is not recent enough.');
    },
    recentUntil,

    csrfToken: signIn.csrfToken,
    checkCsrf: signIn.checkCsrf,

    overview: (caller) => users.show(caller.userId),

    async revokeDevice(caller, deviceId) {
      if (!(await owned(caller)).some((d) => d.id === deviceId)) throw notFound();
      await users.revokeDevice(deviceId, actorOf(caller.userId));
    },

    async revokeOthers(caller) {
      const others = (await owned(caller)).filter((d) => d.id !== caller.deviceId);
      for (const device of others) await users.revokeDevice(device.id, actorOf(caller.userId));
      return others.length;
    },

    async activity(caller) {
      const { events: recent } = await events.list({ userId: caller.userId, limit: ACTIVITY_READ });
      const shown = recent.filter((e): e is AuditEvent & { type: ShownType } => isShown(e.type)).slice(0, ACTIVITY_SHOWN_MAX);
      const appIds = [...new Set(shown.map(appIdOf).filter((id): id is string => id !== null))];
      const [apps, connections] = await Promise.all([
        Promise.all(appIds.map(async (id) => [id, (await deps.clients.findById(id))?.name] as const)),
        shown.some((e) => e.type.startsWith('identity.')) ? deps.connections.list() : [],
      ]);
      const appNames = new Map(apps);
      const connectionNames = new Map(connections.map((c) => [c.id, c.name]));
      return shown.map((event) => {
        const appId = appIdOf(event);
        const connection = typeof event.detail?.connection === 'string' ? event.detail.connection : undefined;
        return {
          event,
          appId,
          appName: appId === null ? undefined : appNames.get(appId),
          connectionName: connection === undefined ? undefined : (connectionNames.get(connection) ?? connection),
        };
      });
    },

    async identities(caller) {
      const [linked, connections] = await Promise.all([deps.identities.list(caller.userId), deps.connections.list()]);
      const names = new Map(connections.map((c) => [c.id, c.name]));
      return linked.map((i) => ({ ...i, connectionName: names.get(i.connectionId) ?? i.connectionId }));
    },

    unlinkIdentity: (caller, connectionId, subject) => deps.identities.unlink(caller.userId, connectionId, subject, actorOf(caller.userId)),

    async export(caller, session, proof) {
      await factors.checkProof(caller, 'export', session, proof);
      return users.export(caller.userId);
    },

    async signOutApp(caller, clientId) {
      const { clientSignIns } = await users.show(caller.userId);
      if (FIRST_PARTY_CLIENTS.has(clientId) || !clientSignIns.some((app) => app.clientId === clientId))
        throw new ServiceError('ERR_NOT_FOUND', 'No such application.');
      const families = await deps.revokeAppTokens(caller.userId, clientId);
      await events.record({
        type: 'account.app_signed_out',
        userId: caller.userId,
        clientId,
        actor: actorOf(caller.userId),
        detail: { families },
      });
      return families;
    },

    async consents(caller) {
      const approved = await deps.consents.approvals(caller.userId, now());
      const apiNames = new Map<string, string>();
      for (const identifier of new Set(approved.flatMap((a) => (a.grant?.permissions ?? []).map(([api]) => api))))
        apiNames.set(identifier, (await deps.findApi(identifier))?.name ?? identifier);
      const listed = await Promise.all(
        approved.map(async (a) => {
          const client = await deps.clients.findById(a.clientId);
          // Tokens without a consent: listed for a third-party client only (a first-party app is under "Applications").
          if (!a.grant && !client?.thirdParty) return undefined;
          return {
            clientId: a.clientId,
            clientName: client?.name,
            nameUnverified: client ? isNameUnverified(client) : false,
            lastUsedAt: a.lastUsedAt,
            scope: a.grant?.scope ?? [],
            permissions: (a.grant?.permissions ?? []).map(([api, permission]) => ({ apiName: apiNames.get(api) ?? api, permission })),
            createdAt: a.approvedAt,
            updatedAt: a.approvedAt,
          };
        }),
      );
      return listed.filter((entry) => entry !== undefined);
    },

    async revokeConsent(caller, clientId) {
      // What the app already holds ends in the same transaction: its refresh tokens (access tokens live out their few minutes).
      const revoked = await deps.consents.revoke(caller.userId, clientId, now(), (tx, families) =>
        events.recordIn(tx, {
          type: 'consent.revoked',
          userId: caller.userId,
          clientId,
          actor: actorOf(caller.userId),
          detail: { families },
        }),
      );
      if (!revoked) throw new ServiceError('ERR_NOT_FOUND', 'No such application.');
    },

    checkDeleteConfirmation,

    async deleteAccount(caller, confirm, session, proof) {
      checkDeleteConfirmation(caller, confirm);
      await factors.checkProof(caller, 'delete', session, proof);
      await users.delete(caller.userId, actorOf(caller.userId));
    },
  };
}
