/**
 * `npm run bench:client-credentials`: the client_credentials grant alone, the service beside
 * node-oidc-provider (each an RS256 JWT access token for one API, client_secret_post), one run
 * each; the full `npm run bench` has the same runs in its interleaved rounds. BENCH_SECONDS
 * and BENCH_CONNECTIONS as there (e.g. BENCH_SECONDS=2 for a quick check of the flows).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startChild } from './child.js';
import { type BenchMachine, clientCredentialsGrant } from './flows.js';
import { measure } from './load.js';
import { fmt, table } from './report.js';

const here = dirname(fileURLToPath(import.meta.url));
const dataDir = mkdtempSync(join(tmpdir(), 'service-idp-bench-'));
const idp = await startChild(join(here, 'idp-server.ts'), [dataDir]);
const oidcProvider = await startChild(join(here, 'oidc-provider-server.ts'), []);
try {
  const service = await measure(
    idp.ready.url as string,
    clientCredentialsGrant(JSON.parse(idp.ready.machine as string) as BenchMachine),
    idp,
  );
  const other = await measure(
    oidcProvider.ready.url as string,
    clientCredentialsGrant(JSON.parse(oidcProvider.ready.machine as string) as BenchMachine, '/token'),
    oidcProvider,
  );
  process.stdout.write(
    `${table(
      ['run', 'req/s', 'p50 ms', 'p99 ms', 'failed'],
      [
        [
          'POST /oauth/token, client_credentials',
          fmt(service.rate),
          fmt(service.latencyP50Ms, 1),
          fmt(service.latencyP99Ms, 1),
          String(service.failed),
        ],
        [
          'node-oidc-provider POST /token, client_credentials',
          fmt(other.rate),
          fmt(other.latencyP50Ms, 1),
          fmt(other.latencyP99Ms, 1),
          String(other.failed),
        ],
      ],
    )}\nclient credentials req/s ÷ node-oidc-provider client_credentials req/s: ${(service.rate / other.rate).toFixed(3)}\n`,
  );
} finally {
  await Promise.all([idp.stop(), oidcProvider.stop()]);
  rmSync(dataDir, { recursive: true, force: true });
}
