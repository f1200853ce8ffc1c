import { type SqlBool, sql } from 'kysely';
import { codeRow, type DrawnCode } from '../../authorization-codes/store.js';
import { type ClientRecord, toRecord } from '../../clients/store.js';
import { type Device, deviceOf } from '../../devices/store.js';
import type { PreparedEvent } from '../../events/store.js';
import { type MfaMethodRecord, methodRecordOf } from '../../sign-in/mfa-store.js';
import type { SpentToken, SpentTokenStore } from '../../spent-tokens/store.js';
import { compiledQuery } from '../../storage/compiled.js';
import { isPostgres, registerPreparedStatement } from '../../storage/database.js';
import { type GroupCommit, groupCommitOf } from '../../storage/group-commit.js';
import type { Db } from '../../storage/schema.js';
import type { User } from '../../users/enabled-store.js';

/** What a trusted-device sign-in needs to decide, read in one statement. */
export interface DeviceKeyRead {
  client: ClientRecord;
  /** The device the proof names, if it is this client's and trusted (not revoked, not idle-expired). */
  device: Device | undefined;
  /** Its user, if enabled. */
  user: User | undefined;
  /** The user's MFA method, and whether this device skips it (remembered for the method's version). */
  mfa: { method: MfaMethodRecord; remembered: boolean } | undefined;
}

/** A trusted sign-in's records, written only if its challenge is spent: the code, its event and the event's webhook outbox rows. */
export interface DeviceKeyIssue extends PreparedEvent {
  code: DrawnCode;
}

/**
 * The trusted-device sign-in's two statements (docs/performance.md, round trips): one read of
 * the client, the device, its user and their MFA state, and one write that spends the
 * challenge and, only if that insert won, stamps the device used and issues the code and its
 * event. Each security condition of the separate reads is kept in a join condition: the device
 * of this client, not revoked, used after the idle cut-off; the user not disabled; the MFA
 * remembrance bound to the method's version and not expired.
 */
export function createDeviceKeySignInStore(db: Db, spentTokens: SpentTokenStore) {
  return {
    async read(
      by: { publishableKeyHash: string } | { clientId: string },
      deviceId: string,
      usedSince: number,
      now: number,
    ): Promise<DeviceKeyRead | undefined> {
      const [row] =
        'publishableKeyHash' in by
          ? await readDeviceKeySignIn(db, { key: by.publishableKeyHash, deviceId, usedSince, now }, 'publishable_key_hash')
          : await readDeviceKeySignIn(db, { key: by.clientId, deviceId, usedSince, now }, 'id');
      if (!row) return undefined;
      const device =
        row.device_id !== null &&
        row.device_user_id !== null &&
        row.device_client_id !== null &&
        row.public_jwk !== null &&
        row.crypto_version !== null
          ? deviceOf({
              id: row.device_id,
              user_id: row.device_user_id,
              client_id: row.device_client_id,
              public_jwk: row.public_jwk,
              crypto_version: row.crypto_version,
              last_used_at: row.device_last_used_at,
            })
          : undefined;
      const user = device && row.user_email !== null ? { id: device.userId, email: row.user_email } : undefined;
      const method =
        user && row.mfa_method !== null && row.mfa_version !== null
          ? methodRecordOf({
              method: row.mfa_method,
              phone: row.mfa_phone,
              totp_secret_sealed: row.mfa_totp_secret_sealed,
              last_totp_step: row.mfa_last_totp_step,
              version: row.mfa_version,
            })
          : undefined;
      return { client: toRecord(row), device, user, mfa: method && { method, remembered: row.remembered !== null } };
    },

    /**
     * Spends the challenge; only if that insert won (the primary key decides between
     * concurrent proofs of one challenge), stamps the device used when `touch` and writes
     * `issue`. True when the challenge was spent here.
     *
     * PostgreSQL: one statement. The later CTEs select from `spent`, so they write nothing
     * when the challenge was spent before (data-modifying CTEs all run, whatever the outer
     * query reads; gating each on `spent` is what makes them conditional). SQLite has no
     * data-modifying CTE and runs in process: the same writes as statements in turn, in one
     * savepoint of a group commit (storage/group-commit.ts: the logins of one event-loop turn
     * share a COMMIT), so a failure midway (the code insert, the event) leaves the challenge
     * unspent and nothing written, as the single statement does; the caller hears after the COMMIT.
     */
    async spendAndIssue(challenge: SpentToken, deviceId: string, touch: boolean, now: number, issue?: DeviceKeyIssue): Promise<boolean> {
      if (!isPostgres(db)) {
        // Compiled here, run in the batch's transaction (storage/group-commit.ts), in this order.
        const spend = spentTokens.spendQuery(challenge, now).compile();
        const writes = [
          touch ? db.updateTable('devices').set({ last_used_at: now }).where('id', '=', deviceId).compile() : undefined,
          issue ? db.insertInto('auth_codes').values(codeRow(issue.code)).compile() : undefined,
          issue ? db.insertInto('events').values(issue.event).compile() : undefined,
          issue && issue.deliveries.length > 0 ? db.insertInto('webhook_deliveries').values(issue.deliveries).compile() : undefined,
        ];
        return sqliteGroup(db).run((run) => {
          if (run(spend).length === 0) return false;
          for (const write of writes) if (write) run(write);
          return true;
        });
      }
      const spent = db
        .with('spent', () => spentTokens.spendQuery(challenge, now))
        .with('touched', (qb) =>
          qb
            .updateTable('devices')
            .set({ last_used_at: now })
            .where('id', '=', deviceId)
            .where(sql<SqlBool>`${touch}::boolean`)
            .where(({ exists, selectFrom }) => exists(selectFrom('spent').select('spent.id'))),
        );
      if (!issue) return (await spent.selectFrom('spent').select('spent.id').executeTakeFirst()) !== undefined;
      let write = spent
        .with('code', (qb) => qb.insertInto('auth_codes').expression(fromSpent(codeRow(issue.code))))
        .with('event', (qb) => qb.insertInto('events').expression(fromSpent(issue.event)));
      // An event that webhook endpoints subscribe to brings its outbox rows into the same statement.
      for (const [i, delivery] of issue.deliveries.entries())
        write = write.with(`delivery_${i}`, (qb) => qb.insertInto('webhook_deliveries').expression(fromSpent(delivery))) as typeof write;
      // Its text varies only with the columns present and the number of webhook rows (a few
      // shapes), so it runs as a named prepared statement too (storage/database.ts).
      const statement = write.selectFrom('spent').select('spent.id').compile();
      registerPreparedStatement(statement.sql);
      return (await db.executeQuery(statement)).rows.length > 0;
    },
  };
}

function sqliteGroup(db: Db): GroupCommit {
  const group = groupCommitOf(db);
  if (!group) throw new Error('a SQLite database not opened by openSqlite (storage/database.ts)');
  return group;
}

/** The sign-in's one read (see read()), compiled once per dialect and client key (storage/compiled.ts). */
const readDeviceKeySignIn = compiledQuery(
  (db: Db, a: { key: string; deviceId: string; usedSince: number; now: number }, clientKey: 'publishable_key_hash' | 'id') =>
    db
      .selectFrom('clients')
      .leftJoin('devices', (join) =>
        join
          .on('devices.id', '=', a.deviceId)
          .onRef('devices.client_id', '=', 'clients.id')
          .on('devices.removed_at', 'is', null)
          .on(sql<SqlBool>`coalesce(devices.last_used_at, devices.created_at) > ${a.usedSince}`),
      )
      .leftJoin('users', (join) => join.onRef('users.id', '=', 'devices.user_id').on('users.disabled_at', 'is', null))
      .leftJoin('mfa_methods', 'mfa_methods.user_id', 'users.id')
      .leftJoin('mfa_remembered', (join) =>
        join
          .onRef('mfa_remembered.device_id', '=', 'devices.id')
          .onRef('mfa_remembered.user_id', '=', 'users.id')
          .onRef('mfa_remembered.method_version', '=', 'mfa_methods.version')
          .on('mfa_remembered.expires_at', '>', a.now),
      )
      .selectAll('clients')
      .select([
        'devices.id as device_id',
        'devices.user_id as device_user_id',
        'devices.client_id as device_client_id',
        'devices.public_jwk',
        'devices.crypto_version',
        'devices.last_used_at as device_last_used_at',
        'users.email as user_email',
        'mfa_methods.method as mfa_method',
        'mfa_methods.phone as mfa_phone',
        'mfa_methods.totp_secret_sealed as mfa_totp_secret_sealed',
        'mfa_methods.last_totp_step as mfa_last_totp_step',
        'mfa_methods.version as mfa_version',
        'mfa_remembered.device_id as remembered',
      ])
      .where(`clients.${clientKey}`, '=', a.key),
);

/** `select <row's values> from spent`: the row, once, only if the challenge was spent. Columns in the table's order. */
function fromSpent(row: Record<string, unknown>) {
  const columns = Object.keys(row);
  return sql`(${sql.join(columns.map((c) => sql.ref(c)))}) select ${sql.join(columns.map((c) => sql`${row[c]}`))} from spent`;
}

export type DeviceKeySignInStore = ReturnType<typeof createDeviceKeySignInStore>;
