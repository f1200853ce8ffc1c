import { defineConfig } from 'tsdown';

// The published service and CLI. tsc -b type-checks; this bundles what the tarball runs: the
// private service-protocol and the delegation half of service-oauth-client are inlined, so
// `npm install service-idp-*.tgz` needs only registry packages (docs/operations.md). Every
// third-party dependency stays external and is installed from package.json.
export default defineConfig({
  entry: ['src/index.ts', 'src/cli.ts'],
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  outDir: 'dist',
  clean: true,
  sourcemap: true,
  noExternal: ['service-protocol', /^service-oauth-client(\/.*)?$/],
  dts: { resolve: ['service-protocol', /^service-oauth-client(\/.*)?$/] },
  // The served single-file browser script (GET /sdk/v1/service-web.js) and its source map.
  copy: [
    { from: '../web/dist/service-web.global.js', to: 'dist/service-web.global.js' },
    { from: '../web/dist/service-web.global.js.map', to: 'dist/service-web.global.js.map' },
  ],
});
