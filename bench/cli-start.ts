/**
 * How fast the CLI starts, as ratios against a bare `node -e 0` measured in the same run (issue
 * #22's targets: `--help` ≤ 3×, a data command, `clients list`, ≤ 6×). Each command runs
 * RUNS times, alternating with the baseline so a busy machine slows both alike; the median of
 * each is compared. On the built package (npm run build first), against a scratch data folder.
 * Alone: `npm run bench:cli`; `npm run bench` prints it before the load runs.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { table } from './report.js';

const RUNS = 11;
const bin = join(dirname(fileURLToPath(import.meta.url)), '..', 'packages', 'idp', 'bin', 'service-idp.js');

export interface CliStart {
  name: string;
  medianMs: number;
  baselineMs: number;
  target: number;
}

function timeOnce(args: string[]): number {
  const start = process.hrtime.bigint();
  const run = spawnSync(process.execPath, args, { stdio: 'ignore' });
  if (run.status !== 0) throw new Error(`node ${args.join(' ')} exited ${run.status}`);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

export function measureCliStart(): CliStart[] {
  const data = mkdtempSync(join(tmpdir(), 'cli-start-'));
  try {
    execFileSync(process.execPath, [bin, 'clients', 'create', '--name', 'Bench', '--origin', 'http://localhost:5173', '--data', data], {
      stdio: 'ignore',
    });
    const commands: [string, string[], number][] = [
      ['service-idp --help', [bin, '--help'], 3],
      ['service-idp clients list', [bin, 'clients', 'list', '--data', data], 6],
    ];
    return commands.map(([name, args, target]) => {
      const times: number[] = [];
      const baseline: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        baseline.push(timeOnce(['-e', '0']));
        times.push(timeOnce(args));
      }
      return { name, medianMs: median(times), baselineMs: median(baseline), target };
    });
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
}

export function cliStartReport(rows: CliStart[]): string {
  return table(
    ['CLI start', 'median ms', 'node -e 0 ms', 'ratio', 'target', 'result'],
    rows.map((r) => {
      const ratio = r.medianMs / r.baselineMs;
      return [
        r.name,
        r.medianMs.toFixed(0),
        r.baselineMs.toFixed(0),
        `${ratio.toFixed(1)}×`,
        `≤ ${r.target}×`,
        ratio <= r.target ? 'pass' : 'over',
      ];
    }),
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${cliStartReport(measureCliStart())}\n`);
}
