import { defineConfig } from 'tsdown';

// The published ESM entry and its .d.ts, with the private service-protocol inlined into both:
// service-web ships with no runtime dependencies. The IIFE script is built by esbuild (build:global).
export default defineConfig({
  entry: ['src/index.ts'],
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  outDir: 'dist',
  // Removes tsc -b's per-file output too, so dist holds only the bundled files.
  clean: true,
  sourcemap: true,
  noExternal: ['service-protocol'],
  dts: { resolve: ['service-protocol'] },
});
