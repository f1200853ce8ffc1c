import { defineConfig } from 'tsdown';

// The published library, module by module (unbundle: dist/ mirrors src/, so the two entry points
// stay dist/index.js and dist/delegation/index.js). The wire contract (service-protocol, the
// delegation envelope's names and claims) is compiled in under dist/, so the tarball installs with
// jose and @types/node alone. tsc -b writes dist/ first (service-idp's project reference reads
// its .d.ts there); this build then replaces it, file for file.
export default defineConfig({
  entry: ['src/index.ts', 'src/delegation/index.ts'],
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  outDir: 'dist',
  clean: true,
  unbundle: true,
  sourcemap: true,
  noExternal: ['service-protocol'],
  dts: { resolve: ['service-protocol'] },
});
