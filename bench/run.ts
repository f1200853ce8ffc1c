/**
 * `npm run bench`: throughput of the token endpoint and of a trusted-device login over
 * loopback, each beside a baseline measured in the same run on the same machine, so the
 * ratios travel between machines better than the raw numbers do.
 *
 *   token req/s ÷ raw RSA-2048 signatures/s (all cores)                       target ≥ 0.6
 *   token req/s ÷ node-oidc-provider's authorization_code exchange req/s      target ≥ 1.6
 *   client_credentials req/s ÷ node-oidc-provider's client_credentials req/s  reported
 *   client_credentials req/s ÷ the code grant's token req/s                   reported
 *   logins/s    ÷ the login floor's logins/s, 16 connections                  target ≥ 0.65
 *   logins/s    ÷ the login floor's logins/s, 50 connections                  target ≥ 0.65
 *   server CPU per login ÷ the floor's                                        target ≤ 1.5
 *   login p99 at 50 connections ÷ the floor's                                 target ≤ 1.5
 *   logins/s    ÷ min(ES256 verifications/s on all cores, trivial route ÷ 2)  reported
 *   logins/s    ÷ trivial Fastify route req/s (same client)                   reported
 *   verifyJwt ÷ jose jwtVerify with an imported key, per key form             target ≥ 0.91
 *
 * The login floor (bench/login-floor-server.ts) is the least a secure trusted-device login
 * does on our stack: the same two routes, one ES256 verification, one WAL transaction.
 *
 * First, the browser library's weight (bench/web-size.ts): bytes, minified + gzip ≤ 6 kB.
 *
 * Environment: BENCH_SECONDS (measured run, default 6), BENCH_WARMUP_SECONDS (1),
 * BENCH_CONNECTIONS (16), BENCH_DEVICES (200), BENCH_ROUNDS (3: each target is the median of
 * the rounds' ratios), BENCH_CPU_PROF=1 (profile the service child during the last round's
 * measured runs into bench/results/profiles/NAME.cpuprofile; read them with
 * bench/profile-summary.ts).
 *
 * Then the cold starts and the soak (bench/soak.ts; BENCH_SOAK=0 skips them, BENCH_SOAK_SECONDS
 * sets the soak's length), and with SERVICE_TEST_DATABASE_URL set, the PostgreSQL run
 * (bench/postgres.ts).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Paths } from 'service-protocol';
import { es256VerifyRate, rsaSigningRate } from './baselines.js';
import { botnetReport, runBotnet } from './botnet.js';
import { type ServerChild, startChild } from './child.js';
import { cliStartReport, measureCliStart } from './cli-start.js';
import {
  type BenchClient,
  type BenchDevice,
  type BenchMachine,
  challengeOnly,
  clientCredentialsGrant,
  OIDC_PROVIDER_TOKEN_PATH,
  tokenExchange,
  trustedLogin,
} from './flows.js';
import { type Measurement, measure, SETTINGS, simple } from './load.js';
import { newDeviceKey } from './proof.js';
import { fmt, pct, table } from './report.js';
import { verifyJwtRates } from './verify-jwt.js';
import { measureWebSize, webSizeReport } from './web-size.js';

const here = dirname(fileURLToPath(import.meta.url));
const resultsDir = join(here, 'results');
const DEVICES = Number(process.env.BENCH_DEVICES ?? 200);
const RSA_SECONDS = 3;
/** The most authorization codes minted for one token-endpoint run (minting costs set-up time). */
const MAX_CODES = 48_000;
/**
 * The fewest codes minted for a measured token run: a warm-up slowed by a burst of other load
 * once sized a batch at a tenth of the measured rate, which then ran out of codes and measured
 * "code unknown" failures (the ES256 run, 3 /s with 12,623 failures).
 */
const MIN_CODES = 12_000;
/** Concurrent users for the login latency target (p99 ≤ 20 ms). */
const LOGIN_USERS = 50;
const started = Date.now();
const log = (line: string) => process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(1)}s] ${line}\n`);

log('service-web size (minified, gzip, brotli)');
const webSize = await measureWebSize();
log('CLI start (ratios against node -e 0)');
const cliStart = measureCliStart();

/**
 * Rounds of the whole set of measurements: every target is the median over the rounds of the
 * ratio measured within one round, so a burst of load from another process moves one round's
 * value and not the result. The rounds are interleaved (baselines, then the service, then
 * node-oidc-provider, again), never all baselines first.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const dataDir = mkdtempSync(join(tmpdir(), 'service-idp-bench-'));
const profileDir = join(resultsDir, 'profiles');
const profiling = process.env.BENCH_CPU_PROF === '1';
if (profiling) mkdirSync(profileDir, { recursive: true });
/** Where the service's profile of a measured run goes, when profiling (the last round's). */
const profile = (name: string) => (profiling ? join(profileDir, `${name}.cpuprofile`) : undefined);

log('verifyJwt against jose with an imported key (in process, three interleaved rounds of its own)');
const verify = await verifyJwtRates();

const trivial = await startChild(join(here, 'trivial-server.ts'), []);
const idp = await startChild(join(here, 'idp-server.ts'), [dataDir]);
const oidcProvider = await startChild(join(here, 'oidc-provider-server.ts'), []);
const floor = await startChild(join(here, 'login-floor-server.ts'), []);
const url = idp.ready.url as string;
const client = idp.ready as unknown as BenchClient;

type RunName =
  | 'baselineB'
  | 'healthz'
  | 'challenge'
  | 'login'
  | 'login50'
  | 'floor'
  | 'floor50'
  | 'token'
  | 'tokenEs256'
  | 'tokenEdDsa'
  | 'oidcProvider'
  | 'clientCredentials'
  | 'oidcProviderClientCredentials';
interface Round {
  rsa: Awaited<ReturnType<typeof rsaSigningRate>>;
  es256: Awaited<ReturnType<typeof es256VerifyRate>>;
  runs: Record<RunName, Measurement>;
}
const rounds: Round[] = [];
let codesMinted = 0;
try {
  log(`registering ${DEVICES} devices (keys held by the benchmark)`);
  const keys = Array.from({ length: DEVICES }, (_, i) => ({ email: `bench-user-${i}@example.com`, key: newDeviceKey() }));
  const ids = await idp.request<string[]>('register', { devices: keys.map((k) => ({ email: k.email, publicJwk: k.key.publicJwk })) });
  const devices: BenchDevice[] = keys.map((k, i) => ({ email: k.email, deviceId: ids[i] as string, privateKey: k.key.privateKey }));
  const floorIds = await floor.request<string[]>('register', {
    devices: keys.map((k) => ({ email: k.email, publicJwk: k.key.publicJwk })),
  });
  const floorDevices: BenchDevice[] = keys.map((k, i) => ({
    email: k.email,
    deviceId: floorIds[i] as string,
    privateKey: k.key.privateKey,
  }));
  const floorUrl = floor.ready.url as string;

  for (let n = 1; n <= ROUNDS; n++) {
    const last = n === ROUNDS;
    const step = (what: string) => log(`round ${n}/${ROUNDS}: ${what}`);
    // The crypto baselines first in each round, while every server is idle.
    step(`baseline A: RSA-2048 signing, ${availableParallelism()} threads × ${RSA_SECONDS}s`);
    const rsa = await rsaSigningRate(RSA_SECONDS);
    step(`ES256 (P-256) verification, ${availableParallelism()} threads × ${RSA_SECONDS}s`);
    const es256 = await es256VerifyRate(RSA_SECONDS);
    step('baseline B: trivial Fastify route');
    const baselineB = await measure(trivial.ready.url as string, simple({ method: 'GET', path: '/' }), trivial);
    step('service: GET /healthz (service HTTP stack, no work)');
    const healthz = await measure(url, simple({ method: 'GET', path: '/healthz' }), idp, last ? profile('healthz') : undefined);
    step('service: POST /v1/device-challenges alone');
    const challenge = await measure(url, challengeOnly(client), idp, last ? profile('challenge') : undefined);
    step('login floor: the same two requests, one ES256 verification, one WAL transaction');
    const floorRun = await measure(floorUrl, trustedLogin(client, floorDevices), floor);
    step(`login floor with ${LOGIN_USERS} concurrent users`);
    const floor50 = await measure(floorUrl, trustedLogin(client, floorDevices), floor, undefined, LOGIN_USERS);
    step('service: trusted-device login (challenge + ES256 proof + authenticate)');
    const login = await measure(url, trustedLogin(client, devices), idp, last ? profile('login') : undefined);
    step(`service: trusted-device login with ${LOGIN_USERS} concurrent users (latency)`);
    const login50 = await measure(url, trustedLogin(client, devices), idp, undefined, LOGIN_USERS);
    step('service: token endpoint (minting codes first)');
    const token = await measureTokenEndpoint(idp, client, Paths.token, last ? profile('token') : undefined);
    step('service: token endpoint, ES256 and EdDSA clients');
    const tokenEs256 = await measureTokenEndpoint(idp, JSON.parse(idp.ready.es256 as string), Paths.token, undefined, 'ES256');
    const tokenEdDsa = await measureTokenEndpoint(idp, JSON.parse(idp.ready.eddsa as string), Paths.token, undefined, 'EdDSA');
    step('node-oidc-provider: authorization_code exchange, RS256 ID token + access token (minting codes first)');
    const oidc = await measureTokenEndpoint(oidcProvider, oidcProvider.ready as unknown as BenchClient, OIDC_PROVIDER_TOKEN_PATH);
    step('service: client_credentials grant (machine client, RS256 JWT access token for an API)');
    const clientCredentials = await measure(
      url,
      clientCredentialsGrant(JSON.parse(idp.ready.machine as string) as BenchMachine),
      idp,
      last ? profile('client-credentials') : undefined,
    );
    step('node-oidc-provider: client_credentials grant (RS256 JWT access token for an API)');
    const oidcProviderClientCredentials = await measure(
      oidcProvider.ready.url as string,
      clientCredentialsGrant(JSON.parse(oidcProvider.ready.machine as string) as BenchMachine, OIDC_PROVIDER_TOKEN_PATH),
      oidcProvider,
    );
    rounds.push({
      rsa,
      es256,
      runs: {
        baselineB,
        healthz,
        challenge,
        login,
        login50,
        floor: floorRun,
        floor50,
        token,
        tokenEs256,
        tokenEdDsa,
        oidcProvider: oidc,
        clientCredentials,
        oidcProviderClientCredentials,
      },
    });
  }
} finally {
  await Promise.all([trivial.stop(), idp.stop(), oidcProvider.stop(), floor.stop()]);
  rmSync(dataDir, { recursive: true, force: true });
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};
/** The run of the round whose rate is the median: its latencies and CPU shares belong together. */
const medianRun = (name: RunName): Measurement => {
  const byRate = rounds.map((r) => r.runs[name]).sort((a, b) => a.rate - b.rate);
  return byRate[(byRate.length - 1) >> 1] as Measurement;
};
/** The physical limit of a device-proof login: every login verifies one ES256 proof and makes two requests. */
const loginLimit = (r: Round) => Math.min(r.es256.rate, r.runs.baselineB.rate / 2);
/** A target is a floor on the ratio (`≥`), or a ceiling (`≤`) for costs and latencies. */
interface Target {
  measurement: string;
  value(r: Round): number;
  baseline(r: Round): number;
  baselineName: string;
  target?: number;
  atMost?: true;
}
const targets: Target[] = [
  {
    measurement: 'POST /oauth/token req/s',
    value: (r) => r.runs.token.rate,
    baseline: (r) => r.rsa.rate,
    baselineName: 'RSA-2048 signs/s, all cores',
    target: 0.6,
  },
  {
    measurement: 'POST /oauth/token req/s',
    value: (r) => r.runs.token.rate,
    baseline: (r) => r.runs.oidcProvider.rate,
    baselineName: 'node-oidc-provider token req/s',
    target: 1.6,
  },
  {
    measurement: 'client_credentials req/s',
    value: (r) => r.runs.clientCredentials.rate,
    baseline: (r) => r.runs.oidcProviderClientCredentials.rate,
    baselineName: 'node-oidc-provider client_credentials req/s',
  },
  {
    measurement: 'client_credentials req/s',
    value: (r) => r.runs.clientCredentials.rate,
    baseline: (r) => r.runs.token.rate,
    baselineName: 'POST /oauth/token (code grant) req/s',
  },
  {
    measurement: `trusted-device logins/s, ${SETTINGS.connections} connections`,
    value: (r) => r.runs.login.rate,
    baseline: (r) => r.runs.floor.rate,
    baselineName: 'login floor logins/s',
    target: 0.65,
  },
  {
    measurement: `trusted-device logins/s, ${LOGIN_USERS} connections`,
    value: (r) => r.runs.login50.rate,
    baseline: (r) => r.runs.floor50.rate,
    baselineName: 'login floor logins/s',
    target: 0.65,
  },
  {
    measurement: 'server CPU ms per login',
    value: (r) => r.runs.login.serverCpuMsPerUnit,
    baseline: (r) => r.runs.floor.serverCpuMsPerUnit,
    baselineName: "the floor's CPU ms per login",
    target: 1.5,
    atMost: true,
  },
  {
    measurement: `login p99 ms, ${LOGIN_USERS} connections`,
    value: (r) => r.runs.login50.latencyP99Ms,
    baseline: (r) => r.runs.floor50.latencyP99Ms,
    baselineName: "the floor's p99 ms",
    target: 1.5,
    atMost: true,
  },
  {
    measurement: 'trusted-device logins/s',
    value: (r) => r.runs.login.rate,
    baseline: loginLimit,
    baselineName: 'min(ES256 verifies/s, trivial ÷ 2)',
  },
  {
    measurement: 'trusted-device logins/s',
    value: (r) => r.runs.login.rate,
    baseline: (r) => r.runs.baselineB.rate,
    baselineName: 'trivial route req/s',
  },
];
const rows = targets.map((t) => {
  const ratios = rounds.map((r) => t.value(r) / t.baseline(r));
  const ratio = median(ratios);
  return {
    measurement: t.measurement,
    value: median(rounds.map(t.value)),
    baseline: median(rounds.map(t.baseline)),
    baselineName: t.baselineName,
    target: t.target,
    atMost: t.atMost ?? false,
    ratios,
    spread: [Math.min(...ratios), Math.max(...ratios)],
    ratio,
    pass: t.target === undefined ? undefined : t.atMost ? ratio <= t.target : ratio >= t.target,
  };
});
const results = Object.fromEntries((Object.keys(rounds[0]?.runs ?? {}) as RunName[]).map((name) => [name, medianRun(name)])) as Record<
  RunName,
  Measurement
>;

const machine = {
  cores: availableParallelism(),
  cpu: cpus()[0]?.model ?? 'unknown',
  node: process.version,
  platform: `${process.platform} ${process.arch}`,
};
/**
 * A token endpoint run. Codes live 60 s (AUTH_CODE_TTL_SECONDS, and oidc-provider's default),
 * so they are minted just before use: a warm-up batch first, whose rate sizes the measured one.
 */
async function measureTokenEndpoint(server: ServerChild, credentials: BenchClient, path: string, profileFile?: string, alg?: string) {
  const mint = async (count: number) => {
    const codes = await server.request<string[]>('mint', { count, ...(alg ? { alg } : {}) });
    codesMinted += codes.length;
    return codes;
  };
  const url = server.ready.url as string;
  const exchange = (codes: string[]) => tokenExchange(credentials, codes, SETTINGS.connections, path);
  // A first run sizes the supply of single-use codes for the measured one. Its own warm-up must
  // not use up its codes (a fast algorithm did, at 3,000: the run then measured "code unknown"
  // failures), so the batch doubles until a run completes without a failure.
  let rate = 0;
  for (let batch = 3000; ; batch *= 2) {
    const warmCodes = await mint(batch);
    const warm = await measure(url, exchange(warmCodes), server);
    if (warm.failed === 0 && warm.ok > 0) {
      rate = warm.rate;
      break;
    }
    if (batch >= MAX_CODES) throw new Error(`the token endpoint failed ${warm.failed} of ${warm.ok + warm.failed} exchanges`);
  }
  const needed = Math.min(
    MAX_CODES,
    Math.max(MIN_CODES, Math.ceil(rate * (SETTINGS.warmupSeconds + SETTINGS.durationSeconds) * 1.5) + SETTINGS.connections),
  );
  const mintStart = Date.now();
  const codes = await mint(needed);
  log(`minted ${codes.length} codes in ${((Date.now() - mintStart) / 1000).toFixed(1)}s`);
  return measure(url, exchange(codes), server, profileFile);
}

const out = process.stdout;
out.write(`\n${webSizeReport(webSize)}\n(bytes; 1 kB = 1000 bytes)\n`);
out.write(`\n${cliStartReport(cliStart)}\n`);
out.write(`\nservice-idp benchmark — ${machine.cores} cores, ${machine.cpu}, Node ${machine.node}\n`);
out.write(
  `autocannon: ${SETTINGS.connections} connections, pipelining ${SETTINGS.pipelining}, ${SETTINGS.warmupSeconds}s warm-up + ${SETTINGS.durationSeconds}s measured per run; ${rounds.length} interleaved rounds, each ratio the median of the rounds' ratios\n\n`,
);
out.write(
  `${table(
    ['measurement', 'value (median)', 'baseline (median)', 'ratio (median)', 'spread', 'ratio per round', 'target', 'result'],
    rows.map((r) => [
      r.measurement,
      fmt(r.value, r.value < 100 ? 2 : 0),
      `${fmt(r.baseline, r.baseline < 100 ? 2 : 0)} (${r.baselineName})`,
      r.ratio.toFixed(3),
      `${r.spread[0]?.toFixed(3)}–${r.spread[1]?.toFixed(3)}`,
      r.ratios.map((x) => x.toFixed(3)).join(' '),
      r.target === undefined ? '(reported)' : `${r.atMost ? '≤' : '≥'} ${r.target}`,
      r.pass === undefined ? '' : r.pass ? 'pass' : r.atMost ? 'above' : 'below',
    ]),
  )}\n\n`,
);
const named: [string, Measurement][] = [
  ['B: trivial Fastify GET /', results.baselineB],
  ['service GET /healthz', results.healthz],
  ['POST /v1/device-challenges', results.challenge],
  ['trusted-device login (2 requests)', results.login],
  [`trusted-device login, ${LOGIN_USERS} connections`, results.login50],
  ['login floor (2 requests)', results.floor],
  [`login floor, ${LOGIN_USERS} connections`, results.floor50],
  ['POST /oauth/token', results.token],
  ['POST /oauth/token, ES256 ID token', results.tokenEs256],
  ['POST /oauth/token, EdDSA ID token', results.tokenEdDsa],
  ['node-oidc-provider POST /token', results.oidcProvider],
  ['POST /oauth/token, client_credentials', results.clientCredentials],
  ['node-oidc-provider POST /token, client_credentials', results.oidcProviderClientCredentials],
];
out.write('Each run below is the round whose rate is the median of its rounds.\n');
out.write(
  `${table(
    ['run', 'units/s', 'p50 ms', 'p99 ms', 'failed', 'client CPU', 'server CPU', 'other CPU', 'iowait', 'server ms/unit', 'main busy'],
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
      fmt(m.serverCpuMsPerUnit, 2),
      pct(m.mainThreadBusy),
    ]),
  )}\n`,
);
out.write(
  `CPU shares are of the whole machine (${machine.cores} cores = 100%); "other" is any other process busy meanwhile. "server ms/unit": the server's CPU (all threads) per unit; "main busy": its event loop's busy share. RSA-2048 signs/s, all threads, per round: ${rounds.map((r) => fmt(r.rsa.rate)).join(', ')}; ES256 verifies/s, all threads, per round: ${rounds.map((r) => fmt(r.es256.rate)).join(', ')}.\n`,
);

out.write(
  `\nverifyJwt (RS256, audience and issuer checked) vs jose jwtVerify with an imported key: ${fmt(verify.jose.c1)}/s one at a time, ${fmt(verify.jose.c32)}/s with 32 in flight\n${table(
    ['key form', 'verifyJwt/s', 'ratio to jose best (median of rounds)', 'target', 'result'],
    Object.entries(verify.forms).map(([form, rate]) => {
      const ratio = verify.ratios[form] as number;
      return [form, fmt(rate), ratio.toFixed(2), '≥ 0.91', ratio >= 1 / 1.1 ? 'pass' : 'below'];
    }),
  )}\n`,
);

// Last, on its own service: a botnet at the code sender (issue 41), bounded by the budgets.
log('botnet at the code sender (its own service, loopback sources)');
const botnet = await runBotnet();
out.write(`\n${botnetReport(botnet)}`);

mkdirSync(resultsDir, { recursive: true });
const file = join(resultsDir, 'latest.json');
writeFileSync(
  file,
  `${JSON.stringify(
    {
      date: new Date().toISOString(),
      machine,
      settings: { ...SETTINGS, devices: DEVICES, rsaSeconds: RSA_SECONDS, rounds: rounds.length, codesMinted },
      targets: rows,
      medianRuns: results,
      rounds: rounds.map((r) => ({ rsaSigning: r.rsa, es256Verify: r.es256, loginLimit: loginLimit(r), runs: r.runs })),
      webSize,
      cliStart,
      verifyJwt: verify,
      botnet,
      packageVersion: JSON.parse(readFileSync(join(here, '..', 'packages', 'idp', 'package.json'), 'utf8')).version,
    },
    null,
    2,
  )}\n`,
);
log(`wrote ${file}`);

// Under time (bench/soak.ts): cold starts and a 3-minute steady login load; BENCH_SOAK=0 skips it.
if (process.env.BENCH_SOAK !== '0') {
  log(`under time: cold starts, then a ${process.env.BENCH_SOAK_SECONDS ?? 180}-s soak (BENCH_SOAK=0 skips it)`);
  await (await import('./soak.js')).underTime();
}

// The PostgreSQL run (bench/postgres.ts) when a server is at hand: eval "$(bash .ci/postgres.sh start)".
if (process.env.SERVICE_TEST_DATABASE_URL) {
  log('PostgreSQL run (SERVICE_TEST_DATABASE_URL is set): bench/postgres.ts');
  await import('./postgres.js');
}
