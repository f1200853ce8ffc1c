import { resourcesColumn, resourcesOf } from '../authorization-codes/store.js';
import type { Db } from '../storage/schema.js';
import { deleteBefore } from '../storage/sweeper.js';

/** One sign-in's grant of offline access: what every token of the family stands for. */
export interface RefreshFamily {
  /** The access token jti of the code exchange that started the family. */
  id: string;
  clientId: string;
  userId: string;
  deviceId: string;
  scope: string;
  amr: string[];
  authTime: number;
  /** A public client's family bound to a DPoP key (RFC 9449 5): its JWK thumbprint; absent when unbound. */
  dpopJkt?: string | null;
  /** The SSO session of the code exchange (its ID tokens keep the `sid`); absent outside one. */
  sid?: string | null;
  /** RFC 8707: the APIs the sign-in named; each refresh may ask an access token for one of them, never another. */
  resources?: readonly string[];
  /** The organization the sign-in asked for (organizations/): each refresh checks the user still belongs to it. */
  organizationId?: string | null;
}

/** A refresh token about to be written: the keyed hash of its value and the access token issued with it. */
export interface NewRefreshToken {
  idHash: string;
  accessTokenJti: string;
  /** Its idle end; the store caps it at the family's end. */
  expiresAt: number;
}

/** Who presents a refresh token: the client's id and the keyed hash of its secret (null: a public client, none sent). */
export interface PresentingClient {
  id: string;
  secretKeyHash: string | null;
  /** The JWK thumbprint of the request's valid DPoP proof, null without one. */
  dpopJkt: string | null;
}

/** A refresh token found by its hash, whatever its state (reuse detection and revocation read it). */
export interface StoredRefreshToken {
  familyId: string;
  clientId: string;
  usedAt: number | null;
  familyRevokedAt: number | null;
  /** The DPoP key the family is bound to, if any. */
  dpopJkt: string | null;
}

/**
 * Refresh token families and their tokens, stored by the keyed hash of the value the client
 * holds. A token is spent by stamping `used_at` in one conditional UPDATE, so of concurrent
 * presentations exactly one gets a successor; a family is revoked by stamping the family row,
 * so a successor written after the revocation is dead too.
 */
export function createRefreshTokenStore(db: Db) {
  return {
    async insertFamily(family: RefreshFamily, first: NewRefreshToken, now: number, familyExpiresAt: number): Promise<void> {
      await db.transaction().execute(async (tx) => {
        await tx
          .insertInto('refresh_token_families')
          .values({
            id: family.id,
            client_id: family.clientId,
            user_id: family.userId,
            device_id: family.deviceId,
            scope: family.scope,
            amr: JSON.stringify(family.amr),
            auth_time: family.authTime,
            created_at: now,
            expires_at: familyExpiresAt,
            revoked_at: null,
            revoked_reason: null,
            dpop_jkt: family.dpopJkt ?? null,
            sid: family.sid ?? null,
            resources: resourcesColumn(family.resources),
            organization_id: family.organizationId ?? null,
          })
          .execute();
        await tx
          .insertInto('refresh_tokens')
          .values({
            id: first.idHash,
            family_id: family.id,
            access_token_jti: first.accessTokenJti,
            created_at: now,
            expires_at: Math.min(first.expiresAt, familyExpiresAt),
            family_expires_at: familyExpiresAt,
            used_at: null,
          })
          .execute();
      });
    },

    /**
     * Spends a live refresh token and writes its successor, in one transaction. The spending
     * UPDATE holds every condition at once: the token unused and unexpired; its family not
     * revoked, not past its end, issued to this client, which authenticates (a confidential
     * client by its secret hash, a public one by its id alone, RFC 6749 2.3); its user enabled;
     * its device trusted (not revoked, used since `deviceUsedSince`); a family bound to a DPoP
     * key presented with a proof of that key, and a client that requires DPoP with a proof
     * (RFC 9449 5, 5.2). Undefined otherwise.
     */
    async rotate(
      idHash: string,
      now: number,
      client: PresentingClient,
      deviceUsedSince: number,
      next: NewRefreshToken,
      /** Checks the family before the successor is written: a throw rolls the spend back (the token stays live). */
      accept: (family: RefreshFamily) => void = () => {},
    ): Promise<{ family: RefreshFamily; email: string; idTokenAlg: string } | undefined> {
      return db.transaction().execute(async (tx) => {
        const spent = await tx
          .updateTable('refresh_tokens')
          .set({ used_at: now })
          .where('refresh_tokens.id', '=', idHash)
          .where('refresh_tokens.used_at', 'is', null)
          .where('refresh_tokens.expires_at', '>', now)
          .where(({ exists, selectFrom }) => {
            const family = selectFrom('refresh_token_families')
              .innerJoin('clients', 'clients.id', 'refresh_token_families.client_id')
              .innerJoin('users', 'users.id', 'refresh_token_families.user_id')
              .innerJoin('devices', 'devices.id', 'refresh_token_families.device_id')
              .select('refresh_token_families.id')
              .whereRef('refresh_token_families.id', '=', 'refresh_tokens.family_id')
              .where('refresh_token_families.revoked_at', 'is', null)
              .where('refresh_token_families.expires_at', '>', now)
              .where('refresh_token_families.client_id', '=', client.id)
              .where('users.disabled_at', 'is', null)
              .where('devices.removed_at', 'is', null)
              .where((eb) => eb(eb.fn.coalesce('devices.last_used_at', 'devices.created_at'), '>', deviceUsedSince))
              .where((eb) =>
                client.dpopJkt === null
                  ? eb.and([eb('refresh_token_families.dpop_jkt', 'is', null), eb('clients.dpop_bound_access_tokens', '=', 0)])
                  : eb.or([eb('refresh_token_families.dpop_jkt', 'is', null), eb('refresh_token_families.dpop_jkt', '=', client.dpopJkt)]),
              );
            return exists(
              client.secretKeyHash === null
                ? family.where('clients.client_type', '=', 'public')
                : family.where('clients.client_type', '=', 'confidential').where('clients.secret_key_hash', '=', client.secretKeyHash),
            );
          })
          .returning(['refresh_tokens.family_id', 'refresh_tokens.family_expires_at'])
          .executeTakeFirst();
        if (!spent) return undefined;
        const row = await tx
          .selectFrom('refresh_token_families')
          .innerJoin('users', 'users.id', 'refresh_token_families.user_id')
          .innerJoin('clients', 'clients.id', 'refresh_token_families.client_id')
          .select([
            'refresh_token_families.id',
            'refresh_token_families.client_id',
            'refresh_token_families.user_id',
            'refresh_token_families.device_id',
            'refresh_token_families.scope',
            'refresh_token_families.amr',
            'refresh_token_families.auth_time',
            'refresh_token_families.sid',
            'refresh_token_families.resources',
            'refresh_token_families.organization_id',
            'users.email',
            'clients.id_token_signed_response_alg',
          ])
          .where('refresh_token_families.id', '=', spent.family_id)
          .executeTakeFirstOrThrow();
        const family: RefreshFamily = {
          id: row.id,
          clientId: row.client_id,
          userId: row.user_id,
          deviceId: row.device_id,
          scope: row.scope,
          amr: JSON.parse(row.amr) as string[],
          authTime: Number(row.auth_time),
          sid: row.sid,
          resources: resourcesOf(row.resources),
          organizationId: row.organization_id,
        };
        accept(family);
        const familyExpiresAt = Number(spent.family_expires_at);
        await tx
          .insertInto('refresh_tokens')
          .values({
            id: next.idHash,
            family_id: spent.family_id,
            access_token_jti: next.accessTokenJti,
            created_at: now,
            expires_at: Math.min(next.expiresAt, familyExpiresAt),
            family_expires_at: familyExpiresAt,
            used_at: null,
          })
          .execute();
        return {
          family,
          email: row.email,
          idTokenAlg: row.id_token_signed_response_alg,
        };
      });
    },

    /**
     * A live token by its hash, for introspection (RFC 7662): unused, unexpired, its family not
     * revoked nor past its end, its user enabled and its device trusted (as rotate). Undefined otherwise.
     */
    async findLive(idHash: string, now: number, deviceUsedSince: number) {
      const row = await db
        .selectFrom('refresh_tokens')
        .innerJoin('refresh_token_families', 'refresh_token_families.id', 'refresh_tokens.family_id')
        .innerJoin('users', 'users.id', 'refresh_token_families.user_id')
        .innerJoin('devices', 'devices.id', 'refresh_token_families.device_id')
        .select([
          'refresh_token_families.client_id',
          'refresh_token_families.user_id',
          'refresh_token_families.scope',
          'refresh_tokens.created_at',
          'refresh_tokens.expires_at',
        ])
        .where('refresh_tokens.id', '=', idHash)
        .where('refresh_tokens.used_at', 'is', null)
        .where('refresh_tokens.expires_at', '>', now)
        .where('refresh_token_families.revoked_at', 'is', null)
        .where('refresh_token_families.expires_at', '>', now)
        .where('users.disabled_at', 'is', null)
        .where('devices.removed_at', 'is', null)
        .where((eb) => eb(eb.fn.coalesce('devices.last_used_at', 'devices.created_at'), '>', deviceUsedSince))
        .executeTakeFirst();
      return (
        row && {
          clientId: row.client_id,
          userId: row.user_id,
          scope: row.scope,
          issuedAt: Number(row.created_at),
          expiresAt: Number(row.expires_at),
        }
      );
    },

    /** Any token by its hash (used, expired or of a revoked family alike), until its family's end is swept. */
    async find(idHash: string): Promise<StoredRefreshToken | undefined> {
      const row = await db
        .selectFrom('refresh_tokens')
        .innerJoin('refresh_token_families', 'refresh_token_families.id', 'refresh_tokens.family_id')
        .select([
          'refresh_tokens.family_id',
          'refresh_token_families.client_id',
          'refresh_tokens.used_at',
          'refresh_token_families.revoked_at',
          'refresh_token_families.dpop_jkt',
        ])
        .where('refresh_tokens.id', '=', idHash)
        .executeTakeFirst();
      return (
        row && {
          familyId: row.family_id,
          clientId: row.client_id,
          usedAt: row.used_at === null ? null : Number(row.used_at),
          familyRevokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
          dpopJkt: row.dpop_jkt,
        }
      );
    },

    /**
     * Revokes a family (once: true only for the call that did it) and returns the access tokens
     * issued with its tokens since `accessTokensSince`, which may still be alive.
     */
    async revokeFamily(
      familyId: string,
      now: number,
      reason: string,
      accessTokensSince: number,
    ): Promise<{
      revoked: boolean;
      userId?: string;
      clientId?: string;
      deviceId?: string;
      accessTokens: { jti: string; createdAt: number }[];
    }> {
      const row = await db
        .updateTable('refresh_token_families')
        .set({ revoked_at: now, revoked_reason: reason })
        .where('id', '=', familyId)
        .where('revoked_at', 'is', null)
        .returning(['user_id', 'client_id', 'device_id'])
        .executeTakeFirst();
      if (!row) return { revoked: false, accessTokens: [] };
      const tokens = await db
        .selectFrom('refresh_tokens')
        .select(['access_token_jti', 'created_at'])
        .where('family_id', '=', familyId)
        .where('created_at', '>', accessTokensSince)
        .execute();
      return {
        revoked: true,
        userId: row.user_id,
        clientId: row.client_id,
        deviceId: row.device_id,
        accessTokens: tokens.map((t) => ({ jti: t.access_token_jti, createdAt: Number(t.created_at) })),
      };
    },

    /** Revokes every live family of a user (an operator disabled them); returns how many. */
    /** Revokes the user's live families (of one client, when `clientId` is given); returns how many. */
    async revokeFamiliesOfUser(userId: string, now: number, reason: string, clientId?: string): Promise<number> {
      const result = await db
        .updateTable('refresh_token_families')
        .set({ revoked_at: now, revoked_reason: reason })
        .where('user_id', '=', userId)
        .$if(clientId !== undefined, (query) => query.where('client_id', '=', clientId as string))
        .where('revoked_at', 'is', null)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return Number(result.numUpdatedRows);
    },

    async deleteExpired(now: number): Promise<void> {
      await deleteBefore(db, 'refresh_tokens', 'family_expires_at', now);
      await deleteBefore(db, 'refresh_token_families', 'expires_at', now);
    },
  };
}

export type RefreshTokenStore = ReturnType<typeof createRefreshTokenStore>;
