/**
 * `npm run bench`: throughput of the token endpoint and of a trusted-device login over
 * loopback, each beside a baseline measured in the same run on the same machine, so the
 * ratios travel between machines better than the raw numbers do.
 *
 *   token req/s ÷ baseline A (raw RSA-2048 signatures/s, all cores)      target ≥ 0.6
 *   logins/s    ÷ baseline B (trivial Fastify route req/s, same client)  target ≥ 0.15
 *
 * First, the browser library's weight (bench/web-size.ts): bytes, minified + gzip ≤ 6 kB.
 *
 * Environment: BENCH_SECONDS (measured run, default 6), BENCH_WARMUP_SECONDS (1),
 * BENCH_CONNECTIONS (16), BENCH_DEVICES (200), BENCH_CPU_PROF=1 (profile the service child
 * during each measured run into bench/results/profiles/NAME.cpuprofile; read them with
 * bench/profile-summary.ts).
 *
 * With SERVICE_TEST_DATABASE_URL set, the PostgreSQL run (bench/postgres.ts) follows.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rsaSigningRate } from './baselines.js';
import { startChild } from './child.js';
import { type BenchClient, type BenchDevice, challengeOnly, tokenExchange, trustedLogin } from './flows.js';
import { type Measurement, measure, SETTINGS, simple } from './load.js';
import { newDeviceKey } from './proof.js';
import { fmt, pct, table } from './report.js';
import { verifyJwtRates } from './verify-jwt.js';
import { measureWebSize, webSizeReport } from './web-size.js';

const here = dirname(fileURLToPath(import.meta.url));
const resultsDir = join(here, 'results');
const DEVICES = Number(process.env.BENCH_DEVICES ?? 200);
const RSA_SECONDS = 3;
const started = Date.now();
const log = (line: string) => process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(1)}s] ${line}\n`);

log('service-web size (minified, gzip, brotli)');
const webSize = await measureWebSize();

// Baseline A first, on an idle machine.
log(`baseline A: RSA-2048 signing, ${availableParallelism()} threads × ${RSA_SECONDS}s`);
const rsa = await rsaSigningRate(RSA_SECONDS);

log('verifyJwt against jose with an imported key (in process)');
const verify = await verifyJwtRates();

log('baseline B: trivial Fastify route');
const trivial = await startChild(join(here, 'trivial-server.ts'), []);
const baselineB = await measure(trivial.ready.url as string, simple({ method: 'GET', path: '/' }), trivial);
await trivial.stop();

const dataDir = mkdtempSync(join(tmpdir(), 'service-idp-bench-'));
const profileDir = join(resultsDir, 'profiles');
const profiling = process.env.BENCH_CPU_PROF === '1';
if (profiling) mkdirSync(profileDir, { recursive: true });
const idp = await startChild(join(here, 'idp-server.ts'), [dataDir]);
/** Where the service's profile of a measured run goes, when profiling. */
const profile = (name: string) => (profiling ? join(profileDir, `${name}.cpuprofile`) : undefined);
const url = idp.ready.url as string;
const client = idp.ready as unknown as BenchClient;

let results: Record<string, Measurement>;
let codesMinted = 0;
try {
  log(`registering ${DEVICES} devices (keys held by the benchmark)`);
  const keys = Array.from({ length: DEVICES }, (_, i) => ({ email: `bench-user-${i}@example.com`, key: newDeviceKey() }));
  const ids = await idp.request<string[]>('register', { devices: keys.map((k) => ({ email: k.email, publicJwk: k.key.publicJwk })) });
  const devices: BenchDevice[] = keys.map((k, i) => ({ email: k.email, deviceId: ids[i] as string, privateKey: k.key.privateKey }));

  log('service: GET /healthz (service HTTP stack, no work)');
  const healthz = await measure(url, simple({ method: 'GET', path: '/healthz' }), idp, profile('healthz'));
  log('service: POST /v1/device-challenges alone');
  const challenge = await measure(url, challengeOnly(client), idp, profile('challenge'));
  log('service: trusted-device login (challenge + ES256 proof + authenticate)');
  const login = await measure(url, trustedLogin(client, devices), idp, profile('login'));

  // Codes live AUTH_CODE_TTL_SECONDS (60 s): mint just before use, sized from the warm-up rate.
  log('service: token endpoint (minting codes first)');
  const warmCodes = await idp.request<string[]>('mint', { count: 3000 });
  codesMinted += warmCodes.length;
  const warm = await measure(url, tokenExchange(client, warmCodes, SETTINGS.connections), idp);
  const needed = Math.min(40_000, Math.ceil(warm.rate * SETTINGS.durationSeconds * 1.5) + SETTINGS.connections);
  const mintStart = Date.now();
  const codes = await idp.request<string[]>('mint', { count: needed });
  codesMinted += codes.length;
  log(`minted ${codes.length} codes in ${((Date.now() - mintStart) / 1000).toFixed(1)}s`);
  const token = await measure(url, tokenExchange(client, codes, SETTINGS.connections), idp, profile('token'));
  results = { baselineB, healthz, challenge, login, token };
} finally {
  await idp.stop();
  rmSync(dataDir, { recursive: true, force: true });
}

const { token, login } = results as Record<'token' | 'login', Measurement>;
const rows = [
  { measurement: 'token endpoint req/s', value: token.rate, baseline: rsa.rate, baselineName: 'A: RSA-2048 signs/s', target: 0.6 },
  {
    measurement: 'trusted-device logins/s',
    value: login.rate,
    baseline: baselineB.rate,
    baselineName: 'B: trivial route req/s',
    target: 0.15,
  },
].map((r) => ({ ...r, ratio: r.value / r.baseline, pass: r.value / r.baseline >= r.target }));

const machine = {
  cores: availableParallelism(),
  cpu: cpus()[0]?.model ?? 'unknown',
  node: process.version,
  platform: `${process.platform} ${process.arch}`,
};
const out = process.stdout;
out.write(`\n${webSizeReport(webSize)}\n(bytes; 1 kB = 1000 bytes)\n`);
out.write(`\nservice-idp benchmark — ${machine.cores} cores, ${machine.cpu}, Node ${machine.node}\n`);
out.write(
  `autocannon: ${SETTINGS.connections} connections, pipelining ${SETTINGS.pipelining}, ${SETTINGS.warmupSeconds}s warm-up + ${SETTINGS.durationSeconds}s measured per run\n\n`,
);
out.write(
  `${table(
    ['measurement', 'value', 'baseline', 'ratio', 'target', 'result'],
    rows.map((r) => [
      r.measurement,
      fmt(r.value),
      `${fmt(r.baseline)} (${r.baselineName})`,
      r.ratio.toFixed(3),
      `≥ ${r.target}`,
      r.pass ? 'pass' : 'below',
    ]),
  )}\n\n`,
);
const named: [string, Measurement][] = [
  ['B: trivial Fastify GET /', baselineB],
  ['service GET /healthz', results.healthz as Measurement],
  ['POST /v1/device-challenges', results.challenge as Measurement],
  ['trusted-device login (2 requests)', login],
  ['POST /oauth/token', token],
];
out.write(
  `${table(
    ['run', 'units/s', 'p50 ms', 'p99 ms', 'failed', 'client CPU', 'server CPU', 'other CPU', 'iowait'],
    named.map(([name, m]) => [
      name,
      fmt(m.rate),
      fmt(m.latencyP50Ms, 1),
      fmt(m.latencyP99Ms, 1),
      String(m.failed),
      pct(m.clientCpu),
      pct(m.serverCpu),
      pct(m.otherCpu),
      pct(m.ioWait),
    ]),
  )}\n`,
);
out.write(
  `CPU shares are of the whole machine (${machine.cores} cores = 100%); "other" is any other process busy meanwhile. Baseline A per thread: ${rsa.perCore.map((r) => fmt(r)).join(', ')} signs/s.\n`,
);

const joseBest = Math.max(verify.jose.c1, verify.jose.c32);
out.write(
  `\nverifyJwt (RS256, audience and issuer checked) vs jose jwtVerify with an imported key: ${fmt(verify.jose.c1)}/s one at a time, ${fmt(verify.jose.c32)}/s with 32 in flight\n${table(
    ['key form', 'verifyJwt/s', 'vs jose best', 'target', 'result'],
    Object.entries(verify.forms).map(([form, rate]) => [
      form,
      fmt(rate),
      (rate / joseBest).toFixed(2),
      '≥ 0.91',
      rate / joseBest >= 1 / 1.1 ? 'pass' : 'below',
    ]),
  )}\n`,
);

mkdirSync(resultsDir, { recursive: true });
const file = join(resultsDir, 'latest.json');
writeFileSync(
  file,
  `${JSON.stringify(
    {
      date: new Date().toISOString(),
      machine,
      settings: { ...SETTINGS, devices: DEVICES, rsaSeconds: RSA_SECONDS, codesMinted },
      baselines: { rsaSigning: rsa, trivialRoute: baselineB },
      targets: rows.map(({ baselineName: _, ...r }) => r),
      runs: results,
      webSize,
      verifyJwt: verify,
      packageVersion: JSON.parse(readFileSync(join(here, '..', 'packages', 'idp', 'package.json'), 'utf8')).version,
    },
    null,
    2,
  )}\n`,
);
log(`wrote ${file}`);

// The PostgreSQL run (bench/postgres.ts) when a server is at hand: eval "$(bash .ci/postgres.sh start)".
if (process.env.SERVICE_TEST_DATABASE_URL) {
  log('PostgreSQL run (SERVICE_TEST_DATABASE_URL is set): bench/postgres.ts');
  await import('./postgres.js');
}
