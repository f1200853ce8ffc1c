/**
 * Table shapes. Times are Unix epoch milliseconds in BIGINT columns; booleans are 0/1
 * integers, so the same SQL runs on SQLite and PostgreSQL. Each table belongs to one
 * module (named beside it); no other module reads or writes it.
 */
import type { Kysely } from 'kysely';

export interface Database {
  /** clients/ */
  clients: {
    id: string;
    name: string;
    publishable_key_hash: string;
    secret_key_hash: string;
    origins: string; // JSON array of origins
    mfa_policy: string;
    created_at: number;
  };
  /** accounts/ */
  users: {
    id: string;
    email: string;
    created_at: number;
  };
  /** accounts/: consecutive failures per account, across challenges */
  account_failures: {
    user_key: string;
    failures: number;
    locked_until: number | null;
  };
  /** devices/ */
  devices: {
    id: string;
    user_id: string;
    client_id: string;
    public_jwk: string;
    crypto_version: string;
    created_at: number;
    last_used_at: number | null;
    removed_at: number | null;
  };
  /** devices/: challenges already spent by a device proof (replay cache) */
  device_challenges: {
    id: string;
    client_id: string;
    expires_at: number;
    consumed_at: number | null;
  };
  /** registration/: one email-OTP verification and the device registration it leads to */
  registrations: {
    id: string;
    client_id: string;
    email: string;
    otp_hash: string;
    attempts: number;
    remember_device: number;
    crypto_version: string;
    code_challenge: string | null;
    created_at: number;
    otp_expires_at: number;
    verified_at: number | null;
    expires_at: number;
    completed_at: number | null;
  };
  /** codes/ */
  auth_codes: {
    id: string;
    client_id: string;
    user_id: string;
    code_challenge: string | null;
    amr: string; // JSON array
    auth_time: number;
    expires_at: number;
    consumed_at: number | null;
  };
  /** throttle/ */
  rate_counters: {
    key: string;
    window_start: number;
    count: number;
    expires_at: number;
  };
  /** keys/ */
  signing_keys: {
    kid: string;
    alg: string;
    public_jwk: string;
    private_jwk_sealed: string;
    created_at: number;
    retired_at: number | null;
  };
  /** mail/: the development mailbox */
  mailbox: {
    id: string;
    recipient: string;
    subject: string;
    text_body: string;
    html_body: string;
    created_at: number;
  };
}

export type Db = Kysely<Database>;
