/**
 * The browser library's weight, against its target: service-web minified and gzipped ≤ 6 kB
 * (1 kB = 1000 bytes). Measured on the built package (npm run build first), in well under a
 * second, and printed by `npm run bench` before the load runs (alone: `npm run bench:size`).
 *
 *   whole API: an esbuild bundle of `export * from 'service-web'`, minified. Every export is
 *     kept, so whatever the package exports is counted (what an app that uses everything ships).
 *   served script: dist/service-web.global.js, the file /sdk/v1/service-web.js serves.
 *
 * gzip at level 9 and brotli at quality 11, as service-idp precompresses the served script.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { fmt, table } from './report.js';

export const WEB_GZIP_TARGET_BYTES = 6000;

export interface WebSize {
  name: string;
  minifiedBytes: number;
  gzipBytes: number;
  brotliBytes: number;
}

const webDist = join(dirname(fileURLToPath(import.meta.url)), '..', 'packages', 'web', 'dist');

const sizes = (name: string, code: Buffer): WebSize => ({
  name,
  minifiedBytes: code.length,
  gzipBytes: gzipSync(code, { level: 9 }).length,
  brotliBytes: brotliCompressSync(code, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
});

export async function measureWebSize(): Promise<WebSize[]> {
  const bundle = await build({
    stdin: { contents: `export * from ${JSON.stringify(join(webDist, 'index.js'))};`, resolveDir: webDist, loader: 'js' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  const wholeApi = Buffer.from(bundle.outputFiles[0]?.contents ?? []);
  return [
    sizes('service-web, whole API (ESM, minified)', wholeApi),
    sizes('served script (service-web.global.js)', readFileSync(join(webDist, 'service-web.global.js'))),
  ];
}

export function webSizeReport(rows: WebSize[]): string {
  return table(
    ['service-web', 'minified', 'gzip', 'brotli', 'target (gzip)', 'result'],
    rows.map((r) => [
      r.name,
      fmt(r.minifiedBytes),
      fmt(r.gzipBytes),
      fmt(r.brotliBytes),
      `≤ ${fmt(WEB_GZIP_TARGET_BYTES)}`,
      r.gzipBytes <= WEB_GZIP_TARGET_BYTES ? `pass (${fmt(WEB_GZIP_TARGET_BYTES - r.gzipBytes)} spare)` : 'over',
    ]),
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${webSizeReport(await measureWebSize())}\n(bytes; 1 kB = 1000 bytes)\n`);
}
