/**
 * Issue 22's guard: every package's source is TypeScript. A hand-written JavaScript file under
 * packages/<name>/src (the hosted page's script once was one) fails here; built output lives in
 * dist/ and .tsc/, never in src/.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const PACKAGES = fileURLToPath(new URL('../..', import.meta.url));
const JAVASCRIPT = /\.(?:js|mjs|cjs|jsx)$/;

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

describe('package sources', () => {
  it('has no hand-written JavaScript under packages/*/src', () => {
    const sources = readdirSync(PACKAGES, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .flatMap((entry) => {
        const src = join(PACKAGES, entry.name, 'src');
        try {
          return filesUnder(src);
        } catch {
          return [];
        }
      });
    assert.ok(
      sources.some((file) => file.endsWith('.ts')),
      `no sources found under ${PACKAGES}`,
    );
    assert.deepEqual(
      sources.filter((file) => JAVASCRIPT.test(file)).map((file) => relative(PACKAGES, file)),
      [],
    );
  });
});
