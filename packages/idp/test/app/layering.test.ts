/**
 * The house's rule (docs/architecture.md): imports only point down. A wing that imports a
 * higher one grows a knot that every later feature has to cut through (the last phase ended
 * with 19 such imports and a route file calling back into the OIDC wing). Two checks over the
 * relative imports of packages/idp/src: no two top-level folders (or top-level modules) import
 * each other, and no files import each other in a circle.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const SRC = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src');
const IMPORT = /(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** file (relative to src) → the files it imports (relative to src). */
function importGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles(SRC)) {
    const from = relative(SRC, file);
    const targets = new Set<string>();
    for (const [, spec] of readFileSync(file, 'utf8').matchAll(IMPORT))
      targets.add(normalize(join(dirname(from), (spec as string).replace(/\.js$/, '.ts'))));
    graph.set(from, targets);
  }
  return graph;
}

const wing = (file: string) => file.split('/')[0] as string;

describe('imports in packages/idp/src only point down', () => {
  const graph = importGraph();

  it('no two wings import each other', () => {
    const edges = new Map<string, string>();
    for (const [from, targets] of graph)
      for (const to of targets) if (wing(from) !== wing(to)) edges.set(`${wing(from)} -> ${wing(to)}`, `${from} imports ${to}`);
    const both = [...edges.keys()]
      .filter((edge) => {
        const [a, b] = edge.split(' -> ');
        return a !== undefined && b !== undefined && a < b && edges.has(`${b} -> ${a}`);
      })
      .map((edge) => {
        const [a, b] = edge.split(' -> ');
        return `${edges.get(edge)} and ${edges.get(`${b} -> ${a}`)}`;
      });
    assert.deepEqual(both, []);
  });

  it('no files import each other in a circle', () => {
    const state = new Map<string, 'open' | 'done'>();
    const circles: string[] = [];
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        circles.push([...path.slice(path.indexOf(file)), file].join(' -> '));
        return;
      }
      state.set(file, 'open');
      for (const next of graph.get(file) ?? []) if (graph.has(next)) visit(next, [...path, file]);
      state.set(file, 'done');
    };
    for (const file of graph.keys()) visit(file, []);
    assert.deepEqual(circles, []);
  });
});

/** Every package's sources (packages/<name>/src), for the house's size and language rules. */
const PACKAGES = join(SRC, '..', '..');
const packageSources = (): string[] =>
  readdirSync(PACKAGES, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => {
      const src = join(PACKAGES, entry.name, 'src');
      try {
        return allFiles(src);
      } catch {
        return [];
      }
    });

function allFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? allFiles(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

describe('every source file of every package is short TypeScript', () => {
  const files = packageSources();

  it('no source file is over 400 lines (a newcomer reads one in a sitting; a longer one wants splitting by concept)', () => {
    const long = files
      .filter((file) => file.endsWith('.ts'))
      .map((file) => [relative(PACKAGES, file), readFileSync(file, 'utf8').split('\n').length - 1] as const)
      .filter(([, lines]) => lines > 400)
      .map(([file, lines]) => `${file}: ${lines} lines`);
    assert.deepEqual(long, []);
  });

  it('no hand-written JavaScript under packages/*/src (bundles are built into dist)', () => {
    const scripts = files.filter((file) => /\.(c|m)?js$/.test(file)).map((file) => relative(PACKAGES, file));
    assert.deepEqual(scripts, []);
  });
});
