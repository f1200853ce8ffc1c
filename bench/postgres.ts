/**
 * The PostgreSQL run of the benchmark (issue 6, "Scale"): trusted-device logins against
 * `service-idp` on PostgreSQL, with 1 and with 2 nodes, and login latency with a small and a
 * large seeded database. Needs the packages built (`npm run build`) and a PostgreSQL server:
 *
 *   eval "$(bash .ci/postgres.sh start)"
 *   node --import tsx bench/postgres.ts
 *
 * For every size (BENCH_PG_USERS, default "1000,1000000") a fresh database is created next to
 * the one SERVICE_TEST_DATABASE_URL names, migrated with `service-idp migrate`, and seeded in
 * PostgreSQL itself (generate_series): N users, 2N devices (all under a seed client), N
 * client_users rows. The benchmark's own BENCH_DEVICES (200) devices are then registered on top,
 * in-process through the service child (bench/idp-server.ts), as in bench/run.ts. Per size:
 *
 *   login, 1 node    16 connections on node A (throughput; latency under load)
 *   login, 1 conn    1 connection on node A (latency of one login at a time)
 *   login, 2 nodes   node A plus a `service-idp start` process B with the same data folder,
 *                    database and --issuer; two autocannon instances in parallel, half the
 *                    connections each (each connection sticks to its node, like a
 *                    connection-keeping load balancer)
 *
 * Baseline B (trivial Fastify route, same load generator) is measured first, as in run.ts.
 * Environment: as run.ts (BENCH_SECONDS, BENCH_WARMUP_SECONDS, BENCH_CONNECTIONS,
 * BENCH_DEVICES), plus BENCH_PG_USERS and BENCH_PG_KEEP=1 (keep the databases).
 * Results: printed, and written to bench/results/postgres.json.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { Request, Result } from 'autocannon';
import pg from 'pg';
import { cpuSecondsOf, startChild } from './child.js';
import { type BenchClient, type BenchDevice, tokenExchange, trustedLogin } from './flows.js';
import { type Measurement, measure, once, SETTINGS, simple, type Workload } from './load.js';
import { newDeviceKey } from './proof.js';
import { fmt, pct, table } from './report.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const cli = join(root, 'packages', 'idp', 'dist', 'cli.js');
const resultsDir = join(here, 'results');
const DEVICES = Number(process.env.BENCH_DEVICES ?? 200);
const SIZES = (process.env.BENCH_PG_USERS ?? '1000,1000000').split(',').map(Number);
const CORES = availableParallelism();
const baseUrl = process.env.SERVICE_TEST_DATABASE_URL;
if (!baseUrl) {
  process.stderr.write('bench/postgres.ts needs SERVICE_TEST_DATABASE_URL: run  eval "$(bash .ci/postgres.sh start)"  first\n');
  process.exit(2);
}
const started = Date.now();
const log = (line: string) => process.stderr.write(`[bench-pg ${((Date.now() - started) / 1000).toFixed(1)}s] ${line}\n`);

/** A database URL on the same server as SERVICE_TEST_DATABASE_URL, naming another database. */
function databaseUrl(name: string): string {
  const url = new URL(baseUrl as string);
  url.pathname = `/${name}`;
  return url.toString();
}

async function sql(url: string, ...statements: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const statement of statements) await client.query(statement);
  } finally {
    await client.end();
  }
}

/** users, 2 devices each, client_users: ids and emails shaped like the service's own. */
async function seed(url: string, users: number): Promise<number> {
  const t0 = performance.now();
  const at = 1_700_000_000_000;
  await sql(
    url,
    'SET synchronous_commit = off',
    // The rows are built consistent; skip the per-row foreign-key triggers (superuser only), not the keys or indexes.
    'SET session_replication_role = replica',
    `INSERT INTO clients (id, name, publishable_key_hash, secret_key_hash, origins, mfa_policy, created_at)
       VALUES ('cli_seed', 'Seed', 'seed-publishable-hash', 'seed-secret-hash', '["https://seed.test"]', 'optional', ${at})`,
    `INSERT INTO users (id, email, created_at)
       SELECT 'usr_' || substr(md5('u' || g), 1, 22), 'seed-user-' || g || '@example.com', ${at} + g
       FROM generate_series(1, ${users}) AS g`,
    `INSERT INTO devices (id, user_id, client_id, public_jwk, crypto_version, created_at)
       SELECT 'dev_' || substr(md5('d' || g), 1, 22), 'usr_' || substr(md5('u' || ((g - 1) % ${users} + 1)), 1, 22), 'cli_seed',
              '{"kty":"EC","crv":"P-256","x":"' || md5('x' || g) || '","y":"' || md5('y' || g) || '"}', 'v1', ${at} + g
       FROM generate_series(1, ${2 * users}) AS g`,
    `INSERT INTO client_users (client_id, user_id, first_signed_in_at)
       SELECT 'cli_seed', 'usr_' || substr(md5('u' || g), 1, 22), ${at} + g FROM generate_series(1, ${users}) AS g`,
  );
  // Vacuumed and analysed like a database that has been in use, so autovacuum does not start on
  // the fresh tables during a measured run.
  await sql(url, 'VACUUM (ANALYZE)');
  // Then written out: a checkpoint, and the kernel's own writeback of a gigabyte of new pages
  // (sync), so the measured runs do not share the disk and the CPU with the seed's writes.
  await sql(url, 'CHECKPOINT');
  execFileSync('sync');
  return (performance.now() - t0) / 1000;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Node B: the real CLI, `service-idp start`, request logs off (node A's logger is off too). */
async function startCliNode(dataDir: string, database: string, port: number, issuer: string) {
  const child: ChildProcess = spawn(
    process.execPath,
    [cli, 'start', '--host', '127.0.0.1', '--port', String(port), '--data', dataDir, '--database', database, '--issuer', issuer],
    { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, SERVICE_IDP_LOG_LEVEL: 'warn' } },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`service-idp start exited with ${child.exitCode}`);
    const ok = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (i > 300) throw new Error('service-idp start did not become healthy in 30 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    pid: child.pid as number,
    async stop() {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The postmaster of the server under test: the parent of one of its backends (the machine may run other clusters). */
async function postmasterPid(): Promise<number> {
  const client = new pg.Client({ connectionString: baseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    return parentOf(Number(rows[0]?.pid));
  } finally {
    await client.end();
  }
}

function parentOf(pid: number): number {
  // /proc/PID/stat: field 4 is the parent; the command name may hold spaces, so split after ')'.
  return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]);
}

/** CPU seconds of the server under test: its postmaster and every child (backends, writers). */
function postgresCpuSeconds(): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const pid = Number(entry);
      if (pid === postmaster || parentOf(pid) === postmaster) total += cpuSecondsOf(pid);
    } catch {
      // exited meanwhile
    }
  }
  return total;
}

/** CPU seconds so far of each backend connected to `database` (a connection opened during a run counts from zero). */
async function backendCpuSeconds(database: string): Promise<Map<number, number>> {
  const client = new pg.Client({ connectionString: baseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [database]);
    const seconds = new Map<number, number>();
    for (const { pid } of rows) {
      try {
        seconds.set(pid, cpuSecondsOf(pid));
      } catch {
        // exited meanwhile
      }
    }
    return seconds;
  } finally {
    await client.end();
  }
}

function machineTicks() {
  const [, ...fields] = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/);
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = fields.map(Number);
  const total = user + nice + system + idle + iowait + irq + softirq + steal;
  return { busy: total - idle - iowait, iowait, total };
}

/** The nodes are child processes here: their main threads are not sampled (load.ts's mainThread* needs an in-process server). */
interface PgMeasurement extends Omit<Measurement, 'mainThreadBusy' | 'mainThreadMsPerUnit' | 'serverCpuMsPerUnit'> {
  nodes: number;
  connections: number;
  /** Share of the machine used by PostgreSQL (all its processes); serverCpu is the service nodes only. */
  dbCpu: number;
  /**
   * Share used by the backends connected to the benchmark's database only: the cluster may be
   * shared with other work (other databases' tests), which dbCpu counts and this does not.
   * WAL writer, checkpointer and autovacuum are not counted here.
   */
  dbBackendCpu: number;
  /** Whole logins (challenge + proof + authenticate) timed in the client, over all nodes. */
  loginP50Ms: number;
  loginP99Ms: number;
  /** Per node: its autocannon instance's figures. */
  perNode: { url: string; ok: number; latencyP50Ms: number; latencyP99Ms: number }[];
}

/**
 * The login workload with each login timed in the client, from the challenge request being
 * built to the authenticate response (both requests, client-side signing included), at
 * sub-millisecond resolution (autocannon's own percentiles are whole milliseconds per request).
 */
function timed(build: () => Workload, samples: number[]): () => Workload {
  return () => {
    const workload = build();
    const [first, second] = workload.requests as [Request, Request | undefined];
    if (!second) return workload; // not a login (the token run)
    return {
      ...workload,
      requests: [
        {
          ...first,
          setupRequest(request, context) {
            context.loginStarted = performance.now();
            return first.setupRequest ? first.setupRequest(request, context) : request;
          },
        },
        {
          ...second,
          onResponse(status, body, context) {
            second.onResponse?.(status, body, context);
            if (typeof context.loginStarted === 'number') samples.push(performance.now() - context.loginStarted);
          },
        },
      ],
    };
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted.length ? (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number) : Number.NaN;
}

/**
 * Like load.ts measure(), over one or more nodes: one autocannon instance per node, in parallel
 * in this process, the connections split between them. Latency percentiles are autocannon's,
 * per HTTP request (a login is two); with two nodes p50 is the mean of the two instances' p50
 * and p99 the larger p99.
 */
async function measureNodes(
  nodes: { url: string; pid: number }[],
  build: () => Workload,
  connections: number,
  database?: string,
): Promise<PgMeasurement> {
  const per = Math.max(1, Math.floor(connections / nodes.length));
  if (SETTINGS.warmupSeconds > 0) await Promise.all(nodes.map((n) => once(n.url, build(), SETTINGS.warmupSeconds, per)));
  const samples: number[] = [];
  const workloads = nodes.map(() => timed(build, samples)());
  const clientBefore = process.cpuUsage();
  const serverBefore = nodes.map((n) => cpuSecondsOf(n.pid));
  const dbBefore = postgresCpuSeconds();
  const backendsBefore = database ? await backendCpuSeconds(database) : new Map<number, number>();
  const machineBefore = machineTicks();
  const t0 = performance.now();
  const results = await Promise.all(nodes.map((n, i) => once(n.url, workloads[i] as Workload, SETTINGS.durationSeconds, per)));
  const seconds = (performance.now() - t0) / 1000;
  const client = process.cpuUsage(clientBefore);
  const serverSeconds = nodes.reduce((sum, n, i) => sum + cpuSecondsOf(n.pid) - (serverBefore[i] as number), 0);
  const dbSeconds = postgresCpuSeconds() - dbBefore;
  const machineAfter = machineTicks();
  const backendsAfter = database ? await backendCpuSeconds(database) : new Map<number, number>();
  let backendSeconds = 0;
  for (const [pid, after] of backendsAfter) backendSeconds += after - (backendsBefore.get(pid) ?? 0);
  const machineTotal = machineAfter.total - machineBefore.total || 1;
  samples.sort((x, y) => x - y);
  const tallies = workloads.map((w, i) => w.tally(results[i] as Result));
  const ok = tallies.reduce((s, t) => s + t.ok, 0);
  const failed = tallies.reduce((s, t) => s + t.failed, 0) + results.reduce((s, r) => s + r.errors + r.timeouts, 0);
  const clientCpu = (client.user + client.system) / 1e6 / seconds / CORES;
  const serverCpu = serverSeconds / seconds / CORES;
  const dbCpu = dbSeconds / seconds / CORES;
  return {
    nodes: nodes.length,
    connections: per * nodes.length,
    rate: ok / seconds,
    ok,
    failed,
    seconds,
    latencyP50Ms: results.reduce((s, r) => s + r.latency.p50, 0) / results.length,
    latencyP99Ms: Math.max(...results.map((r) => r.latency.p99)),
    loginP50Ms: percentile(samples, 50),
    loginP99Ms: percentile(samples, 99),
    clientCpu,
    serverCpu,
    dbCpu,
    dbBackendCpu: backendSeconds / seconds / CORES,
    otherCpu: Math.max(0, (machineAfter.busy - machineBefore.busy) / machineTotal - clientCpu - serverCpu - dbCpu),
    ioWait: (machineAfter.iowait - machineBefore.iowait) / machineTotal,
    perNode: nodes.map((n, i) => ({
      url: n.url,
      ok: (tallies[i] as { ok: number }).ok,
      latencyP50Ms: (results[i] as Result).latency.p50,
      latencyP99Ms: (results[i] as Result).latency.p99,
    })),
  };
}

interface SizeResult {
  users: number;
  seededDevices: number;
  seedSeconds: number;
  registerSeconds: number;
  oneNode: PgMeasurement;
  /** POST /oauth/token on node A, codes minted before the run. */
  token: PgMeasurement;
  oneConnection: PgMeasurement;
  twoNodes: PgMeasurement;
}

async function runSize(users: number): Promise<SizeResult> {
  const name = `bench_pg_${users}`;
  const url = databaseUrl(name);
  await sql(baseUrl as string, `DROP DATABASE IF EXISTS ${name}`, `CREATE DATABASE ${name}`);
  const dataDir = mkdtempSync(join(tmpdir(), 'service-idp-bench-pg-'));
  try {
    execFileSync(process.execPath, [cli, 'migrate', '--data', dataDir, '--database', url], { stdio: ['ignore', 'ignore', 'inherit'] });
    log(`${name}: seeding ${users.toLocaleString('en-US')} users, ${(2 * users).toLocaleString('en-US')} devices`);
    const seedSeconds = await seed(url, users);
    log(`${name}: seeded in ${seedSeconds.toFixed(1)}s`);

    const [portA, portB] = [await freePort(), await freePort()];
    const issuer = `http://127.0.0.1:${portA}`;
    const a = await startChild(join(here, 'idp-server.ts'), [dataDir, url, String(portA), issuer]);
    const client = a.ready as unknown as BenchClient;
    const nodeA = { url: a.ready.url as string, pid: a.pid };
    try {
      log(`${name}: registering ${DEVICES} devices`);
      const r0 = performance.now();
      const keys = Array.from({ length: DEVICES }, (_, i) => ({ email: `bench-user-${i}@example.com`, key: newDeviceKey() }));
      const ids = await a.request<string[]>('register', { devices: keys.map((k) => ({ email: k.email, publicJwk: k.key.publicJwk })) });
      const registerSeconds = (performance.now() - r0) / 1000;
      const devices: BenchDevice[] = keys.map((k, i) => ({ email: k.email, deviceId: ids[i] as string, privateKey: k.key.privateKey }));
      const login = trustedLogin(client, devices);

      log(`${name}: login, 1 node, ${SETTINGS.connections} connections`);
      const oneNode = await measureNodes([nodeA], login, SETTINGS.connections, name);
      // Codes live 60 s: minted just before the run, four times what the login rate suggests (a
      // token request is one statement to the login's three); the run stops if they run out.
      const codeCount = Math.min(
        40_000,
        Math.ceil(4 * oneNode.rate * (SETTINGS.warmupSeconds + SETTINGS.durationSeconds)) + 2 * SETTINGS.connections,
      );
      log(`${name}: minting ${codeCount} codes, then token, 1 node, ${SETTINGS.connections} connections`);
      const codes = await a.request<string[]>('mint', { count: codeCount });
      const token = await measureNodes([nodeA], tokenExchange(client, codes, SETTINGS.connections), SETTINGS.connections, name);
      log(`${name}: login, 1 node, 1 connection`);
      const oneConnection = await measureNodes([nodeA], login, 1, name);
      log(`${name}: starting node B (service-idp start, same data folder, database and issuer)`);
      const b = await startCliNode(dataDir, url, portB, issuer);
      let twoNodes: PgMeasurement;
      try {
        log(`${name}: login, 2 nodes, ${SETTINGS.connections} connections split`);
        twoNodes = await measureNodes([nodeA, b], login, SETTINGS.connections, name);
      } finally {
        await b.stop();
      }
      return { users, seededDevices: 2 * users, seedSeconds, registerSeconds, oneNode, token, oneConnection, twoNodes };
    } finally {
      await a.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    if (process.env.BENCH_PG_KEEP !== '1') await sql(baseUrl as string, `DROP DATABASE IF EXISTS ${name}`);
  }
}

const postmaster = await postmasterPid();

log('baseline B: trivial Fastify route');
const trivial = await startChild(join(here, 'trivial-server.ts'), []);
const baselineB = await measure(trivial.ready.url as string, simple({ method: 'GET', path: '/' }), trivial);
await trivial.stop();

// The same login on SQLite, same run, for the PostgreSQL ÷ SQLite target (≥ 0.8).
log('SQLite: login, 1 node (the baseline of the PostgreSQL ratio)');
const sqliteLogin = await (async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'service-idp-bench-sqlite-'));
  const node = await startChild(join(here, 'idp-server.ts'), [dataDir]);
  try {
    const keys = Array.from({ length: DEVICES }, (_, i) => ({ email: `bench-user-${i}@example.com`, key: newDeviceKey() }));
    const ids = await node.request<string[]>('register', { devices: keys.map((k) => ({ email: k.email, publicJwk: k.key.publicJwk })) });
    const devices: BenchDevice[] = keys.map((k, i) => ({ email: k.email, deviceId: ids[i] as string, privateKey: k.key.privateKey }));
    return await measureNodes(
      [{ url: node.ready.url as string, pid: node.pid }],
      trustedLogin(node.ready as unknown as BenchClient, devices),
      SETTINGS.connections,
    );
  } finally {
    await node.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
})();

const sizes: SizeResult[] = [];
for (const users of SIZES) sizes.push(await runSize(users));

const machine = {
  cores: CORES,
  cpu: cpus()[0]?.model ?? 'unknown',
  node: process.version,
  platform: `${process.platform} ${process.arch}`,
};
const out = process.stdout;
out.write(`\nservice-idp PostgreSQL benchmark — ${machine.cores} cores, ${machine.cpu}, Node ${machine.node}\n`);
out.write(
  `autocannon: ${SETTINGS.connections} connections, ${SETTINGS.warmupSeconds}s warm-up + ${SETTINGS.durationSeconds}s measured; baseline B ${fmt(baselineB.rate)} req/s\n\n`,
);
const rows: [string, PgMeasurement][] = [
  ['SQLite: login, 1 node', sqliteLogin],
  ...sizes.flatMap((s): [string, PgMeasurement][] => [
    [`${fmt(s.users)} users: login, 1 node`, s.oneNode],
    [`${fmt(s.users)} users: token, 1 node`, s.token],
    [`${fmt(s.users)} users: login, 2 nodes`, s.twoNodes],
    [`${fmt(s.users)} users: login, 1 connection`, s.oneConnection],
  ]),
];
out.write(
  `${table(
    ['run', 'logins/s', '÷ B', 'login p50', 'login p99', 'req p50', 'req p99', 'failed', 'client', 'nodes', 'postgres', 'other'],
    rows.map(([name, m]) => [
      name,
      fmt(m.rate),
      (m.rate / baselineB.rate).toFixed(3),
      fmt(m.loginP50Ms, 2),
      fmt(m.loginP99Ms, 2),
      fmt(m.latencyP50Ms, 1),
      fmt(m.latencyP99Ms, 1),
      String(m.failed),
      pct(m.clientCpu),
      pct(m.serverCpu),
      pct(m.dbCpu),
      pct(m.otherCpu),
    ]),
  )}\n`,
);
out.write(
  'login p50/p99 (ms): whole logins timed in the client; req p50/p99 (ms): autocannon, per HTTP request (a login is two). CPU shares are of the whole machine.\n',
);
const [small, large] = [sizes[0], sizes[sizes.length - 1]];
const scaling =
  small && large && small !== large
    ? {
        loadedP50Ratio: large.oneNode.loginP50Ms / small.oneNode.loginP50Ms,
        oneConnectionP50Ratio: large.oneConnection.loginP50Ms / small.oneConnection.loginP50Ms,
        target: 1.2,
      }
    : undefined;
if (scaling && small && large) {
  out.write(
    `\nlogin p50 at ${fmt(large.users)} ÷ login p50 at ${fmt(small.users)} users (target ≤ 1.2): ${scaling.loadedP50Ratio.toFixed(2)} at ${SETTINGS.connections} connections, ${scaling.oneConnectionP50Ratio.toFixed(2)} at 1 connection\n`,
  );
}
// Cost per login, the sizing guide's inputs (docs/performance.md): CPU ms of the nodes and of PostgreSQL.
const msPerLogin = (share: number, rate: number) => (share * CORES * 1000) / (rate || 1);
for (const s of sizes) {
  const m = s.oneNode;
  out.write(
    `${fmt(s.users)} users, 1 node: PostgreSQL ÷ SQLite logins/s ${(m.rate / sqliteLogin.rate).toFixed(2)} (target ≥ 0.8); per login: node ${msPerLogin(m.serverCpu, m.rate).toFixed(2)} ms CPU, PostgreSQL ${msPerLogin(m.dbCpu, m.rate).toFixed(2)} ms CPU (SQLite node: ${msPerLogin(sqliteLogin.serverCpu, sqliteLogin.rate).toFixed(2)} ms)\n`,
  );
}
for (const s of sizes) {
  const login = s.oneNode;
  const token = s.token;
  out.write(
    `${fmt(s.users)} users, 1 node, CPU ms per unit (node / PostgreSQL whole cluster / this database's backends): login ${msPerLogin(login.serverCpu, login.rate).toFixed(2)} / ${msPerLogin(login.dbCpu, login.rate).toFixed(2)} / ${msPerLogin(login.dbBackendCpu, login.rate).toFixed(2)}; token request ${msPerLogin(token.serverCpu, token.rate).toFixed(2)} / ${msPerLogin(token.dbCpu, token.rate).toFixed(2)} / ${msPerLogin(token.dbBackendCpu, token.rate).toFixed(2)} (${fmt(token.rate)} /s)\n`,
  );
}
for (const s of sizes) out.write(`seeding ${fmt(s.users)} users + ${fmt(s.seededDevices)} devices: ${s.seedSeconds.toFixed(1)}s\n`);

mkdirSync(resultsDir, { recursive: true });
const file = join(resultsDir, 'postgres.json');
writeFileSync(
  file,
  `${JSON.stringify({ date: new Date().toISOString(), machine, settings: { ...SETTINGS, devices: DEVICES }, baselineB, sqliteLogin, sizes, scaling }, null, 2)}\n`,
);
log(`wrote ${file}`);
