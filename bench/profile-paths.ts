/**
 * Profiles the service's main thread on the two hot paths only (no baselines), for
 * docs/performance.md: a token-endpoint run and a trusted-device login run, each
 * BENCH_SECONDS long, profiles written to bench/results/profiles/{token,login}.cpuprofile,
 * plus server CPU per unit of work (all threads, from /proc).
 *   npm run build && node --import tsx bench/profile-paths.ts
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Paths } from 'service-protocol';
import { startChild } from './child.js';
import { type BenchClient, type BenchDevice, tokenExchange, trustedLogin } from './flows.js';
import { measure, SETTINGS } from './load.js';
import { newDeviceKey } from './proof.js';

const here = dirname(fileURLToPath(import.meta.url));
const profileDir = join(here, 'results', 'profiles');
mkdirSync(profileDir, { recursive: true });
const dataDir = mkdtempSync(join(tmpdir(), 'service-idp-profile-'));
const idp = await startChild(join(here, 'idp-server.ts'), [dataDir]);
const url = idp.ready.url as string;
const client = idp.ready as unknown as BenchClient;
const profiling = process.env.BENCH_CPU_PROF !== '0';
try {
  const keys = Array.from({ length: 100 }, (_, i) => ({ email: `profile-user-${i}@example.com`, key: newDeviceKey() }));
  const ids = await idp.request<string[]>('register', { devices: keys.map((k) => ({ email: k.email, publicJwk: k.key.publicJwk })) });
  const devices: BenchDevice[] = keys.map((k, i) => ({ email: k.email, deviceId: ids[i] as string, privateKey: k.key.privateKey }));
  const login = await measure(url, trustedLogin(client, devices), idp, profiling ? join(profileDir, 'login.cpuprofile') : undefined);
  const codes = await idp.request<string[]>('mint', { count: 6000 });
  const token = await measure(
    url,
    tokenExchange(client, codes, SETTINGS.connections, Paths.token),
    idp,
    profiling ? join(profileDir, 'token.cpuprofile') : undefined,
  );
  for (const [name, m] of [
    ['login', login],
    ['token', token],
  ] as const) {
    process.stdout.write(
      `${name}: ${m.rate.toFixed(0)}/s, p50 ${m.latencyP50Ms} ms, p99 ${m.latencyP99Ms} ms, failed ${m.failed}, server CPU ${m.serverCpuMsPerUnit.toFixed(2)} ms/unit, main thread ${(m.mainThreadBusy * 100).toFixed(0)}% busy = ${m.mainThreadMsPerUnit.toFixed(2)} ms/unit, other CPU ${(m.otherCpu * 100).toFixed(0)}%\n`,
    );
  }
} finally {
  await idp.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
