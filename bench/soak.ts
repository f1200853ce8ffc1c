/**
 * Under time: a steady trusted-device login load for BENCH_SOAK_SECONDS (default 180) against
 * one service process, sampling its RSS and event-loop delay every 10 s, then the slope of
 * each (least squares) and the failed logins; and the cold start of the real CLI
 * (`service-idp start`) to its first answered /healthz, on a fresh data folder and on the same
 * folder again. Loopback only.
 *   npm run build && node --import tsx bench/soak.ts
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { startChild } from './child.js';
import { type BenchClient, type BenchDevice, trustedLogin } from './flows.js';
import { newDeviceKey } from './proof.js';

const here = dirname(fileURLToPath(import.meta.url));
const SOAK_SECONDS = Number(process.env.BENCH_SOAK_SECONDS ?? 180);
const SAMPLE_SECONDS = 10;
/** Steady, not saturating: a fixed number of logins per second (2 requests each). */
const LOGINS_PER_SECOND = Number(process.env.BENCH_SOAK_RATE ?? 300);

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

function slope(points: [number, number][]): number {
  const n = points.length;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  const num = points.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0);
  const den = points.reduce((a, [x]) => a + (x - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}

export async function soak() {
  const dataDir = mkdtempSync(join(tmpdir(), 'service-idp-soak-'));
  const idp = await startChild(join(here, 'idp-server.ts'), [dataDir]);
  try {
    const keys = Array.from({ length: 100 }, (_, i) => ({ email: `soak-${i}@example.com`, key: newDeviceKey() }));
    const ids = await idp.request<string[]>('register', { devices: keys.map((k) => ({ email: k.email, publicJwk: k.key.publicJwk })) });
    const devices: BenchDevice[] = keys.map((k, i) => ({ email: k.email, deviceId: ids[i] as string, privateKey: k.key.privateKey }));
    const workload = trustedLogin(idp.ready as unknown as BenchClient, devices)();
    const samples: { t: number; rssMb: number; delayP99Ms: number; delayMeanMs: number }[] = [];
    await idp.request('delayStart');
    const started = Date.now();
    const timer = setInterval(async () => {
      const delay = await idp.request<{ p99: number; mean: number }>('delaySample');
      samples.push({ t: (Date.now() - started) / 1000, rssMb: rssMb(idp.pid), delayP99Ms: delay.p99, delayMeanMs: delay.mean });
    }, SAMPLE_SECONDS * 1000);
    const result = await autocannon({
      url: idp.ready.url as string,
      connections: 8,
      // overallRate counts requests; a login is two.
      overallRate: LOGINS_PER_SECOND * 2,
      duration: SOAK_SECONDS,
      requests: workload.requests,
    });
    clearInterval(timer);
    const { ok, failed } = workload.tally(result);
    const perMinute = (values: [number, number][]) => slope(values) * 60;
    return {
      seconds: SOAK_SECONDS,
      targetLoginsPerSecond: LOGINS_PER_SECOND,
      logins: ok,
      failed: failed + result.errors + result.timeouts + result.non2xx,
      samples,
      rssSlopeMbPerMinute: perMinute(samples.map((s) => [s.t, s.rssMb])),
      delayP99SlopeMsPerMinute: perMinute(samples.map((s) => [s.t, s.delayP99Ms])),
      delayMeanSlopeMsPerMinute: perMinute(samples.map((s) => [s.t, s.delayMeanMs])),
    };
  } finally {
    await idp.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Milliseconds from spawning `service-idp start` to its first 200 on /healthz. */
async function coldStart(dataDir: string): Promise<number> {
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [join(here, '..', 'packages', 'idp', 'bin', 'service-idp.js'), 'start', '--data', dataDir, '--port', String(port)],
    {
      stdio: 'ignore',
      env: { ...process.env, SERVICE_IDP_LOG_LEVEL: 'warn' },
    },
  );
  try {
    for (;;) {
      if (performance.now() - started > 30_000) throw new Error('service-idp did not answer /healthz within 30 s');
      try {
        const response = await fetch(`http://127.0.0.1:${port}/healthz`);
        if (response.status === 200) return performance.now() - started;
      } catch {
        // not listening yet
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

export async function coldStarts() {
  const dataDir = mkdtempSync(join(tmpdir(), 'service-idp-cold-'));
  try {
    const fresh = await coldStart(dataDir);
    const reused = [await coldStart(dataDir), await coldStart(dataDir), await coldStart(dataDir)].sort((a, b) => a - b)[1] as number;
    return { freshMs: fresh, reusedMs: reused };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Cold starts, then the soak, printed: `npm run bench` ends with this too (BENCH_SOAK=0 leaves it out). */
export async function underTime() {
  const cold = await coldStarts();
  process.stdout.write(
    `\ncold start to first /healthz: fresh data folder ${cold.freshMs.toFixed(0)} ms, reused ${cold.reusedMs.toFixed(0)} ms (median of 3)\n`,
  );
  const result = await soak();
  for (const s of result.samples) {
    process.stdout.write(
      `  t=${s.t.toFixed(0)}s  RSS ${s.rssMb.toFixed(1)} MB  event-loop delay p99 ${s.delayP99Ms.toFixed(1)} ms, mean ${s.delayMeanMs.toFixed(2)} ms\n`,
    );
  }
  process.stdout.write(
    `soak: ${result.seconds} s at ${result.targetLoginsPerSecond} logins/s: ${result.logins} logins, ${result.failed} failed; RSS slope ${result.rssSlopeMbPerMinute.toFixed(2)} MB/min, event-loop delay slope p99 ${result.delayP99SlopeMsPerMinute.toFixed(2)} ms/min, mean ${result.delayMeanSlopeMsPerMinute.toFixed(2)} ms/min\n`,
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await underTime();
