/**
 * The runners (package.json test:prebuilt, test:pg:prebuilt) find test files by shell globs,
 * which reach a fixed depth: a test file put anywhere else would silently never run. Every
 * `*.test.ts` under packages/idp/test sits in a wing folder (test/<wing>/ or
 * test/<wing>/<part>/), and the other packages keep theirs flat.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const PACKAGES = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

describe('every test file is where the runners look', () => {
  it('idp tests one or two folders below test/, the other packages flat', () => {
    const misplaced = readdirSync(PACKAGES).flatMap((name) => {
      const root = join(PACKAGES, name, 'test');
      let files: string[];
      try {
        files = testFiles(root);
      } catch {
        return [];
      }
      const allowed = name === 'idp' ? [2, 3] : [1];
      return files.map((file) => relative(root, file)).filter((file) => !allowed.includes(file.split(sep).length));
    });
    assert.deepEqual(misplaced, []);
  });
});
