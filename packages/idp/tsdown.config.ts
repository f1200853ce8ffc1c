import { defineConfig } from 'tsdown';

// The published service and CLI. tsc -b type-checks (its output goes to .tsc/, so running it
// alone never leaves a half-overwritten dist/); this builds what the tarball runs, module
// by module (unbundle: dist/ mirrors src/ for stack traces and bench profiles). The private
// service-protocol and the delegation half of service-oauth-client are compiled in as files
// under dist/, so `npm install service-idp-*.tgz` needs only registry packages
// (docs/operations.md). Every third-party dependency stays external, installed from package.json.
export default defineConfig({
  entry: ['src/index.ts', 'src/cli.ts'],
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  outDir: 'dist',
  clean: true,
  unbundle: true,
  sourcemap: true,
  noExternal: ['service-protocol', /^service-oauth-client(\/.*)?$/],
  dts: { resolve: ['service-protocol', /^service-oauth-client(\/.*)?$/] },
  // The script-tag build of service-web and its map, served by src/http/sdk.ts (GET /sdk/v1/service-web.js).
  copy: [
    { from: '../web/dist/service-web.global.js', to: 'dist/service-web.global.js' },
    { from: '../web/dist/service-web.global.js.map', to: 'dist/service-web.global.js.map' },
  ],
});
