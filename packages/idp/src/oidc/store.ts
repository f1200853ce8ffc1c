import type { ExpressionBuilder } from 'kysely';
import { resourcesColumn, resourcesOf } from '../authorization-codes/store.js';
import type { Database, Db } from '../storage/schema.js';
import { logoutDeliveryRow } from '../webhooks/outbox-store.js';
import type { ResponseMode } from './authorization-response.js';
import type { LogoutSubject } from './backchannel-logout.js';

/** A validated authorization request waiting for the hosted sign-in. */
export interface AuthorizationRequest {
  clientId: string;
  redirectUri: string;
  state: string | null;
  nonce: string | null;
  codeChallenge: string | null;
  prompt: string | null;
  maxAgeSeconds: number | null;
  loginHint: string | null;
  /** What a successful sign-in grants: `openid email`, plus `offline_access` when asked for. */
  scope: string;
  /** How the response reaches the client (oidc/authorization-response.ts). */
  responseMode: ResponseMode;
  /** RFC 8707: the registered APIs the client asked access tokens for (`resource`); empty: none. */
  resources: string[];
  /** The organization the app asked for (`organization`, organizations/); null: none. */
  organization: string | null;
}

export interface SignInSession {
  userId: string;
  deviceId: string;
  amr: string[];
  authTime: number;
}

/** A live session as read back: its facts and its `sid` (null for a session from before sids). */
export type LiveSession = SignInSession & { sid: string | null };

/**
 * Which sessions to end: one (its cookie's hash), or a user's: all of them, those a passkey
 * opened, or those whose device or passkey is revoked (what a revocation leaves unbound).
 */
export type SessionsToEnd = { idHash: string } | { userId: string; which: 'all' | 'passkeys' | 'unbound' };

/** A client to frame on the signed-out page (OIDC Front-Channel Logout 1.0). */
export interface FrontChannelTarget {
  clientId: string;
  uri: string;
  sessionRequired: boolean;
}

/** A finished hosted sign-in: a session's facts, the device null when it was not remembered. */
export type HeldSignIn = Omit<SignInSession, 'deviceId'> & { deviceId: string | null };

const REQUEST_COLUMNS = [
  'client_id',
  'redirect_uri',
  'state',
  'nonce',
  'code_challenge',
  'prompt',
  'max_age_seconds',
  'login_hint',
  'scope',
  'response_mode',
  'resources',
  'organization_id',
] as const;

type RequestRow = Pick<Database['authorization_requests'], (typeof REQUEST_COLUMNS)[number]>;

function requestOf(row: RequestRow): AuthorizationRequest {
  return {
    clientId: row.client_id,
    redirectUri: row.redirect_uri,
    state: row.state,
    nonce: row.nonce,
    codeChallenge: row.code_challenge,
    prompt: row.prompt,
    maxAgeSeconds: row.max_age_seconds === null ? null : Number(row.max_age_seconds),
    loginHint: row.login_hint,
    scope: row.scope ?? 'openid email',
    responseMode: row.response_mode === 'form_post' ? 'form_post' : 'query',
    resources: resourcesOf(row.resources),
    organization: row.organization_id,
  };
}

const HELD_COLUMNS = ['held_user_id', 'held_device_id', 'held_amr', 'held_auth_time', 'held_sid'] as const;

/**
 * The page a request with a sign-in held on it waits on: the consent page (oidc/consent.ts) or
 * the organization picker (oidc/organization-picker.ts). Stored in `consent_pending` (1, 2), so
 * only that page's answer reads or finishes it.
 */
export type WaitingPage = 'consent' | 'organization';
const WAITING: Record<WaitingPage, number> = { consent: 1, organization: 2 };

/** A request waiting on the consent page or the picker: the request, who signed in, and the session (sid) the code is issued in. */
export interface ConsentPending {
  request: AuthorizationRequest;
  signedIn: HeldSignIn;
  sid: string | null;
}

function consentPendingOf(row: RequestRow & Pick<Database['authorization_requests'], (typeof HELD_COLUMNS)[number]>) {
  if (!row.held_user_id || row.held_amr === null || row.held_auth_time === null) return undefined;
  return {
    request: requestOf(row),
    signedIn: {
      userId: row.held_user_id,
      deviceId: row.held_device_id,
      amr: JSON.parse(row.held_amr) as string[],
      authTime: Number(row.held_auth_time),
    },
    sid: row.held_sid,
  };
}

/**
 * Pending authorization requests and sign-in sessions, each stored by the keyed hash of the
 * value the browser holds. A request is consumed by stamping a time in one conditional UPDATE.
 */
export function createOidcStore(db: Db, options: { logoutEnqueued?: () => void } = {}) {
  return {
    async insertRequest(
      idHash: string,
      bindingHash: string,
      request: AuthorizationRequest,
      now: number,
      expiresAt: number,
      /**
       * A request waiting on the consent page (oidc/consent.ts) or the organization picker: the
       * sign-in held on it and the session it is in; only findConsentRequest and
       * consumeConsentRequest for that page see it.
       */
      consent?: { signedIn: HeldSignIn; sid: string | null; page?: WaitingPage },
    ) {
      await db
        .insertInto('authorization_requests')
        .values({
          id: idHash,
          browser_binding_hash: bindingHash,
          client_id: request.clientId,
          redirect_uri: request.redirectUri,
          state: request.state,
          nonce: request.nonce,
          code_challenge: request.codeChallenge,
          prompt: request.prompt,
          max_age_seconds: request.maxAgeSeconds,
          login_hint: request.loginHint,
          scope: request.scope,
          response_mode: request.responseMode === 'query' ? null : request.responseMode,
          resources: resourcesColumn(request.resources),
          organization_id: request.organization,
          created_at: now,
          expires_at: expiresAt,
          consumed_at: null,
          ...(consent
            ? {
                held_user_id: consent.signedIn.userId,
                held_device_id: consent.signedIn.deviceId,
                held_amr: JSON.stringify(consent.signedIn.amr),
                held_auth_time: consent.signedIn.authTime,
                held_sid: consent.sid,
                consent_pending: WAITING[consent.page ?? 'consent'],
              }
            : {}),
        })
        .execute();
    },

    /** A live, unconsumed request (the hosted page and the browser API read it; only completion consumes it). */
    async findLiveRequest(idHash: string, now: number): Promise<(AuthorizationRequest & { bindingHash: string }) | undefined> {
      const row = await db
        .selectFrom('authorization_requests')
        .select([...REQUEST_COLUMNS, 'browser_binding_hash'])
        .where('id', '=', idHash)
        .where('consumed_at', 'is', null)
        .where('expires_at', '>', now)
        .where('consent_pending', 'is', null)
        .executeTakeFirst();
      return row && { ...requestOf(row), bindingHash: row.browser_binding_hash };
    },

    /** The request waiting on the consent page (or `page`), bound to this browser, with its sign-in. */
    async findConsentRequest(
      idHash: string,
      bindingHash: string,
      now: number,
      page: WaitingPage = 'consent',
    ): Promise<ConsentPending | undefined> {
      const row = await db
        .selectFrom('authorization_requests')
        .select([...REQUEST_COLUMNS, ...HELD_COLUMNS])
        .where(liveAndBound(idHash, bindingHash, now, page))
        .executeTakeFirst();
      return row && consentPendingOf(row);
    },

    /** Consumes the request waiting on the consent page (Allow or Deny) or `page`: of concurrent callers exactly one gets it. */
    async consumeConsentRequest(
      idHash: string,
      bindingHash: string,
      now: number,
      page: WaitingPage = 'consent',
    ): Promise<ConsentPending | undefined> {
      const row = await db
        .updateTable('authorization_requests')
        .set({ consumed_at: now })
        .where(liveAndBound(idHash, bindingHash, now, page))
        .returning([...REQUEST_COLUMNS, ...HELD_COLUMNS])
        .executeTakeFirst();
      return row && consentPendingOf(row);
    },

    /** Consumes a live request bound to this browser: of concurrent callers exactly one gets it. */
    async consumeRequest(idHash: string, bindingHash: string, now: number): Promise<AuthorizationRequest | undefined> {
      const row = await db
        .updateTable('authorization_requests')
        .set({ consumed_at: now })
        .where(liveAndBound(idHash, bindingHash, now))
        .returning([...REQUEST_COLUMNS])
        .executeTakeFirst();
      return row && requestOf(row);
    },

    /**
     * Holds a finished sign-in on a live request bound to this browser, while the hosted page
     * shows the recovery codes it issued or offers to add a passkey; the request stays pending
     * until `consumeHeldRequest`.
     */
    async holdSignIn(idHash: string, bindingHash: string, signedIn: HeldSignIn, now: number): Promise<boolean> {
      const row = await db
        .updateTable('authorization_requests')
        .set({
          held_user_id: signedIn.userId,
          held_device_id: signedIn.deviceId,
          held_amr: JSON.stringify(signedIn.amr),
          held_auth_time: signedIn.authTime,
        })
        .where(liveAndBound(idHash, bindingHash, now))
        .returning('id')
        .executeTakeFirst();
      return row !== undefined;
    },

    /** The sign-in held on a live request bound to this browser (not consumed): the hosted passkey offer reads it. */
    async findHeldSignIn(idHash: string, bindingHash: string, now: number): Promise<HeldSignIn | undefined> {
      const row = await db
        .selectFrom('authorization_requests')
        .select(['held_user_id', 'held_device_id', 'held_amr', 'held_auth_time'])
        .where(liveAndBound(idHash, bindingHash, now))
        .where('held_user_id', 'is not', null)
        .executeTakeFirst();
      if (!row?.held_user_id || row.held_amr === null || row.held_auth_time === null) return undefined;
      return {
        userId: row.held_user_id,
        deviceId: row.held_device_id,
        amr: JSON.parse(row.held_amr) as string[],
        authTime: Number(row.held_auth_time),
      };
    },

    /** Consumes a live request bound to this browser that holds a sign-in: of concurrent callers exactly one gets it. */
    async consumeHeldRequest(
      idHash: string,
      bindingHash: string,
      now: number,
    ): Promise<{ request: AuthorizationRequest; signedIn: HeldSignIn } | undefined> {
      const row = await db
        .updateTable('authorization_requests')
        .set({ consumed_at: now })
        .where(liveAndBound(idHash, bindingHash, now))
        .where('held_user_id', 'is not', null)
        .returning([...REQUEST_COLUMNS, 'held_user_id', 'held_device_id', 'held_amr', 'held_auth_time'])
        .executeTakeFirst();
      if (!row?.held_user_id || row.held_amr === null || row.held_auth_time === null) return undefined;
      return {
        request: requestOf(row),
        signedIn: {
          userId: row.held_user_id,
          deviceId: row.held_device_id,
          amr: JSON.parse(row.held_amr) as string[],
          authTime: Number(row.held_auth_time),
        },
      };
    },

    async insertSession(idHash: string, session: SignInSession, sid: string, now: number, expiresAt: number): Promise<void> {
      await db
        .insertInto('sign_in_sessions')
        .values({
          id: idHash,
          sid,
          user_id: session.userId,
          device_id: session.deviceId,
          amr: JSON.stringify(session.amr),
          auth_time: session.authTime,
          last_used_at: now,
          expires_at: expiresAt,
          ended_at: null,
          dbsc_jwk: null,
          dbsc_id: null,
        })
        .execute();
    },

    /** The DBSC binding of a live session (oidc/dbsc.ts): undefined for no live session; jwk null when unbound. */
    async findDbsc(idHash: string, now: number): Promise<{ jwk: string | null; id: string | null } | undefined> {
      const row = await db
        .selectFrom('sign_in_sessions')
        .select(['dbsc_jwk', 'dbsc_id'])
        .where('id', '=', idHash)
        .where('ended_at', 'is', null)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return row && { jwk: row.dbsc_jwk, id: row.dbsc_id };
    },

    /**
     * Binds a live session to a DBSC key, once (a conditional UPDATE: the first registration
     * wins). DBSC may replace the hosted page's WebCrypto key (its browser has both): the
     * registration challenge comes only with the sign-in's answer.
     */
    async bindDbsc(idHash: string, jwk: string, dbscId: string, now: number): Promise<boolean> {
      const row = await db
        .updateTable('sign_in_sessions')
        .set({ dbsc_jwk: jwk, dbsc_id: dbscId })
        .where('id', '=', idHash)
        .where('dbsc_id', 'is', null)
        .where('ended_at', 'is', null)
        .where('expires_at', '>', now)
        .returning('id')
        .executeTakeFirst();
      return row !== undefined;
    },

    /** Binds a live, unbound session to the hosted page's WebCrypto key (the DBSC fallback: no DBSC id). */
    async bindPageKey(idHash: string, jwk: string, now: number): Promise<boolean> {
      const row = await db
        .updateTable('sign_in_sessions')
        .set({ dbsc_jwk: jwk })
        .where('id', '=', idHash)
        .where('dbsc_jwk', 'is', null)
        .where('ended_at', 'is', null)
        .where('expires_at', '>', now)
        .returning('id')
        .executeTakeFirst();
      return row !== undefined;
    },

    /** A session neither ended, past its absolute end, nor idle since `idleSince`. */
    async findLiveSession(idHash: string, now: number, idleSince: number): Promise<LiveSession | undefined> {
      const row = await db
        .selectFrom('sign_in_sessions')
        .select(['user_id', 'device_id', 'amr', 'auth_time', 'sid'])
        .where('id', '=', idHash)
        .where('ended_at', 'is', null)
        .where('expires_at', '>', now)
        .where('last_used_at', '>', idleSince)
        .executeTakeFirst();
      return (
        row && {
          userId: row.user_id,
          deviceId: row.device_id,
          amr: JSON.parse(row.amr) as string[],
          authTime: Number(row.auth_time),
          sid: row.sid,
        }
      );
    },

    async touchSession(idHash: string, now: number): Promise<void> {
      await db.updateTable('sign_in_sessions').set({ last_used_at: now }).where('id', '=', idHash).execute();
    },

    /**
     * Ends one session without telling its apps: only for a new sign-in of the same user in the
     * same browser, whose new session keeps the sid (oidc/service.ts finish).
     */
    async replaceSession(idHash: string, now: number): Promise<void> {
      await db.updateTable('sign_in_sessions').set({ ended_at: now }).where('id', '=', idHash).where('ended_at', 'is', null).execute();
    },

    /** Remembers that `clientId` got a code in the session `sid`: it gets a logout token when the session ends. */
    async recordClient(sid: string, clientId: string, userId: string, now: number): Promise<void> {
      await db
        .insertInto('session_clients')
        .values({ sid, client_id: clientId, user_id: userId, created_at: now })
        .onConflict((oc) => oc.columns(['sid', 'client_id']).doNothing())
        .execute();
    },

    /**
     * Ends live sessions and, in the same transaction, writes a back-channel logout row to the
     * webhook outbox for every client with a back-channel URI that got a code in one of them
     * (OIDC Back-Channel Logout 1.0): a node that dies after this loses no logout, and nothing
     * waits on an app. "Sign out everywhere else" ends passkey sessions this way (the passkeys
     * stay registered); a revocation ends the sessions it unbound. Returns the ended sessions.
     */
    async endSessions(which: SessionsToEnd, now: number): Promise<{ sid: string | null; userId: string }[]> {
      const ended = await db.transaction().execute(async (tx) => {
        let query = tx.updateTable('sign_in_sessions').set({ ended_at: now }).where('ended_at', 'is', null).where('expires_at', '>', now);
        if ('idHash' in which) query = query.where('id', '=', which.idHash);
        else {
          const userId = which.userId;
          query = query.where('user_id', '=', userId);
          const passkeys = (active: boolean) =>
            tx
              .selectFrom('passkeys')
              .select('id')
              .where('user_id', '=', userId)
              .$if(active, (q) => q.where('removed_at', 'is', null));
          if (which.which === 'passkeys') query = query.where('device_id', 'in', passkeys(false));
          if (which.which === 'unbound')
            query = query
              .where(
                'device_id',
                'not in',
                tx.selectFrom('devices').select('id').where('user_id', '=', userId).where('removed_at', 'is', null),
              )
              .where('device_id', 'not in', passkeys(true));
        }
        const rows = await query.returning(['sid', 'user_id']).execute();
        const sids = [...new Set(rows.flatMap((row) => (row.sid ? [row.sid] : [])))];
        if (sids.length === 0) return rows;
        const targets = await tx
          .selectFrom('session_clients as s')
          .innerJoin('clients as c', 'c.id', 's.client_id')
          .select(['s.sid', 's.client_id', 's.user_id'])
          .where('s.sid', 'in', sids)
          .where('c.backchannel_logout_uri', 'is not', null)
          .execute();
        if (targets.length > 0)
          await tx
            .insertInto('webhook_deliveries')
            .values(
              targets.map((t) =>
                logoutDeliveryRow(t.client_id, JSON.stringify({ sub: t.user_id, sid: t.sid } satisfies LogoutSubject), now),
              ),
            )
            .execute();
        return rows;
      });
      if (ended.some((row) => row.sid)) options.logoutEnqueued?.();
      return ended.map((row) => ({ sid: row.sid, userId: row.user_id }));
    },

    /** The clients of the session `sid` that registered a front-channel logout URI (the signed-out page frames them). */
    async frontChannelTargets(sid: string): Promise<FrontChannelTarget[]> {
      const rows = await db
        .selectFrom('session_clients as s')
        .innerJoin('clients as c', 'c.id', 's.client_id')
        .select(['c.id', 'c.frontchannel_logout_uri', 'c.frontchannel_logout_session_required'])
        .where('s.sid', '=', sid)
        .where('c.frontchannel_logout_uri', 'is not', null)
        .orderBy('s.created_at')
        .execute();
      return rows.flatMap((row) =>
        row.frontchannel_logout_uri
          ? [
              {
                clientId: row.id,
                uri: row.frontchannel_logout_uri,
                sessionRequired: Number(row.frontchannel_logout_session_required) !== 0,
              },
            ]
          : [],
      );
    },

    async deleteExpired(now: number): Promise<void> {
      await db.deleteFrom('authorization_requests').where('expires_at', '<', now).execute();
      await db.deleteFrom('sign_in_sessions').where('expires_at', '<', now).execute();
      // A session's clients go with the last row of its sid.
      await db
        .deleteFrom('session_clients')
        .where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom('sign_in_sessions as l').select('l.id').whereRef('l.sid', '=', 'session_clients.sid'))),
        )
        .execute();
    },
  };
}

export type OidcStore = ReturnType<typeof createOidcStore>;

/** A pending request that is live (not consumed, not expired) and bound to the browser presenting it. */
/**
 * A live request bound to this browser. `waiting`: one held for that page (only its answer reads
 * or finishes it); otherwise one of the sign-in's (never one held for a page, so no other step
 * can finish it without the user's answer).
 */
function liveAndBound(idHash: string, bindingHash: string, now: number, waiting?: WaitingPage) {
  return (eb: ExpressionBuilder<Database, 'authorization_requests'>) =>
    eb.and([
      eb('id', '=', idHash),
      eb('browser_binding_hash', '=', bindingHash),
      eb('consumed_at', 'is', null),
      eb('expires_at', '>', now),
      waiting ? eb('consent_pending', '=', WAITING[waiting]) : eb('consent_pending', 'is', null),
    ]);
}
