/**
 * What a trusted-device login's writes cost SQLite itself, below Kysely and HTTP: the three
 * rows a login writes on the service's real schema (a file migrated by `service-idp migrate`),
 * with the service's pragmas (WAL, synchronous=NORMAL), through better-sqlite3 prepared
 * statements, in process. For docs/performance.md, "Where the time goes": the floor of the
 * login's write, each statement's share, and what committing several logins at once (group
 * commit) would save.
 *
 *   npm run build && node --import tsx bench/sqlite-writes.ts
 *
 * The ratios are against the whole login write measured in the same run. No checkpoint runs
 * inside a case (the service runs them in a worker thread), so each figure is the commit's own
 * cost; the log is truncated between cases.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmt, table } from './report.js';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, '..', 'packages', 'idp', 'package.json'));
const SQLite = require('better-sqlite3') as typeof import('better-sqlite3');
/** Logins per case; the log is truncated before each case, so every case starts from the same WAL size. */
const LOGINS = Number(process.env.BENCH_SQLITE_LOGINS ?? 5000);

const dataDir = mkdtempSync(join(tmpdir(), 'service-idp-sqlite-writes-'));
try {
  execFileSync(process.execPath, [join(here, '..', 'packages', 'idp', 'dist', 'cli.js'), 'migrate', '--data', dataDir], {
    stdio: 'ignore',
  });
  const db = new SQLite(join(dataDir, 'service.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('wal_autocheckpoint = 0');

  const id = () => randomBytes(16).toString('base64url');
  const users = Array.from({ length: 200 }, id);
  // The statements the login's SQLite path runs (factors/device-key/sign-in-store.ts spendAndIssue), with the same columns.
  const spend = db.prepare(
    'insert into spent_tokens (id, purpose, expires_at, consumed_at) values (?, ?, ?, ?) on conflict (id) do nothing returning id',
  );
  const code = db.prepare(
    `insert into auth_codes (id, client_id, user_id, code_challenge, amr, auth_time, expires_at, consumed_at, device_id, access_token_jti, redirect_uri, nonce, scope)
     values (?, 'cli_bench', ?, null, '["hwk","user"]', ?, ?, null, ?, ?, null, null, 'openid email')`,
  );
  const event = db.prepare(
    `insert into events (id, type, at, user_id, client_id, device_id, ip, user_agent, actor, detail)
     values (?, 'sign_in.succeeded', ?, ?, 'cli_bench', ?, '127.0.0.1', 'bench', null, '{"method":"device"}')`,
  );
  let n = 0;
  const write = {
    spend: () => spend.get(`device-challenge:${id()}`, 'device-challenge', n + 60_000, n),
    code: () => code.run(id(), users[n % 200], n, n + 60_000, id(), id()),
    event: () => event.run(id(), n, users[n % 200], id()),
  };
  const login = () => {
    write.spend();
    write.code();
    write.event();
  };
  const cases: [string, () => void, number][] = [
    ['login write: 3 rows, 1 transaction', db.transaction(login), 1],
    ['8 logins in 1 transaction (group commit)', db.transaction(() => Array.from({ length: 8 }, login)), 8],
    ['challenge spend alone, 1 transaction', db.transaction(write.spend), 1],
    ['authorization code alone, 1 transaction', db.transaction(write.code), 1],
    ['sign_in.succeeded event alone, 1 transaction', db.transaction(write.event), 1],
    ['empty transaction', db.transaction(() => {}), 1],
  ];
  for (let i = 0; i < 3000; i++, n++) cases[0]?.[1]();
  const results = cases.map(([name, run, per]) => {
    db.pragma('wal_checkpoint(TRUNCATE)');
    const cpu = process.cpuUsage();
    const start = process.hrtime.bigint();
    let done = 0;
    while (done < LOGINS) {
      run();
      done += per;
      n += per;
    }
    const used = process.cpuUsage(cpu);
    return { name, wallUs: Number(process.hrtime.bigint() - start) / 1000 / done, cpuUs: (used.user + used.system) / done };
  });
  const whole = results[0]?.cpuUs ?? 1;
  process.stdout.write(
    `SQLite writes of one trusted-device login (better-sqlite3, WAL, synchronous=NORMAL, ${fmt(LOGINS)} logins per case)\n${table(
      ['case', 'CPU µs per login', 'wall µs per login', 'CPU ÷ login write'],
      results.map((r) => [r.name, fmt(r.cpuUs, 1), fmt(r.wallUs, 1), (r.cpuUs / whole).toFixed(2)]),
    )}\n`,
  );
  db.close();
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
