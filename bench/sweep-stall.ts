/**
 * The sweeper's longest event-loop stall on SQLite (docs/performance.md, "Under time"): a
 * minute of logins at 300/s leaves about 18,000 expired codes and 18,000 spent challenges.
 * Deletes them once with one unbounded statement per table and once through the batched
 * sweep (storage/sweeper.ts), and prints the longest time the event loop was held (the gap
 * between two turns of a setImmediate loop) and the total time. In process, one core:
 *
 *   node --import tsx bench/sweep-stall.ts        (ROWS=18000 by default)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openSqlite } from '../packages/idp/src/storage/database.js';
import { migrate } from '../packages/idp/src/storage/migrations.js';
import { deleteBefore } from '../packages/idp/src/storage/sweeper.js';

const ROWS = Number(process.env.ROWS ?? 18_000);
const now = Date.now();

async function fill(db: ReturnType<typeof openSqlite>) {
  await db.deleteFrom('auth_codes').execute();
  await db.deleteFrom('spent_tokens').execute();
  for (let i = 0; i < ROWS; i += 500) {
    const n = Math.min(500, ROWS - i);
    await db
      .insertInto('spent_tokens')
      .values(
        Array.from({ length: n }, (_, j) => ({
          id: `device-challenge:c${i + j}`,
          purpose: 'device-challenge',
          expires_at: now - 1,
          consumed_at: now - 60_000,
        })),
      )
      .execute();
    await db
      .insertInto('auth_codes')
      .values(
        Array.from({ length: n }, (_, j) => ({
          id: `a${i + j}`,
          client_id: 'cli_bench',
          user_id: 'usr_bench',
          code_challenge: null,
          amr: '["swk"]',
          auth_time: 0,
          device_id: null,
          expires_at: now - 1,
          consumed_at: now - 30_000,
          access_token_jti: null,
        })),
      )
      .execute();
  }
}

/** Longest gap between event-loop turns while `work` runs, and its total time. */
async function stall(work: () => Promise<unknown>): Promise<{ longestMs: number; totalMs: number }> {
  let longest = 0;
  let last = performance.now();
  let running = true;
  const spin = () => {
    const t = performance.now();
    longest = Math.max(longest, t - last);
    last = t;
    if (running) setImmediate(spin);
  };
  setImmediate(spin);
  const t0 = performance.now();
  await work();
  const totalMs = performance.now() - t0;
  running = false;
  spin();
  return { longestMs: longest, totalMs };
}

const dir = mkdtempSync(join(tmpdir(), 'sweep-stall-'));
const db = openSqlite(join(dir, 'service.db'));
try {
  await migrate(db);
  await db.insertInto('users').values({ id: 'usr_bench', email: 'bench@example.com', created_at: now, disabled_at: null }).execute();
  await db
    .insertInto('clients')
    .values({
      id: 'cli_bench',
      name: 'bench',
      publishable_key_hash: 'p',
      secret_key_hash: 's',
      origins: '[]',
      redirect_uris: '[]',
      post_logout_redirect_uris: '[]',
      client_type: 'confidential',
      mfa_policy: 'optional',
      passkey_satisfies_mfa: 1,
      dpop_bound_access_tokens: 0,
      backchannel_logout_uri: null,
      backchannel_logout_session_required: 0,
      frontchannel_logout_uri: null,
      frontchannel_logout_session_required: 0,
      require_pushed_authorization_requests: 0,
      id_token_signed_response_alg: 'RS256',
      third_party: 0,
      registered: 0,
      device_code_grant: 0,
      created_at: now,
    })
    .execute();
  for (let round = 1; round <= 3; round += 1) {
    await fill(db);
    const single = await stall(async () => {
      await db.deleteFrom('auth_codes').where('expires_at', '<', now).execute();
      await db.deleteFrom('spent_tokens').where('expires_at', '<', now).execute();
    });
    await fill(db);
    const batched = await stall(async () => {
      await deleteBefore(db, 'auth_codes', 'expires_at', now);
      await deleteBefore(db, 'spent_tokens', 'expires_at', now);
    });
    process.stdout.write(
      `round ${round}, ${ROWS} codes + ${ROWS} challenges: one statement per table: longest stall ${single.longestMs.toFixed(1)} ms (total ${single.totalMs.toFixed(1)} ms); batched: longest stall ${batched.longestMs.toFixed(1)} ms (total ${batched.totalMs.toFixed(1)} ms)\n`,
    );
  }
} finally {
  await db.destroy();
  rmSync(dir, { recursive: true, force: true });
}
