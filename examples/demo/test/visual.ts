/**
 * Visual and accessibility checks of the service's pages in Chromium.
 *
 * Screenshots are compared with references committed in test/screenshots/ by pixelmatch (a
 * small per-pixel threshold for anti-aliasing, and at most MAX_DIFF_RATIO of the pixels may
 * differ), so an unintended visual change fails a test. The pages bundle no web font: the
 * system stack resolves to the fonts installed (DejaVu Sans on Debian), which is why a
 * tolerance is needed at all and why the references are made on the CI machine's kind.
 *
 * To accept a change on purpose: `UPDATE_SCREENSHOTS=1 node --import tsx --test
 * examples/demo/test/hosted-visual.test.ts`, look at the new files under
 * examples/demo/test/screenshots/ (git diff shows them changed), and commit them. A missing
 * reference is written the first time and the test passes, saying so.
 *
 * axe-core runs in the page through the DevTools protocol (page.evaluate is not bound by the
 * page's CSP, so the strict policy stays as served); any serious or critical violation fails.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pixelmatch from 'pixelmatch';
import type { Locator, Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { SCREENSHOTS } from './harness.ts';

export const REFERENCES = fileURLToPath(new URL('./screenshots/', import.meta.url));
/** pixelmatch's per-pixel colour threshold (0 to 1): anti-aliasing and hinting differences pass. */
const PIXEL_THRESHOLD = 0.15;
/** The share of pixels that may differ beyond it: a moved line of text or a changed colour does not pass. */
export const MAX_DIFF_RATIO = 0.005;

export const VIEWPORTS = {
  phone: { width: 390, height: 844 },
  desktop: { width: 1280, height: 860 },
} as const;
export type Viewport = keyof typeof VIEWPORTS;
export type Theme = 'light' | 'dark';
export const SIZES = Object.keys(VIEWPORTS) as Viewport[];
export const THEMES: Theme[] = ['light', 'dark'];

/**
 * Compares the page (its viewport) with the reference `name`.png; `mask`: parts whose content
 * changes from run to run (a countdown, a time, a code), painted over in both.
 */
export async function matchesReference(page: Page, name: string, mask: Locator[] = []): Promise<void> {
  const actual = await page.screenshot({ animations: 'disabled', caret: 'hide', mask, maskColor: '#ff00ff' });
  const file = join(REFERENCES, `${name}.png`);
  if (process.env.UPDATE_SCREENSHOTS === '1' || !existsSync(file)) {
    mkdirSync(REFERENCES, { recursive: true });
    writeFileSync(file, actual);
    console.log(`screenshot reference written: ${file}`);
    return;
  }
  const expected = PNG.sync.read(readFileSync(file));
  const got = PNG.sync.read(actual);
  assert.deepEqual(
    [got.width, got.height],
    [expected.width, expected.height],
    `${name}: the screenshot's size changed (UPDATE_SCREENSHOTS=1 to accept)`,
  );
  const diff = new PNG({ width: got.width, height: got.height });
  const differing = pixelmatch(expected.data, got.data, diff.data, got.width, got.height, { threshold: PIXEL_THRESHOLD });
  const ratio = differing / (got.width * got.height);
  if (ratio > MAX_DIFF_RATIO) {
    mkdirSync(SCREENSHOTS, { recursive: true });
    const actualFile = join(SCREENSHOTS, `${name}.actual.png`);
    const diffFile = join(SCREENSHOTS, `${name}.diff.png`);
    writeFileSync(actualFile, actual);
    writeFileSync(diffFile, PNG.sync.write(diff));
    assert.fail(
      `${name}: ${(ratio * 100).toFixed(2)}% of the pixels differ from ${file} (at most ${MAX_DIFF_RATIO * 100}%); see ${actualFile} and ${diffFile}. A change on purpose: UPDATE_SCREENSHOTS=1 and commit the new reference.`,
    );
  }
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown[] }>;
}

/** Runs axe-core (WCAG 2.x A and AA rules and best practices) on the page; fails on any serious or critical violation. */
export async function assertAccessible(page: Page, what: string): Promise<void> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: AxeViolation[] }> } })
      .axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target) }));
  });
  const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(serious, [], `${what}: axe-core found serious or critical violations:\n${JSON.stringify(serious, null, 2)}`);
}

/**
 * The page at each of `sizes`, light, fonts loaded: compared with its reference `name-size`
 * (`mask`: the moving parts). Leaves the page at the desktop size.
 */
export async function shoot(page: Page, name: string, mask: Locator[] = [], sizes: Viewport[] = SIZES): Promise<void> {
  for (const size of sizes) {
    await page.setViewportSize(VIEWPORTS[size]);
    await page.emulateMedia({ colorScheme: 'light', reducedMotion: 'reduce' });
    await page.evaluate(() => document.fonts.ready.then(() => undefined));
    await matchesReference(page, `${name}-${size}`, mask);
  }
  await page.setViewportSize(VIEWPORTS.desktop);
}

/** axe-core (assertAccessible) at each size in each theme; leaves the page at the desktop size, light. */
export async function accessibleEverywhere(page: Page, name: string): Promise<void> {
  for (const size of SIZES)
    for (const colorScheme of THEMES) {
      await page.setViewportSize(VIEWPORTS[size]);
      await page.emulateMedia({ colorScheme });
      await assertAccessible(page, `${name} (${size}, ${colorScheme})`);
    }
  await page.setViewportSize(VIEWPORTS.desktop);
  await page.emulateMedia({ colorScheme: 'light' });
}
