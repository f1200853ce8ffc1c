import { defineConfig } from 'tsdown';
import { nodePackage } from '../../tsdown.node.ts';

// The published service and CLI (see tsdown.node.ts). Besides the wire contract, the delegation
// half of service-oauth-client is compiled in, so `npm install service-idp-*.tgz` needs only
// registry packages (docs/operations.md). tsc -b only type-checks (its output goes to .tsc/, so
// running it alone never leaves a half-overwritten dist/).
export default defineConfig({
  ...nodePackage(['src/index.ts', 'src/cli.ts'], [/^service-oauth-client(\/.*)?$/]),
  // The script-tag builds of service-web and their maps, served by src/http/sdk.ts (GET /sdk/v1/service-web.js and the four entries beside it).
  copy: [
    ...['service-web', 'service-web-passkeys', 'service-web-dpop', 'service-web-challenge', 'service-web-devices'].flatMap((name) => [
      { from: `../web/dist/${name}.global.js`, to: `dist/${name}.global.js` },
      { from: `../web/dist/${name}.global.js.map`, to: `dist/${name}.global.js.map` },
    ]),
    // The hosted sign-in page, built by packages/hosted (its script bundles service-web):
    // src/oidc/routes.ts reads these beside itself.
    ...['signin.html', 'signin.css', 'signin.js', 'renew.js', 'account-passkey.js'].map((file) => ({
      from: `../hosted/dist/${file}`,
      to: `dist/oidc/pages/${file}`,
    })),
    // The operator console (packages/console): src/console/routes.ts reads these beside itself.
    ...['console.js', 'console.css'].map((file) => ({ from: `../console/dist/${file}`, to: `dist/console/assets/${file}` })),
  ],
});
