/**
 * The house's rule (docs/architecture.md): imports only point down. A wing that imports a
 * higher one grows a knot that every later feature has to cut through (the last phase ended
 * with 19 such imports and a route file calling back into the OIDC wing). Two checks over the
 * relative imports of packages/idp/src: no two top-level folders (or top-level modules) import
 * each other, and no files import each other in a circle. And in every package: no function
 * longer than a screen of its own lines, but the named exceptions, and no hand-written JavaScript.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

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

/** A file's wing: its top-level folder (or the top-level module it is). */
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

/** Every package's sources (packages/<name>/src), for the house's function-size and language rules. */
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

/** A function's name as a reader finds it: declared, assigned to a variable, or a method or property. */
function nameOf(node: ts.FunctionLikeDeclaration): string {
  if (node.name && (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name))) return node.name.text;
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (ts.isPropertyAssignment(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  return '<anonymous>';
}

const isFunction = (node: ts.Node): node is ts.FunctionLikeDeclaration =>
  (ts.isFunctionDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node)) &&
  node.body !== undefined;

/**
 * Every function of a file with its own lines: its lines less those of the functions nested in
 * it (so a factory is judged by its own wiring, and each method it returns by its own body).
 */
function functionSizes(file: string): Array<{ name: string; own: number }> {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const lines = (node: ts.Node) =>
    source.getLineAndCharacterOfPosition(node.getEnd()).line - source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const nestedLines = (node: ts.Node): number => {
    let sum = 0;
    node.forEachChild((child) => {
      sum += isFunction(child) ? lines(child) : nestedLines(child);
    });
    return sum;
  };
  const sizes: Array<{ name: string; own: number }> = [];
  const visit = (node: ts.Node) => {
    if (isFunction(node) && node.body) sizes.push({ name: nameOf(node), own: lines(node) - nestedLines(node.body) });
    node.forEachChild(visit);
  };
  visit(source);
  return sizes;
}

/** The most lines a function may have of its own: one screen, read in one go. */
const OWN_LINES_MAX = 80;

/**
 * The functions allowed over OWN_LINES_MAX, each with why: a sequence of checks read top to
 * bottom, which split parts would scatter. An entry goes when its function is split, and the
 * test fails on an entry no longer needed.
 */
const LONG_FUNCTIONS: Record<string, string> = {
  'idp/src/config.ts#loadConfig':
    'reads each setting in turn (flag, variable, default) and refuses unsafe combinations, in the order docs/operations.md lists them',
  'idp/src/oidc/authorize-request.ts#checkAuthorizeRequest':
    "the authorization request's checks in the order RFC 6749 4.1.2.1's error rules need, read top to bottom",
};

describe('every source file of every package is TypeScript with short functions', () => {
  const files = packageSources();

  it(`no function has more than ${OWN_LINES_MAX} lines of its own, but the named exceptions`, () => {
    const long = files
      .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
      .flatMap((file) =>
        functionSizes(file)
          .filter(({ own }) => own > OWN_LINES_MAX)
          .map(({ name, own }) => ({ key: `${relative(PACKAGES, file)}#${name}`, own })),
      );
    const unexcused = long.filter(({ key }) => !(key in LONG_FUNCTIONS)).map(({ key, own }) => `${key}: ${own} lines of its own`);
    assert.deepEqual(unexcused, [], 'split these by concept (or name one in LONG_FUNCTIONS, with why)');
    const stale = Object.keys(LONG_FUNCTIONS).filter((key) => !long.some((found) => found.key === key));
    assert.deepEqual(stale, [], 'these are short now: take them out of LONG_FUNCTIONS');
  });

  // The service's own modules; a library's entry points (service-web/dpop, …) re-export its parts on purpose.
  it('no module of the service re-exports another: a name is imported from the module that declares it', () => {
    const shims = sourceFiles(SRC)
      .filter((file) => relative(SRC, file) !== 'index.ts')
      .filter((file) => /^export (?:type )?(?:\*|\{[^}]*\}) from /m.test(readFileSync(file, 'utf8')))
      .map((file) => relative(SRC, file));
    assert.deepEqual(shims, []);
  });

  it('no hand-written JavaScript under packages/*/src (bundles are built into dist)', () => {
    const scripts = files.filter((file) => /\.(c|m)?js$/.test(file)).map((file) => relative(PACKAGES, file));
    assert.deepEqual(scripts, []);
  });
});
