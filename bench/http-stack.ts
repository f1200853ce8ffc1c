/**
 * What the HTTP stack costs per request on a JSON route (docs/performance.md, "Where the time
 * goes now"). Two parts, each in interleaved rounds (every variant once per round, then again),
 * each figure a median over the rounds of a ratio taken within one round:
 *
 * 1. A trivial Fastify route (`GET /` → `{"status":"ok"}`), bare and with one per-request
 *    piece of the service's stack added (bench/http-piece-server.ts): rate ÷ the bare route's
 *    rate, and the piece's server CPU per request minus the bare route's.
 * 2. With BENCH_BEFORE=DIR (a copy of packages/idp with its dist/ built from an earlier commit):
 *    the service's `GET /healthz` and `POST /v1/device-challenges` on that build and on this
 *    checkout's, as after ÷ before.
 *
 * Environment: BENCH_SECONDS (measured run, default 4), BENCH_WARMUP_SECONDS (1),
 * BENCH_CONNECTIONS (16), BENCH_ROUNDS (3), BENCH_PIECES (comma list; default all),
 * BENCH_PARTS (`pieces,service`). Needs `npm run build`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ServerChild, startChild } from './child.js';
import { type BenchClient, challengeOnly } from './flows.js';
import { type Measurement, measure, SETTINGS, simple } from './load.js';
import { fmt, table } from './report.js';

const here = dirname(fileURLToPath(import.meta.url));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
if (!process.env.BENCH_SECONDS) SETTINGS.durationSeconds = 4;
const PARTS = (process.env.BENCH_PARTS ?? 'pieces,service').split(',');
const log = (line: string) => process.stderr.write(`[http-stack] ${line}\n`);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
const usPerRequest = (m: Measurement) => m.serverCpuMsPerUnit * 1000;

async function rounds(variants: { name: string; start(): Promise<ServerChild>; run(child: ServerChild): Promise<Measurement> }[]) {
  const results = new Map<string, Measurement[]>(variants.map((v) => [v.name, []]));
  for (let round = 1; round <= ROUNDS; round += 1) {
    for (const variant of variants) {
      const child = await variant.start();
      try {
        const m = await variant.run(child);
        log(
          `round ${round} ${variant.name}: ${fmt(m.rate)} req/s, ${fmt(usPerRequest(m), 1)} µs server CPU/req, other CPU ${fmt(m.otherCpu * 100)}%`,
        );
        results.get(variant.name)?.push(m);
      } finally {
        await child.stop();
      }
    }
  }
  return results;
}

if (PARTS.includes('pieces')) {
  const all = [
    'bare',
    'response-schema',
    'helmet-plugin',
    'helmet-headers-once',
    'onSend-async-cache-control',
    'onRequest-async-noop',
    'onRequest-callback-noop',
    'async-local-storage',
    'metrics-onResponse-async',
    'logger-info',
  ];
  const pieces = process.env.BENCH_PIECES ? ['bare', ...process.env.BENCH_PIECES.split(',').filter((p) => p !== 'bare')] : all;
  const results = await rounds(
    pieces.map((piece) => ({
      name: piece,
      start: () => startChild(join(here, 'http-piece-server.ts'), [piece]),
      run: (child) => measure(child.ready.url as string, simple({ method: 'GET', path: '/' }), child),
    })),
  );
  const bare = results.get('bare') ?? [];
  const rows = pieces.map((piece) => {
    const runs = results.get(piece) ?? [];
    const ratio = median(runs.map((m, i) => m.rate / (bare[i]?.rate ?? Number.NaN)));
    const extra = median(runs.map((m, i) => usPerRequest(m) - usPerRequest(bare[i] as Measurement)));
    return [piece, fmt(median(runs.map((m) => m.rate))), fmt(ratio, 2), fmt(median(runs.map(usPerRequest)), 1), fmt(extra, 1)];
  });
  process.stdout.write(
    `\nPer-request pieces on a trivial route (${ROUNDS} rounds × ${SETTINGS.durationSeconds} s, ${SETTINGS.connections} connections; medians)\n`,
  );
  process.stdout.write(`${table(['piece', 'req/s', '÷ bare (same round)', 'server CPU µs/req', '− bare µs/req'], rows)}\n`);
}

if (PARTS.includes('service') && process.env.BENCH_BEFORE) {
  const builds = { before: process.env.BENCH_BEFORE, after: join(here, '..', 'packages', 'idp') };
  const dataDirs: string[] = [];
  const startBuild = (dir: string) => () => {
    const data = mkdtempSync(join(tmpdir(), 'service-idp-http-stack-'));
    dataDirs.push(data);
    return startChild(join(here, 'http-service-server.ts'), [dir, data]);
  };
  const workloads = {
    'GET /healthz': () => simple({ method: 'GET', path: '/healthz' }),
    'POST /v1/device-challenges': (child: ServerChild) => challengeOnly(child.ready as unknown as BenchClient),
  };
  const variants = Object.entries(workloads).flatMap(([route, build]) =>
    Object.entries(builds).map(([label, dir]) => ({
      name: `${route} ${label}`,
      start: startBuild(dir),
      run: (child: ServerChild) => measure(child.ready.url as string, build(child), child),
    })),
  );
  try {
    const results = await rounds(variants);
    const rows = Object.keys(workloads).map((route) => {
      const before = results.get(`${route} before`) ?? [];
      const after = results.get(`${route} after`) ?? [];
      return [
        route,
        fmt(median(before.map((m) => m.rate))),
        fmt(median(after.map((m) => m.rate))),
        fmt(median(after.map((m, i) => m.rate / (before[i]?.rate ?? Number.NaN))), 2),
        fmt(median(before.map(usPerRequest)), 1),
        fmt(median(after.map(usPerRequest)), 1),
        fmt(median(after.map((m, i) => usPerRequest(m) / usPerRequest(before[i] as Measurement))), 2),
      ];
    });
    process.stdout.write(`\nThe service, before (${builds.before}) and after (this checkout), same rounds (medians)\n`);
    process.stdout.write(
      `${table(['route', 'before req/s', 'after req/s', 'after ÷ before', 'before µs CPU/req', 'after µs CPU/req', 'CPU after ÷ before'], rows)}\n`,
    );
  } finally {
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  }
}
