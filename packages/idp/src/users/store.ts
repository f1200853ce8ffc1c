import { sql } from 'kysely';
import type { AdminDevice } from 'service-protocol';
import type { EventStore, NewEvent } from '../events/store.js';
import { isUniqueViolation } from '../storage/database.js';
import type { Database, Db } from '../storage/schema.js';

/** A user as an operator sees it. */
export interface UserRecord {
  id: string;
  email: string;
  createdAt: number;
  /** Set while the user is disabled: no sign-in path sees the account. */
  disabledAt: number | null;
  /** The id a provisioning system (SCIM) knows the user by; null: none. */
  externalId: string | null;
}

export interface UserFilter {
  /** This external id exactly. */
  externalId?: string;
  /** Part of the address, any case. */
  email?: string;
  /** Created at or after this time (epoch ms). */
  createdSince?: number;
  /** Created before this time (epoch ms). */
  createdBefore?: number;
  /** Oldest first; continue after this user (a cursor from the previous page). */
  after?: { at: number; id: string };
  limit: number;
}

/**
 * A device as operators see it: a remembered browser (`kind: 'browser'`, `synced` null) or a
 * passkey (`kind: 'passkey'`, no browser or OS; `synced` is the WebAuthn BS flag at its last use).
 */
export type OperatorDevice = AdminDevice;

/** Everything the service holds about one person but the events (users/service.ts adds them). */
export interface UserHoldings {
  /** Every device of the user (remembered browsers and passkeys), for every client, revoked and expired ones included; oldest first. */
  devices: OperatorDevice[];
  /** The confirmed MFA method, without its secret. */
  mfa: { method: string; phone: string | null; confirmedAt: number } | null;
  /** The current set of recovery codes: when it was made and when each used code was used; never a code or a hash. */
  recoveryCodes: { total: number; remaining: number; createdAt: number; usedAt: number[] } | null;
  clientSignIns: Array<{ clientId: string; clientName: string | null; firstSignedInAt: number }>;
}

const RECORD_COLUMNS = ['id', 'email', 'created_at', 'disabled_at', 'external_id'] as const;

const toRecord = (row: Pick<Database['users'], (typeof RECORD_COLUMNS)[number]>): UserRecord => ({
  id: row.id,
  email: row.email,
  createdAt: Number(row.created_at),
  disabledAt: row.disabled_at === null ? null : Number(row.disabled_at),
  externalId: row.external_id,
});

/** What a remembered browser's row and a passkey's row have in common. */
type OperatorDeviceRow = Pick<Database['devices'], 'id' | 'client_id' | 'name' | 'created_at' | 'last_used_at' | 'removed_at'>;

/** Either kind of device as operators see it; `seen` holds what only one kind records. */
const operatorDevice = (
  row: OperatorDeviceRow,
  kind: OperatorDevice['kind'],
  seen: Pick<OperatorDevice, 'browser' | 'os' | 'synced'>,
): OperatorDevice => ({
  id: row.id,
  clientId: row.client_id,
  kind,
  name: row.name,
  browser: seen.browser,
  os: seen.os,
  createdAt: Number(row.created_at),
  lastUsedAt: row.last_used_at == null ? null : Number(row.last_used_at),
  removedAt: row.removed_at == null ? null : Number(row.removed_at),
  synced: seen.synced,
});

/** `%` and `_` in an operator's filter are letters, not wildcards. */
const likeLiteral = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * The users table as operators manage it, and the one place that knows every row kept about
 * a person: the export reads them and the deletion removes them, in one transaction.
 */
/** A table of a factor's with a user's rows (factors/module.ts FactorTable), by the column naming the user. */
export interface UserRowsTable {
  readonly name: string;
  readonly userColumn: 'user_id' | 'email';
}

/** `factorTables`: the factors' tables (factors/index.ts), whose rows of a user go with the user. */
export function createUserStore(db: Db, events: EventStore, factorTables: readonly UserRowsTable[] = []) {
  return {
    async list(filter: UserFilter): Promise<UserRecord[]> {
      let query = db.selectFrom('users').select(RECORD_COLUMNS).orderBy('created_at').orderBy('id').limit(filter.limit);
      // Addresses are stored lower-case (normalizeEmail), so a lower-cased filter matches any case.
      // SQLite's LIKE has no escape character unless told; PostgreSQL's is the backslash already.
      if (filter.email) query = query.where(sql<boolean>`email like ${`%${likeLiteral(filter.email.toLowerCase())}%`} escape '\\'`);
      if (filter.externalId !== undefined) query = query.where('external_id', '=', filter.externalId);
      if (filter.createdSince !== undefined) query = query.where('created_at', '>=', filter.createdSince);
      if (filter.createdBefore !== undefined) query = query.where('created_at', '<', filter.createdBefore);
      const after = filter.after;
      if (after)
        query = query.where((eb) =>
          eb.or([eb('created_at', '>', after.at), eb.and([eb('created_at', '=', after.at), eb('id', '>', after.id)])]),
        );
      return (await query.execute()).map(toRecord);
    },

    async findById(id: string): Promise<UserRecord | undefined> {
      const row = await db.selectFrom('users').select(RECORD_COLUMNS).where('id', '=', id).executeTakeFirst();
      return row && toRecord(row);
    },

    async findByEmail(email: string): Promise<UserRecord | undefined> {
      const row = await db.selectFrom('users').select(RECORD_COLUMNS).where('email', '=', email).executeTakeFirst();
      return row && toRecord(row);
    },

    /** Disables (`at`) or enables (null) the user; the event is written in the same transaction. */
    async setDisabled(id: string, at: number | null, event: NewEvent, now: number): Promise<boolean> {
      return db.transaction().execute(async (tx) => {
        const result = await tx.updateTable('users').set({ disabled_at: at }).where('id', '=', id).executeTakeFirst();
        if (Number(result.numUpdatedRows) !== 1) return false;
        await events.append(event, now, tx);
        return true;
      });
    },

    /** Sets (or with null clears) the user's external id, the event in the same transaction: 'taken' when another user has it. */
    async setExternalId(id: string, externalId: string | null, event: NewEvent, now: number): Promise<'set' | 'gone' | 'taken'> {
      try {
        return await db.transaction().execute(async (tx) => {
          const result = await tx.updateTable('users').set({ external_id: externalId }).where('id', '=', id).executeTakeFirst();
          if (Number(result.numUpdatedRows) !== 1) return 'gone';
          await events.append(event, now, tx);
          return 'set';
        });
      } catch (error) {
        if (isUniqueViolation(error)) return 'taken';
        throw error;
      }
    },

    async holdings(userId: string): Promise<UserHoldings> {
      const [devices, passkeys, mfa, signIns, codes] = await Promise.all([
        db.selectFrom('devices').selectAll().where('user_id', '=', userId).orderBy('created_at').orderBy('id').execute(),
        db
          .selectFrom('passkeys')
          .select(['id', 'client_id', 'name', 'created_at', 'last_used_at', 'removed_at', 'backed_up'])
          .where('user_id', '=', userId)
          .execute(),
        db.selectFrom('mfa_methods').select(['method', 'phone', 'confirmed_at']).where('user_id', '=', userId).executeTakeFirst(),
        db
          .selectFrom('client_users')
          .leftJoin('clients', 'clients.id', 'client_users.client_id')
          .select(['client_users.client_id', 'clients.name', 'client_users.first_signed_in_at'])
          .where('client_users.user_id', '=', userId)
          .orderBy('client_users.first_signed_in_at')
          .execute(),
        db.selectFrom('recovery_codes').select(['created_at', 'used_at']).where('user_id', '=', userId).orderBy('used_at').execute(),
      ]);
      const usedAt = codes.flatMap((c) => (c.used_at === null ? [] : [Number(c.used_at)]));
      const browsers = devices.map((d) => operatorDevice(d, 'browser', { browser: d.browser, os: d.os, synced: null }));
      const keys = passkeys.map((p) => operatorDevice(p, 'passkey', { browser: null, os: null, synced: Number(p.backed_up) === 1 }));
      return {
        devices: [...browsers, ...keys].sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
        mfa: mfa ? { method: mfa.method, phone: mfa.phone, confirmedAt: Number(mfa.confirmed_at) } : null,
        recoveryCodes:
          codes.length === 0
            ? null
            : { total: codes.length, remaining: codes.length - usedAt.length, createdAt: Number(codes[0]?.created_at), usedAt },
        clientSignIns: signIns.map((s) => ({
          clientId: s.client_id,
          clientName: s.name,
          firstSignedInAt: Number(s.first_signed_in_at),
        })),
      };
    },

    /**
     * Deletes every row kept about the user, in one transaction: devices and what hangs on them,
     * the MFA method, steps and recovery codes, pending registrations, unspent codes, client sign-ins,
     * service sessions and hosted sign-ins held for their recovery codes, the failure
     * counter (keyed by `accountKey`, the keyed hash of the address), mail and SMS in the
     * development outboxes, the roles they hold, and the user's events. Only `event` (which must name no one)
     * remains. The send throttles stay: keyed hashes that expire within the hour, and deleting
     * them would reset a mail-bombing budget. False when the user is unknown.
     */
    async delete(user: UserRecord, accountKey: string, event: NewEvent, now: number): Promise<boolean> {
      return db.transaction().execute(async (tx) => {
        const phone = await tx.selectFrom('mfa_methods').select('phone').where('user_id', '=', user.id).executeTakeFirst();
        await tx.deleteFrom('mfa_remembered').where('user_id', '=', user.id).execute();
        await tx.deleteFrom('mfa_sessions').where('user_id', '=', user.id).execute();
        await tx.deleteFrom('mfa_methods').where('user_id', '=', user.id).execute();
        await tx.deleteFrom('devices').where('user_id', '=', user.id).execute();
        for (const { name, userColumn } of factorTables)
          await sql`delete from ${sql.table(name)} where ${sql.ref(userColumn)} = ${userColumn === 'email' ? user.email : user.id}`.execute(
            tx,
          );
        await tx.deleteFrom('auth_codes').where('user_id', '=', user.id).execute();
        const families = tx.selectFrom('refresh_token_families').select('id').where('user_id', '=', user.id);
        await tx.deleteFrom('refresh_tokens').where('family_id', 'in', families).execute();
        await tx.deleteFrom('refresh_token_families').where('user_id', '=', user.id).execute();
        await tx.deleteFrom('client_users').where('user_id', '=', user.id).execute();
        await tx.deleteFrom('sign_in_sessions').where('user_id', '=', user.id).execute();
        await tx.deleteFrom('session_clients').where('user_id', '=', user.id).execute();
        await tx.deleteFrom('authorization_requests').where('held_user_id', '=', user.id).execute();
        await tx.deleteFrom('account_failures').where('user_key', '=', accountKey).execute();
        await tx.deleteFrom('mailbox').where('recipient', '=', user.email).execute();
        if (phone?.phone) await tx.deleteFrom('sms_outbox').where('recipient', '=', phone.phone).execute();
        await events.deleteForUser(user.id, tx);
        const row = await tx.deleteFrom('users').where('id', '=', user.id).returning('id').executeTakeFirst();
        if (!row) return false;
        // After the user's row: an assignment made meanwhile read that row FOR SHARE (apis/store.ts), so it is seen here.
        await tx.deleteFrom('user_roles').where('user_id', '=', user.id).execute();
        await tx.deleteFrom('consents').where('user_id', '=', user.id).execute();
        await events.append(event, now, tx);
        return true;
      });
    },
  };
}

export type UserStore = ReturnType<typeof createUserStore>;
