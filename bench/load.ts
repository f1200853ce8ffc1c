/**
 * One load generator for every HTTP measurement: autocannon, in the benchmark's own main
 * thread, with the same connections, pipelining, warm-up and duration everywhere. It is the
 * leanest client at hand (raw sockets, a hand-written HTTP parser), which matters because it
 * shares the 2 cores with the server.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import autocannon, { type Request, type Result } from 'autocannon';
import type { ServerChild } from './child.js';

export const SETTINGS = {
  connections: Number(process.env.BENCH_CONNECTIONS ?? 16),
  pipelining: 1,
  warmupSeconds: Number(process.env.BENCH_WARMUP_SECONDS ?? 1),
  durationSeconds: Number(process.env.BENCH_SECONDS ?? 6),
};

/** What one run builds: fresh request definitions and the tally of completed units of work. */
export interface Workload {
  requests: Request[];
  /** Units completed (requests, or logins for a multi-request flow) and units that failed. */
  tally(result: Result): { ok: number; failed: number };
  /** Caps the run by count as well as time (e.g. the number of single-use codes at hand). */
  maxRequests?: number;
}

export interface Measurement {
  /** Completed units per second over the measured run. */
  rate: number;
  ok: number;
  failed: number;
  seconds: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  /** Shares of the whole machine (all cores = 1) used by the load generator and by the server. */
  clientCpu: number;
  serverCpu: number;
  /** Everything else busy on the machine meanwhile (other processes: the machine may be shared). */
  otherCpu: number;
  /** Share of the machine idle while waiting for disk I/O (SQLite fsyncs show up here). */
  ioWait: number;
  /** The server's main thread: busy share of the run, and busy milliseconds per unit of work. */
  mainThreadBusy: number;
  mainThreadMsPerUnit: number;
  /** Server CPU (all its threads) in milliseconds per unit of work. */
  serverCpuMsPerUnit: number;
}

/** Machine-wide jiffies from /proc/stat: busy (not idle, not iowait), iowait, and total. */
function machineTicks() {
  const [, ...fields] = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/);
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = fields.map(Number);
  const total = user + nice + system + idle + iowait + irq + softirq + steal;
  return { busy: total - idle - iowait, iowait, total };
}

const CORES = (await import('node:os')).availableParallelism();

/** One autocannon run of `workload`, stopped early when the workload caps its requests (minted codes). */
export function once(url: string, workload: Workload, seconds: number, connections: number): Promise<Result> {
  return autocannon({
    url,
    connections,
    pipelining: SETTINGS.pipelining,
    duration: seconds,
    requests: workload.requests,
    ...(workload.maxRequests !== undefined ? { maxOverallRequests: workload.maxRequests } : {}),
  });
}

/** A short unmeasured warm-up (JIT, connection set-up, caches), then the measured run. */
export async function measure(
  url: string,
  build: () => Workload,
  server: ServerChild,
  profileFile?: string,
  connections = SETTINGS.connections,
): Promise<Measurement> {
  if (SETTINGS.warmupSeconds > 0) await once(url, build(), SETTINGS.warmupSeconds, connections);
  const workload = build();
  if (profileFile) await server.request('profileStart');
  await server.request('eluStart');
  const clientBefore = process.cpuUsage();
  const serverBefore = server.cpuSeconds();
  const machineBefore = machineTicks();
  const started = performance.now();
  const result = await once(url, workload, SETTINGS.durationSeconds, connections);
  const seconds = (performance.now() - started) / 1000;
  const client = process.cpuUsage(clientBefore);
  const serverSeconds = server.cpuSeconds() - serverBefore;
  const machineAfter = machineTicks();
  const mainThreadBusy = await server.request<number>('eluStop');
  if (profileFile) await server.request('profileStop', { file: profileFile });
  const { ok, failed } = workload.tally(result);
  const machineTotal = machineAfter.total - machineBefore.total || 1;
  const clientCpu = (client.user + client.system) / 1e6 / seconds / CORES;
  const serverCpu = serverSeconds / seconds / CORES;
  return {
    rate: ok / seconds,
    ok,
    failed: failed + result.errors + result.timeouts,
    seconds,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    clientCpu,
    serverCpu,
    otherCpu: Math.max(0, (machineAfter.busy - machineBefore.busy) / machineTotal - clientCpu - serverCpu),
    ioWait: (machineAfter.iowait - machineBefore.iowait) / machineTotal,
    mainThreadBusy,
    mainThreadMsPerUnit: (mainThreadBusy * seconds * 1000) / (ok || 1),
    serverCpuMsPerUnit: (serverSeconds * 1000) / (ok || 1),
  };
}

/** A fixed request; every 2xx response is one unit. */
export function simple(request: Request): () => Workload {
  return () => ({ requests: [request], tally: (r) => ({ ok: r['2xx'], failed: r.non2xx }) });
}
