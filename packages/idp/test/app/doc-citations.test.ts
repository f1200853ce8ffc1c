/**
 * Docs a newcomer can follow (issue 35): every repository path cited in `docs/` and the READMEs
 * (in backticks, outside code blocks) names a file or folder that exists, and every limit a doc
 * cites by its constant's name (`…_SECONDS`, `…_MAX`, …) is exported by a package's source
 * (most by a `defaults.ts`; the wire's own, such as the delegation envelope's, by the protocol). The
 * last phase left docs citing folders that had moved (`test/login/`, `test/registration/`):
 * a rename now fails here instead of leaving a reader lost.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const PACKAGES = readdirSync(join(ROOT, 'packages'));

/** The docs: every page of docs/ (its how-to guides too), the front README and each package's. */
const DOCS = [
  ...readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.md'))
    .map((file) => `docs/${file}`),
  'README.md',
  ...PACKAGES.map((name) => `packages/${name}/README.md`).filter((file) => existsSync(join(ROOT, file))),
];

/**
 * Where a cited path may start: the repository, a package (its src/ and test/ too; the service's
 * wings are cited from its src/, its tests from its test/, factors by their folder), the demo.
 */
const BASES = [
  '',
  'packages',
  ...PACKAGES.flatMap((name) => [`packages/${name}`, `packages/${name}/src`, `packages/${name}/test`]),
  'packages/idp/src/factors',
  'examples/demo',
  'examples/demo/test',
  'docs',
];

/**
 * Paths that are not the repository's: a running service's data folder, the benchmarks' and the
 * browser suite's output (ignored by git, so absent from a clean clone), the shared spec beside the checkout.
 */
const NOT_IN_REPOSITORY = /^(data|bench\/results|test-results|spec)\//;

/** A backticked path: slash-separated names ending in a file type the repository holds, or a folder's slash. */
const PATH = /^[\w.@-]+(\/[\w.@-]+)*\/$|^[\w.@-]+(\/[\w.@-]+)+$/;
const FILE_OR_FOLDER = /\.(ts|md|json|ya?ml|sh|conf|html|css|service)$|\/$/;

/** A limit's constant as defaults.ts names them (environment variables are SERVICE_…, BENCH_…, and are not constants). */
const LIMIT_NAME =
  /^(?!SERVICE_|BENCH_|DEMO_)[A-Z][A-Z0-9]*(_[A-Z0-9]+)*_(SECONDS|MS|MINUTES|HOURS|DAYS|MAX|MIN|LENGTH|BYTES|SIZE|LIMIT|ATTEMPTS|COUNT|PER_[A-Z_]+)$/;

/** Each backticked token of a doc, outside fenced code blocks (a sample's paths are the reader's, not ours). */
function citations(doc: string): string[] {
  const text = readFileSync(join(ROOT, doc), 'utf8').replace(/```[\s\S]*?```/g, '');
  return [...text.matchAll(/`([^`\s]+)`/g)].map((match) => match[1] ?? '');
}

/** Every constant a package's source exports. */
function exportedConstants(): Set<string> {
  const names = new Set<string>();
  const visit = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (entry.name.endsWith('.ts'))
        for (const match of readFileSync(path, 'utf8').matchAll(/export const (\w+)/g)) names.add(match[1] ?? '');
    }
  };
  for (const name of PACKAGES) if (existsSync(join(ROOT, 'packages', name, 'src'))) visit(join(ROOT, 'packages', name, 'src'));
  return names;
}

describe('what docs/ and the READMEs cite exists', () => {
  it('every repository path', () => {
    const missing = DOCS.flatMap((doc) =>
      citations(doc)
        .filter((token) => PATH.test(token) && FILE_OR_FOLDER.test(token) && !NOT_IN_REPOSITORY.test(token))
        .filter((token) => !BASES.some((base) => existsSync(join(ROOT, base, token.replace(/\/$/, '')))))
        .map((token) => `${doc}: ${token}`),
    );
    assert.deepEqual([...new Set(missing)], []);
  });

  it("every folder and file of docs/repository.md's layout", () => {
    // The layout is a code block: each line names paths under the package its indentation sits in.
    const layout = /```\n([\s\S]*?)```/.exec(readFileSync(join(ROOT, 'docs/repository.md'), 'utf8'))?.[1] ?? '';
    let base = '';
    const missing: string[] = [];
    for (const line of layout.split('\n')) {
      const [names = ''] = line.trim().split(/ {2,}/);
      if (!line.startsWith(' ')) base = '';
      for (const name of names.split(/,? /).filter((n) => /^[\w.-]+(\/[\w.-]*)*$/.test(n) && (n.includes('/') || n.endsWith('.ts')))) {
        const path =
          line.startsWith(' ') && !name.startsWith('src/') && !name.startsWith('test/')
            ? `${base}/src/${name}`
            : `${base ? `${base}/` : ''}${name}`;
        if (!existsSync(join(ROOT, path.replace(/\/$/, '')))) missing.push(path);
      }
      if (!line.startsWith(' ')) base = names;
    }
    assert.deepEqual(missing, []);
  });

  it("every limit cited by its constant's name", () => {
    const names = exportedConstants();
    const missing = DOCS.flatMap((doc) =>
      citations(doc)
        .filter((token) => LIMIT_NAME.test(token) && !names.has(token))
        .map((token) => `${doc}: ${token}`),
    );
    assert.deepEqual([...new Set(missing)], []);
  });
});
