/**
 * `npm run bench`: throughput of the token endpoint and of a trusted-device login over
 * loopback, each beside a baseline measured in the same run on the same machine, so the
 * ratios travel between machines better than the raw numbers do.
 *
 *   token req/s ÷ raw RSA-2048 signatures/s (all cores)                       target ≥ 0.6
 *   token req/s ÷ node-oidc-provider's authorization_code exchange req/s      target ≥ 1.5
 *   logins/s    ÷ min(ES256 verifications/s on all cores, trivial route ÷ 2)  target ≥ 0.3
 *   logins/s    ÷ trivial Fastify route req/s (same client)                   reported
 *   login p99 with 50 concurrent users                                        target ≤ 20 ms
 *   verifyJwt ÷ jose jwtVerify with an imported key, per key form             target ≥ 0.91
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
import { Paths } from 'service-protocol';
import { es256VerifyRate, rsaSigningRate } from './baselines.js';
import { type ServerChild, startChild } from './child.js';
import { type BenchClient, type BenchDevice, challengeOnly, OIDC_PROVIDER_TOKEN_PATH, tokenExchange, trustedLogin } from './flows.js';
import { type Measurement, measure, SETTINGS, simple } from './load.js';
import { newDeviceKey } from './proof.js';
import { fmt, pct, table } from './report.js';
import { verifyJwtRates } from './verify-jwt.js';
import { measureWebSize, webSizeReport } from './web-size.js';

const here = dirname(fileURLToPath(import.meta.url));
const resultsDir = join(here, 'results');
const DEVICES = Number(process.env.BENCH_DEVICES ?? 200);
const RSA_SECONDS = 3;
/** Concurrent users for the login latency target (p99 ≤ 20 ms). */
const LOGIN_USERS = 50;
const started = Date.now();
const log = (line: string) => process.stderr.write(`[bench ${((Date.now() - started) / 1000).toFixed(1)}s] ${line}\n`);

log('service-web size (minified, gzip, brotli)');
const webSize = await measureWebSize();

// Baseline A first, on an idle machine.
log(`baseline A: RSA-2048 signing, ${availableParallelism()} threads × ${RSA_SECONDS}s`);
const rsa = await rsaSigningRate(RSA_SECONDS);
log(`ES256 (P-256) verification, ${availableParallelism()} threads × ${RSA_SECONDS}s`);
const es256 = await es256VerifyRate(RSA_SECONDS);

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
  log(`service: trusted-device login with ${LOGIN_USERS} concurrent users (latency)`);
  const login50 = await measure(url, trustedLogin(client, devices), idp, undefined, LOGIN_USERS);

  log('service: token endpoint (minting codes first)');
  const token = await measureTokenEndpoint(idp, client, Paths.token, profile('token'));
  log('service: token endpoint, ES256 and EdDSA clients');
  const tokenEs256 = await measureTokenEndpoint(idp, JSON.parse(idp.ready.es256 as string), Paths.token, undefined, 'ES256');
  const tokenEdDsa = await measureTokenEndpoint(idp, JSON.parse(idp.ready.eddsa as string), Paths.token, undefined, 'EdDSA');
  results = { baselineB, healthz, challenge, login, login50, token, tokenEs256, tokenEdDsa };
} finally {
  await idp.stop();
  rmSync(dataDir, { recursive: true, force: true });
}

log('node-oidc-provider: authorization_code exchange, RS256 ID token + access token (minting codes first)');
const oidcProvider = await startChild(join(here, 'oidc-provider-server.ts'), []);
try {
  results.oidcProvider = await measureTokenEndpoint(oidcProvider, oidcProvider.ready as unknown as BenchClient, OIDC_PROVIDER_TOKEN_PATH);
} finally {
  await oidcProvider.stop();
}

const { token, login, login50, oidcProvider: oidc } = results as Record<'token' | 'login' | 'login50' | 'oidcProvider', Measurement>;
/** The physical limit of a device-proof login: every login verifies one ES256 proof and makes two requests. */
const loginLimit = Math.min(es256.rate, baselineB.rate / 2);
const rows = [
  {
    measurement: 'POST /oauth/token req/s',
    value: token.rate,
    baseline: rsa.rate,
    baselineName: 'RSA-2048 signs/s, all cores',
    target: 0.6,
  },
  {
    measurement: 'POST /oauth/token req/s',
    value: token.rate,
    baseline: oidc.rate,
    baselineName: 'node-oidc-provider token req/s',
    target: 1.5,
  },
  {
    measurement: 'trusted-device logins/s',
    value: login.rate,
    baseline: loginLimit,
    baselineName: `min(ES256 verifies/s ${fmt(es256.rate)}, trivial ÷ 2)`,
    target: 0.3,
  },
  {
    measurement: 'trusted-device logins/s',
    value: login.rate,
    baseline: baselineB.rate,
    baselineName: 'trivial route req/s',
    target: undefined,
  },
].map((r) => ({ ...r, ratio: r.value / r.baseline, pass: r.target === undefined ? undefined : r.value / r.baseline >= r.target }));
const loginP99Pass = login50.latencyP99Ms <= 20;

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
  const mintOptions = alg ? { alg } : {};
  const warmCodes = await server.request<string[]>('mint', { count: 3000, ...mintOptions });
  codesMinted += warmCodes.length;
  const url = server.ready.url as string;
  const warm = await measure(url, tokenExchange(credentials, warmCodes, SETTINGS.connections, path), server);
  const needed = Math.min(40_000, Math.ceil(warm.rate * SETTINGS.durationSeconds * 1.5) + SETTINGS.connections);
  const mintStart = Date.now();
  const codes = await server.request<string[]>('mint', { count: needed, ...mintOptions });
  codesMinted += codes.length;
  log(`minted ${codes.length} codes in ${((Date.now() - mintStart) / 1000).toFixed(1)}s`);
  return measure(url, tokenExchange(credentials, codes, SETTINGS.connections, path), server, profileFile);
}

const out = process.stdout;
out.write(`\n${webSizeReport(webSize)}\n(bytes; 1 kB = 1000 bytes)\n`);
out.write(`\nservice-idp benchmark — ${machine.cores} cores, ${machine.cpu}, Node ${machine.node}\n`);
out.write(
  `autocannon: ${SETTINGS.connections} connections, pipelining ${SETTINGS.pipelining}, ${SETTINGS.warmupSeconds}s warm-up + ${SETTINGS.durationSeconds}s measured per run\n\n`,
);
out.write(
  `${table(
    ['measurement', 'value', 'baseline', 'ratio', 'target', 'result'],
    [
      ...rows.map((r) => [
        r.measurement,
        fmt(r.value),
        `${fmt(r.baseline)} (${r.baselineName})`,
        r.ratio.toFixed(3),
        r.target === undefined ? '(reported)' : `≥ ${r.target}`,
        r.pass === undefined ? '' : r.pass ? 'pass' : 'below',
      ]),
      [`login p99 at ${LOGIN_USERS} users`, `${fmt(login50.latencyP99Ms, 1)} ms`, '–', '–', '≤ 20 ms', loginP99Pass ? 'pass' : 'above'],
    ],
  )}\n\n`,
);
const named: [string, Measurement][] = [
  ['B: trivial Fastify GET /', baselineB],
  ['service GET /healthz', results.healthz as Measurement],
  ['POST /v1/device-challenges', results.challenge as Measurement],
  ['trusted-device login (2 requests)', login],
  [`trusted-device login, ${LOGIN_USERS} connections`, login50],
  ['POST /oauth/token', token],
  ['POST /oauth/token, ES256 ID token', results.tokenEs256 as Measurement],
  ['POST /oauth/token, EdDSA ID token', results.tokenEdDsa as Measurement],
  ['node-oidc-provider POST /token', oidc],
];
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
  `CPU shares are of the whole machine (${machine.cores} cores = 100%); "other" is any other process busy meanwhile. "server ms/unit": the server's CPU (all threads) per unit; "main busy": its event loop's busy share. RSA-2048 signs/s per thread: ${rsa.perCore.map((r) => fmt(r)).join(', ')}; ES256 verifies/s per thread: ${es256.perCore.map((r) => fmt(r)).join(', ')}.\n`,
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

mkdirSync(resultsDir, { recursive: true });
const file = join(resultsDir, 'latest.json');
writeFileSync(
  file,
  `${JSON.stringify(
    {
      date: new Date().toISOString(),
      machine,
      settings: { ...SETTINGS, devices: DEVICES, rsaSeconds: RSA_SECONDS, codesMinted },
      baselines: { rsaSigning: rsa, es256Verify: es256, trivialRoute: baselineB, loginLimit },
      targets: [
        ...rows,
        { measurement: `login p99 ms at ${LOGIN_USERS} users`, value: login50.latencyP99Ms, target: 20, pass: loginP99Pass },
      ],
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
