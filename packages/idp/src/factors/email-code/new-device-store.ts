import type { Db } from '../../storage/schema.js';
import { deleteBefore } from '../../storage/sweeper.js';

export interface NewDeviceSignInRow {
  idHash: string;
  clientId: string;
  email: string;
  otpHash: string;
  rememberDevice: boolean;
  cryptoVersion: string;
  codeChallenge: string | null;
  createdAt: number;
  otpExpiresAt: number;
  expiresAt: number;
}

export interface NewDeviceSignInState {
  clientId: string;
  email: string;
  attempts: number;
  otpExpiresAt: number;
  verifiedAt: number | null;
  expiresAt: number;
  completedAt: number | null;
}

/**
 * A new device's sign-in (table `registrations`) is one email-OTP challenge and the device
 * registration it unlocks, addressed by the keyed hash of its device token. State moves one way:
 * created → verified (OTP accepted) → completed (device registered, code issued).
 */
export function createNewDeviceStore(db: Db) {
  return {
    async insert(r: NewDeviceSignInRow): Promise<void> {
      await db
        .insertInto('registrations')
        .values({
          id: r.idHash,
          client_id: r.clientId,
          email: r.email,
          otp_hash: r.otpHash,
          attempts: 0,
          remember_device: r.rememberDevice ? 1 : 0,
          crypto_version: r.cryptoVersion,
          code_challenge: r.codeChallenge,
          created_at: r.createdAt,
          otp_expires_at: r.otpExpiresAt,
          verified_at: null,
          expires_at: r.expiresAt,
          completed_at: null,
        })
        .execute();
    },

    async find(idHash: string): Promise<NewDeviceSignInState | undefined> {
      const row = await db.selectFrom('registrations').selectAll().where('id', '=', idHash).executeTakeFirst();
      return (
        row && {
          clientId: row.client_id,
          email: row.email,
          attempts: Number(row.attempts),
          otpExpiresAt: Number(row.otp_expires_at),
          verifiedAt: row.verified_at == null ? null : Number(row.verified_at),
          expiresAt: Number(row.expires_at),
          completedAt: row.completed_at == null ? null : Number(row.completed_at),
        }
      );
    },

    /**
     * Spends one guess before the OTP is compared: the increment and the cap are one
     * statement, so concurrent guesses cannot exceed `maxAttempts` evaluations.
     * Returns the stored OTP hash and the attempt number, or undefined when no guess is left.
     */
    async spendAttempt(idHash: string, maxAttempts: number, now: number): Promise<{ otpHash: string; attempts: number } | undefined> {
      const row = await db
        .updateTable('registrations')
        .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
        .where('id', '=', idHash)
        .where('attempts', '<', maxAttempts)
        .where('otp_expires_at', '>', now)
        .where('verified_at', 'is', null)
        .returning(['otp_hash', 'attempts'])
        .executeTakeFirst();
      return row && { otpHash: row.otp_hash, attempts: Number(row.attempts) };
    },

    async deleteExpired(now: number): Promise<void> {
      await deleteBefore(db, 'registrations', 'expires_at', now);
    },

    /** Ends the sign-in at once (its OTP was never delivered). */
    async expire(idHash: string, now: number): Promise<void> {
      await db.updateTable('registrations').set({ otp_expires_at: now, expires_at: now }).where('id', '=', idHash).execute();
    },

    /** True for the single caller that moves the sign-in to verified. */
    async markVerified(idHash: string, now: number, expiresAt: number): Promise<boolean> {
      const result = await db
        .updateTable('registrations')
        .set({ verified_at: now, expires_at: expiresAt })
        .where('id', '=', idHash)
        .where('verified_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /** Completes a verified, live sign-in once; returns what the code must be bound to. */
    async complete(
      idHash: string,
      now: number,
    ): Promise<{ rememberDevice: boolean; cryptoVersion: string; codeChallenge: string | null } | undefined> {
      const row = await db
        .updateTable('registrations')
        .set({ completed_at: now })
        .where('id', '=', idHash)
        .where('verified_at', 'is not', null)
        .where('completed_at', 'is', null)
        .where('expires_at', '>', now)
        .returning(['remember_device', 'crypto_version', 'code_challenge'])
        .executeTakeFirst();
      return (
        row && { rememberDevice: Number(row.remember_device) === 1, cryptoVersion: row.crypto_version, codeChallenge: row.code_challenge }
      );
    },
  };
}

export type NewDeviceStore = ReturnType<typeof createNewDeviceStore>;
