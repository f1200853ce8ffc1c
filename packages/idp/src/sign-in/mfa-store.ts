import { sql } from 'kysely';
import type { MfaMethod } from 'service-protocol';
import type { Database, Db } from '../storage/schema.js';
import { deleteBefore } from '../storage/sweeper.js';

export interface MfaMethodRecord {
  method: MfaMethod;
  phone: string | null;
  totpSecretSealed: string | null;
  lastTotpStep: number | null;
  version: string;
}

export type MfaSessionRow = Database['mfa_sessions'];

/** An mfa_methods row as the flows see it (also for reads that join it, factors/device-key/sign-in-store.ts). */
export function methodRecordOf(row: Omit<Database['mfa_methods'], 'user_id' | 'confirmed_at'>): MfaMethodRecord {
  return {
    method: row.method as MfaMethodRecord['method'],
    phone: row.phone,
    totpSecretSealed: row.totp_secret_sealed,
    lastTotpStep: row.last_totp_step == null ? null : Number(row.last_totp_step),
    version: row.version,
  };
}

/** MFA methods, MFA sessions and remembered devices. Only the MFA step (sign-in/mfa-*.ts) and the factors that keep state with the method (factors/totp, factors/passkey) use these tables. */
export function createMfaStore(db: Db) {
  return {
    async findMethod(userId: string): Promise<MfaMethodRecord | undefined> {
      const row = await db.selectFrom('mfa_methods').selectAll().where('user_id', '=', userId).executeTakeFirst();
      return row && methodRecordOf(row);
    },

    /** Sets the user's method (a new version: every remembered device must pass MFA again). */
    async setMethod(userId: string, method: MfaMethodRecord, now: number): Promise<void> {
      const values = {
        method: method.method,
        phone: method.phone,
        totp_secret_sealed: method.totpSecretSealed,
        last_totp_step: method.lastTotpStep,
        version: method.version,
        confirmed_at: now,
      };
      await db
        .insertInto('mfa_methods')
        .values({ user_id: userId, ...values })
        .onConflict((oc) => oc.column('user_id').doUpdateSet(values))
        .execute();
    },

    /**
     * Replaces the method `from` with `to` (a new version) in one conditional statement: of two
     * callers that see the same state (two last passkeys revoked at once), one replaces it.
     */
    async replaceMethod(userId: string, from: MfaMethod, to: MfaMethodRecord, now: number): Promise<boolean> {
      const row = await db
        .updateTable('mfa_methods')
        .set({
          method: to.method,
          phone: to.phone,
          totp_secret_sealed: to.totpSecretSealed,
          last_totp_step: to.lastTotpStep,
          version: to.version,
          confirmed_at: now,
        })
        .where('user_id', '=', userId)
        .where('method', '=', from)
        .returning('user_id')
        .executeTakeFirst();
      return row !== undefined;
    },

    /** Removes the user's method, its remembered devices and open sessions (operator recovery). True when there was one. */
    async removeMethod(userId: string): Promise<boolean> {
      const removed = await db.deleteFrom('mfa_methods').where('user_id', '=', userId).executeTakeFirst();
      await db.deleteFrom('mfa_remembered').where('user_id', '=', userId).execute();
      await db.deleteFrom('mfa_sessions').where('user_id', '=', userId).where('verified_at', 'is', null).execute();
      return Number(removed.numDeletedRows) > 0;
    },

    /** Accepts a TOTP time step once: true only if it is newer than every step accepted before. */
    async advanceTotpStep(userId: string, version: string, step: number): Promise<boolean> {
      const row = await db
        .updateTable('mfa_methods')
        .set({ last_totp_step: step })
        .where('user_id', '=', userId)
        .where('version', '=', version)
        .where((eb) => eb.or([eb('last_totp_step', 'is', null), eb('last_totp_step', '<', step)]))
        .returning('user_id')
        .executeTakeFirst();
      return row !== undefined;
    },

    async insertSession(row: MfaSessionRow): Promise<void> {
      await db.insertInto('mfa_sessions').values(row).execute();
    },

    async findSession(idHash: string): Promise<MfaSessionRow | undefined> {
      return db.selectFrom('mfa_sessions').selectAll().where('id', '=', idHash).executeTakeFirst();
    },

    /** Starts (or restarts) the code of a live, unverified session. */
    async initiate(idHash: string, otpHash: string | null, otpExpiresAt: number | null, now: number): Promise<boolean> {
      const row = await db
        .updateTable('mfa_sessions')
        .set({ otp_hash: otpHash, otp_expires_at: otpExpiresAt, initiated_at: now })
        .where('id', '=', idHash)
        .where('verified_at', 'is', null)
        .where('expires_at', '>', now)
        .returning('id')
        .executeTakeFirst();
      return row !== undefined;
    },

    /** Forgets a code that could not be delivered, so it can never be used. */
    async clearOtp(idHash: string): Promise<void> {
      await db.updateTable('mfa_sessions').set({ otp_hash: null, otp_expires_at: null }).where('id', '=', idHash).execute();
    },

    /**
     * Spends one guess before the code is compared; the cap is part of the same statement,
     * so parallel guesses cannot exceed it. Only live, unverified sessions qualify, and
     * (`initiated`, the default) only those whose code was sent or armed.
     */
    async spendAttempt(
      idHash: string,
      maxAttempts: number,
      now: number,
      { initiated = true }: { initiated?: boolean } = {},
    ): Promise<MfaSessionRow | undefined> {
      let query = db
        .updateTable('mfa_sessions')
        .set({ attempts: sql`attempts + 1` })
        .where('id', '=', idHash)
        .where('attempts', '<', maxAttempts)
        .where('verified_at', 'is', null)
        .where('expires_at', '>', now);
      // A recovery code needs no initiated step (nothing was sent); every other code does.
      if (initiated) query = query.where('initiated_at', 'is not', null);
      return query.returningAll().executeTakeFirst();
    },

    /** Gives back one spent guess (a right TOTP code of a step already used proves no ignorance). */
    async refundAttempt(idHash: string): Promise<void> {
      await db
        .updateTable('mfa_sessions')
        .set({ attempts: sql`attempts - 1` })
        .where('id', '=', idHash)
        .where('attempts', '>', 0)
        .execute();
    },

    /**
     * Turns a change session whose current factor was just proven into the confirmation of the
     * new method: once (only from a verified 'change-current' row), with a fresh guess budget.
     */
    async beginNewMethod(
      idHash: string,
      next: { method: string; phone: string | null; totpSecretSealed: string | null; initiatedAt: number | null },
    ): Promise<boolean> {
      const row = await db
        .updateTable('mfa_sessions')
        .set({
          purpose: 'change',
          method: next.method,
          phone: next.phone,
          totp_secret_sealed: next.totpSecretSealed,
          change_to: null,
          otp_hash: null,
          otp_expires_at: null,
          attempts: 0,
          initiated_at: next.initiatedAt,
          verified_at: null,
        })
        .where('id', '=', idHash)
        .where('purpose', '=', 'change-current')
        .where('verified_at', 'is not', null)
        .returning('id')
        .executeTakeFirst();
      return row !== undefined;
    },

    /** True for the single caller that completes the session. */
    async markVerified(idHash: string, now: number): Promise<boolean> {
      const row = await db
        .updateTable('mfa_sessions')
        .set({ verified_at: now })
        .where('id', '=', idHash)
        .where('verified_at', 'is', null)
        .returning('id')
        .executeTakeFirst();
      return row !== undefined;
    },

    async remember(deviceId: string, userId: string, methodVersion: string, expiresAt: number): Promise<void> {
      const values = { user_id: userId, method_version: methodVersion, expires_at: expiresAt };
      await db
        .insertInto('mfa_remembered')
        .values({ device_id: deviceId, ...values })
        .onConflict((oc) => oc.column('device_id').doUpdateSet(values))
        .execute();
    },

    async isRemembered(deviceId: string, userId: string, methodVersion: string, now: number): Promise<boolean> {
      const row = await db
        .selectFrom('mfa_remembered')
        .select('device_id')
        .where('device_id', '=', deviceId)
        .where('user_id', '=', userId)
        .where('method_version', '=', methodVersion)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return row !== undefined;
    },

    async deleteExpired(now: number): Promise<void> {
      await deleteBefore(db, 'mfa_sessions', 'expires_at', now);
      await deleteBefore(db, 'mfa_remembered', 'expires_at', now);
    },
  };
}

export type MfaStore = ReturnType<typeof createMfaStore>;
