/**
 * Summarises a V8 .cpuprofile (from BENCH_CPU_PROF=1) by self time: the top functions and the
 * share per package, so docs/performance.md can say where the service's time goes.
 *   node --import tsx bench/profile-summary.ts bench/results/profiles/CPU.*.cpuprofile [top]
 */
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

const [file, topArg] = process.argv.slice(2);
if (!file) throw new Error('usage: profile-summary.ts FILE.cpuprofile [top]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfMicros = new Map<number, number>();
profile.samples.forEach((id, i) => {
  selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
const total = [...selfMicros.values()].reduce((a, b) => a + b, 0);

/** Package (or node: internal, or the service's own dist folder) a frame belongs to. */
function area(url: string, name: string): string {
  if (!url) return name.startsWith('(') ? name : '(native)';
  const pkg = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)?.[1];
  if (pkg) return pkg;
  const own = url.match(/packages\/([^/]+)\/dist\/(?:([^/]+)\/)?/);
  if (own) return `service-${own[1]}${own[2] ? `/${own[2]}` : ''}`;
  return url.startsWith('node:') ? url : url.replace(/^.*\//, '');
}

const functions = new Map<string, number>();
const areas = new Map<string, number>();
for (const [id, micros] of selfMicros) {
  const { functionName, url, lineNumber } = (byId.get(id) as Node).callFrame;
  const where = area(url, functionName);
  functions.set(
    `${functionName || '(anonymous)'}  ${where}:${lineNumber + 1}`,
    (functions.get(`${functionName || '(anonymous)'}  ${where}:${lineNumber + 1}`) ?? 0) + micros,
  );
  areas.set(where, (areas.get(where) ?? 0) + micros);
}
const top = Number(topArg ?? 25);
const show = (title: string, map: Map<string, number>) => {
  process.stdout.write(`\n${title}\n`);
  for (const [name, micros] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    process.stdout.write(`${((micros / total) * 100).toFixed(1).padStart(5)}%  ${name}\n`);
  }
};
process.stdout.write(`${file}: ${(total / 1e6).toFixed(1)} s sampled (main thread only)\n`);
show('self time by area', areas);
show('self time by function', functions);
