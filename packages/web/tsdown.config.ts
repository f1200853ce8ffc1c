import { defineConfig } from 'tsdown';

// The published ESM and CommonJS entries and their .d.ts / .d.cts, with the private
// service-protocol inlined into each: service-web ships with no runtime dependencies. The
// CommonJS copy serves `require('service-web')` (Jest, older bundlers); see the README for the
// one caveat (an app that loads both copies has two ServiceInitializer instances).
// The IIFE script is built by esbuild (build:iife).
export default defineConfig({
  entry: ['src/index.ts', 'src/passkeys.ts', 'src/dpop.ts', 'src/upstream.ts', 'src/account.ts', 'src/challenge.ts', 'src/devices.ts'],
  format: ['esm', 'cjs'],
  platform: 'browser',
  target: 'es2022',
  outDir: 'dist',
  // tsc -b only type-checks this package (its output goes to .tsc/): dist/ is tsdown's alone.
  clean: true,
  sourcemap: true,
  noExternal: ['service-protocol'],
  dts: { resolve: ['service-protocol'] },
});
