/**
 * Docs and code agree on every limit and lifetime: each constant of defaults.ts is a row of
 * docs/security.md section 3 with the value the code has. A constant added without its row, or a
 * value changed without the doc, fails here.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import * as defaults from '../../src/defaults.ts';

const doc = readFileSync(new URL('../../../../docs/security.md', import.meta.url), 'utf8');
const section = doc.slice(doc.indexOf('## 3. Limits and lifetimes'));

/** constant → the value its row shows (a row may hold several, `A` / `B` with `1 / 2`). */
function documentedValues(): Map<string, string> {
  const values = new Map<string, string>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim());
    const names = [...(cells[2] ?? '').matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((match) => match[1] as string);
    if (names.length === 0) continue;
    // The value cell: one value per constant, `/`-separated, each maybe followed by a parenthesis.
    const shown = (cells[3] ?? '').split(' / ').map((value) =>
      value
        .replace(/\s*\(.*\)$/, '')
        .replace(/[`']/g, '')
        .trim(),
    );
    for (const [index, name] of names.entries()) values.set(name, shown[names.length === 1 ? 0 : index] ?? '');
  }
  return values;
}

describe('docs/security.md "Limits and lifetimes" matches defaults.ts', () => {
  const documented = documentedValues();
  const constants = Object.entries(defaults);

  it('names every constant of defaults.ts', () => {
    const missing = constants.map(([name]) => name).filter((name) => !documented.has(name) && !section.includes(`\`${name}\``));
    assert.deepEqual(missing, [], 'constants with no row in docs/security.md section 3');
  });

  it('shows each number and text constant with the value the code has', () => {
    const differing = constants
      .filter(([, value]) => typeof value === 'number' || typeof value === 'string')
      .filter(([name, value]) => documented.has(name) && documented.get(name) !== String(value))
      .map(([name, value]) => `${name}: code ${value}, doc ${documented.get(name)}`);
    assert.deepEqual(differing, []);
  });

  it('shows each rate limit with its windows', () => {
    const isWindows = (value: unknown): value is ReadonlyArray<{ max: number; windowSeconds: number }> =>
      Array.isArray(value) && value.every((window) => typeof window?.max === 'number' && typeof window?.windowSeconds === 'number');
    const differing = constants
      .filter((entry): entry is [string, ReadonlyArray<{ max: number; windowSeconds: number }>] => isWindows(entry[1]))
      .map(([name, windows]) => [name, windows.map((w) => `${w.max} per ${w.windowSeconds} s`).join(', ')] as const)
      .filter(([name, shown]) => documented.get(name) !== shown)
      .map(([name, shown]) => `${name}: code ${shown}, doc ${documented.get(name)}`);
    assert.deepEqual(differing, []);
  });
});
