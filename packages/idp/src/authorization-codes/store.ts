import { sql } from 'kysely';
import { compiledQuery } from '../storage/compiled.js';
import { isPostgres } from '../storage/database.js';
import type { Database, Db } from '../storage/schema.js';
import { deleteBefore } from '../storage/sweeper.js';
import type { User } from '../users/enabled-store.js';

export interface AuthCode {
  clientId: string;
  userId: string;
  codeChallenge: string | null;
  amr: string[];
  authTime: number;
  /** The remembered device that signed in or was registered, if any (ID token claim device_id). */
  deviceId: string | null;
  /** Set by the authorization endpoint (oidc/): the token request must present the same value. */
  redirectUri?: string | null;
  /** OIDC Core 3.1.2.1 nonce, echoed in the ID token. */
  nonce?: string | null;
  /** The granted scope of a code from /authorize; absent (null) means `openid email`, no offline access. */
  scope?: string | null;
  /** The SSO session the code was issued in (oidc/), the ID token's `sid`; absent outside one. */
  sid?: string | null;
  /** RFC 8707: the APIs the code's access tokens may be for (oidc/ authorization request's `resource`); absent: none. */
  resources?: readonly string[];
  /** The organization the app asked for (oidc/ authorization request's `organization`); absent: none. */
  organizationId?: string | null;
}

/** The `resources` column (space-separated identifiers, null for none) as a list, and back. */
export const resourcesOf = (column: string | null): string[] => (column ? column.split(' ') : []);
export const resourcesColumn = (resources: readonly string[] | undefined): string | null =>
  resources?.length ? resources.join(' ') : null;

/** Who redeems a code: the client's id, the keyed hash of the secret it presented, and what binds the code. */
export interface RedeemingClient {
  id: string;
  /** Null when no secret was presented: then only a public client (RFC 6749 2.3, auth method none) redeems. */
  secretKeyHash: string | null;
  /** S256 of the presented code_verifier, null when none was sent (a malformed one: a value no code holds). */
  pkceChallenge: string | null;
  /** The token request's redirect_uri (RFC 6749 4.1.3), null when absent. */
  redirectUri: string | null;
  /** The token request carried a valid DPoP proof: a client that requires one (RFC 9449 5.2) redeems only then. Default false. */
  dpopProof?: boolean;
}

/** A consumed code, the user it names (undefined when disabled or deleted) and the client's ID token algorithm. */
export interface Redeemed {
  code: RedeemedCode;
  user: User | undefined;
  idTokenAlg: string;
}

/** A code drawn but not yet written: its value goes to the browser, the rest to auth_codes. */
export interface DrawnCode {
  value: string;
  idHash: string;
  code: AuthCode;
  expiresAt: number;
}

/** The auth_codes row of a new code (also written by the login's folded statement, factors/device-key/sign-in-store.ts). */
export function codeRow(drawn: Omit<DrawnCode, 'value'>): Database['auth_codes'] {
  return {
    id: drawn.idHash,
    client_id: drawn.code.clientId,
    user_id: drawn.code.userId,
    code_challenge: drawn.code.codeChallenge,
    amr: JSON.stringify(drawn.code.amr),
    auth_time: drawn.code.authTime,
    device_id: drawn.code.deviceId,
    redirect_uri: drawn.code.redirectUri ?? null,
    nonce: drawn.code.nonce ?? null,
    scope: drawn.code.scope ?? null,
    sid: drawn.code.sid ?? null,
    resources: resourcesColumn(drawn.code.resources),
    organization_id: drawn.code.organizationId ?? null,
    expires_at: drawn.expiresAt,
    consumed_at: null,
    access_token_jti: null,
  };
}

/** A consumed code: the optional fields read back as null when the code had none. */
export type RedeemedCode = AuthCode & {
  redirectUri: string | null;
  nonce: string | null;
  scope: string | null;
  sid: string | null;
  resources: string[];
  organizationId: string | null;
};

/** Authorization codes, stored by keyed hash; consumption stamps a time instead of deleting. */
export function createCodeStore(db: Db) {
  return {
    async insert(idHash: string, code: AuthCode, expiresAt: number): Promise<void> {
      await db.insertInto('auth_codes').values(codeRow({ idHash, code, expiresAt })).execute();
    },

    async deleteExpired(now: number): Promise<void> {
      await deleteBefore(db, 'auth_codes', 'expires_at', now);
      await deleteBefore(db, 'revoked_access_tokens', 'expires_at', now);
    },

    /**
     * A consumed code presented again: revokes the access token its redemption issued (until
     * that token would have expired anyway). Returns its jti when there was one to revoke.
     */
    async revokeAccessTokenOf(idHash: string): Promise<string | undefined> {
      const row = await db
        .selectFrom('auth_codes')
        .select(['access_token_jti', 'expires_at'])
        .where('id', '=', idHash)
        .where('consumed_at', 'is not', null)
        .executeTakeFirst();
      if (!row?.access_token_jti) return undefined;
      await db
        .insertInto('revoked_access_tokens')
        .values({ jti: row.access_token_jti, expires_at: Number(row.expires_at) })
        .onConflict((oc) => oc.column('jti').doNothing())
        .execute();
      return row.access_token_jti;
    },

    /** Revokes access tokens by jti, each until it would have expired anyway (a refresh family's, oidc/). */
    async revokeAccessTokens(tokens: { jti: string; expiresAt: number }[]): Promise<void> {
      if (tokens.length === 0) return;
      await db
        .insertInto('revoked_access_tokens')
        .values(tokens.map((t) => ({ jti: t.jti, expires_at: t.expiresAt })))
        .onConflict((oc) => oc.column('jti').doNothing())
        .execute();
    },

    async isAccessTokenRevoked(jti: string): Promise<boolean> {
      const row = await db.selectFrom('revoked_access_tokens').select('jti').where('jti', '=', jti).executeTakeFirst();
      return row !== undefined;
    },

    /**
     * Consumes a live code in one statement, so of any number of concurrent callers exactly
     * one gets the row, recording the access token that redemption issues in the same write
     * (no window where a replay finds nothing to revoke). The client authenticates in the same
     * statement (its id and secret hash must match a client row), and the row comes back with
     * what the ID token needs: the user (if still enabled) and the client's signing algorithm.
     * A replayed, expired or unknown code, or a client that does not authenticate, yields
     * undefined. The secret hashes are compared by the database: they are HMAC outputs, which
     * a caller cannot steer byte by byte, so the comparison's timing reveals nothing usable.
     *
     * On PostgreSQL the statement also records the client/user pair (client_users, which
     * delegation requires) when the code is the client's and its PKCE binding matches, as a
     * data-modifying CTE: the whole token request is one round trip (docs/performance.md).
     * SQLite has no data-modifying CTE; there the pair is a second, in-process statement.
     */
    async consume(
      idHash: string,
      now: number,
      redemption: { accessTokenJti: string; keepUntil: number },
      client: RedeemingClient,
    ): Promise<Redeemed | undefined> {
      const args: ConsumeArgs = {
        idHash,
        now,
        accessTokenJti: redemption.accessTokenJti,
        keepUntil: redemption.keepUntil,
        clientId: client.id,
        secretKeyHash: client.secretKeyHash,
        pkceChallenge: client.pkceChallenge,
        redirectUri: client.redirectUri,
        dpopProof: client.dpopProof ? 1 : 0,
      };
      const shape = client.secretKeyHash === null ? 'public' : 'confidential';
      let row: ConsumedRow | undefined;
      if (isPostgres(db)) {
        [row] = await consumeAndRecordPair(db, args, shape);
      } else {
        [row] = await consumeCode(db, args, shape);
        // The token request succeeds only if these hold too (token/service.ts); the pair is recorded only then.
        if (
          row &&
          row.email !== null &&
          row.client_id === client.id &&
          row.code_challenge === client.pkceChallenge &&
          (client.secretKeyHash !== null || row.code_challenge !== null) &&
          (row.redirect_uri === null || row.redirect_uri === client.redirectUri)
        ) {
          await recordPair(db, { clientId: row.client_id, userId: row.user_id, now });
        }
      }
      return (
        row && {
          code: {
            clientId: row.client_id,
            userId: row.user_id,
            codeChallenge: row.code_challenge,
            amr: JSON.parse(row.amr) as string[],
            authTime: Number(row.auth_time),
            deviceId: row.device_id,
            redirectUri: row.redirect_uri,
            nonce: row.nonce,
            scope: row.scope,
            sid: row.sid,
            resources: resourcesOf(row.resources),
            organizationId: row.organization_id,
          },
          user: row.email === null ? undefined : { id: row.user_id, email: row.email },
          idTokenAlg: row.id_token_alg ?? 'RS256',
        }
      );
    },
  };
}

export type CodeStore = ReturnType<typeof createCodeStore>;

interface ConsumeArgs extends Record<string, unknown> {
  idHash: string;
  now: number;
  accessTokenJti: string;
  keepUntil: number;
  clientId: string;
  secretKeyHash: string | null;
  pkceChallenge: string | null;
  redirectUri: string | null;
  /** 1 when the request carried a valid DPoP proof, else 0: compared with the client's dpop_bound_access_tokens. */
  dpopProof: number;
}
type ClientShape = 'public' | 'confidential';

/** The redeeming UPDATE (see consume): compiled once per dialect and client shape (storage/compiled.ts). */
function consumeQuery(db: Db, a: ConsumeArgs, shape: ClientShape) {
  return (
    db
      .updateTable('auth_codes')
      // The row outlives the code as long as the access token does, so a replay can revoke it.
      .set({ consumed_at: a.now, access_token_jti: a.accessTokenJti, expires_at: a.keepUntil })
      .where('id', '=', a.idHash)
      .where('consumed_at', 'is', null)
      .where('expires_at', '>', a.now)
      .where(({ exists, selectFrom }) => {
        // RFC 9449 5.2: a client that requires DPoP (1) redeems only with a proof (1).
        const row = selectFrom('clients')
          .select('clients.id')
          .where('clients.id', '=', a.clientId)
          .where('clients.dpop_bound_access_tokens', '<=', a.dpopProof);
        // RFC 6749 2.3: a confidential client by its secret; a public one (no secret to keep) by its id alone.
        return exists(
          shape === 'public'
            ? row.where('clients.client_type', '=', 'public')
            : row.where('clients.client_type', '=', 'confidential').where('clients.secret_key_hash', '=', a.secretKeyHash),
        );
      })
      .returning((eb) => [
        'auth_codes.client_id',
        'auth_codes.user_id',
        'auth_codes.code_challenge',
        'auth_codes.amr',
        'auth_codes.auth_time',
        'auth_codes.device_id',
        'auth_codes.redirect_uri',
        'auth_codes.nonce',
        'auth_codes.scope',
        'auth_codes.sid',
        'auth_codes.resources',
        'auth_codes.organization_id',
        eb
          .selectFrom('users')
          .select('users.email')
          .whereRef('users.id', '=', 'auth_codes.user_id')
          .where('users.disabled_at', 'is', null)
          .as('email'),
        eb.selectFrom('clients').select('clients.id_token_signed_response_alg').where('clients.id', '=', a.clientId).as('id_token_alg'),
      ])
  );
}
type ConsumedRow = Awaited<ReturnType<ReturnType<typeof consumeQuery>['executeTakeFirstOrThrow']>>;

const consumeCode = compiledQuery(consumeQuery);

/** PostgreSQL: the redeeming UPDATE and, when the token request will succeed, the client/user pair, in one statement. */
const consumeAndRecordPair = compiledQuery((db: Db, a: ConsumeArgs, shape: ClientShape) =>
  db
    .with('consumed', () => consumeQuery(db, a, shape))
    .with('signed_in', (qb) =>
      qb
        .insertInto('client_users')
        .columns(['client_id', 'user_id', 'first_signed_in_at'])
        .expression((eb) =>
          eb
            .selectFrom('consumed')
            .select(['consumed.client_id', 'consumed.user_id', sql<number>`${a.now}::bigint`.as('first_signed_in_at')])
            .where('consumed.email', 'is not', null)
            .where('consumed.client_id', '=', a.clientId)
            .where('consumed.code_challenge', 'is not distinct from', a.pkceChallenge)
            .$if(shape === 'public', (q) => q.where('consumed.code_challenge', 'is not', null))
            .where((w) => w.or([w('consumed.redirect_uri', 'is', null), w('consumed.redirect_uri', '=', a.redirectUri)])),
        )
        .onConflict((oc) => oc.doNothing()),
    )
    .selectFrom('consumed')
    .selectAll(),
);

/** SQLite: the pair, after the UPDATE (no data-modifying CTE there). */
const recordPair = compiledQuery((db: Db, a: { clientId: string; userId: string; now: number }) =>
  db
    .insertInto('client_users')
    .values({ client_id: a.clientId, user_id: a.userId, first_signed_in_at: a.now })
    .onConflict((oc) => oc.doNothing()),
);
