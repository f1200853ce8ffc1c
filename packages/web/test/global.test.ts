import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runInNewContext } from 'node:vm';
import { build } from 'esbuild';

// Bundles src/global.ts the way build:iife does and runs it in a bare context, like a <script> tag.
test('the IIFE script defines globalThis.ServiceWeb and touches no browser global while loading', async () => {
  const out = await build({
    entryPoints: [fileURLToPath(new URL('../src/global.ts', import.meta.url))],
    bundle: true,
    format: 'iife',
    target: 'es2022',
    write: false,
  });
  const code = out.outputFiles[0]!.text;
  assert.doesNotMatch(code, /service-protocol['"]/, 'the protocol package is inlined');
  const context: Record<string, unknown> = {};
  context.globalThis = context;
  runInNewContext(code, context);
  const api = context.ServiceWeb as Record<string, unknown>;
  assert.deepEqual(Object.keys(api).sort(), [
    'MfaMethod',
    'ServiceClient',
    'ServiceInitializer',
    'Status',
    'createPkcePair',
    'pkceChallengeFromVerifier',
  ]);
  assert.equal((api.Status as Record<string, string>).OTP_NEEDED, 'OTP_NEEDED');
  assert.equal((api.MfaMethod as Record<string, string>).TOTP, 'totp');
  assert.equal(typeof (api.ServiceInitializer as { init: unknown }).init, 'function');
});

// The send challenge's solver ships as its own script (service-web/challenge), outside the core's size target.
test('the challenge script defines globalThis.ServiceWebChallenge with solveChallenge, and nothing else', async () => {
  const out = await build({
    entryPoints: [fileURLToPath(new URL('../src/challenge-global.ts', import.meta.url))],
    bundle: true,
    format: 'iife',
    target: 'es2022',
    write: false,
  });
  const context: Record<string, unknown> = {};
  context.globalThis = context;
  runInNewContext(out.outputFiles[0]!.text, context);
  assert.deepEqual(Object.keys(context).sort(), ['ServiceWebChallenge', 'globalThis']);
  assert.deepEqual(Object.keys(context.ServiceWebChallenge as object), ['solveChallenge']);
});

// Device management ships as its own script (service-web/devices), outside the core's size target.
test('the devices script defines globalThis.ServiceWebDevices with ServiceDevices, and nothing else', async () => {
  const out = await build({
    entryPoints: [fileURLToPath(new URL('../src/devices-global.ts', import.meta.url))],
    bundle: true,
    format: 'iife',
    target: 'es2022',
    write: false,
  });
  const context: Record<string, unknown> = {};
  context.globalThis = context;
  runInNewContext(out.outputFiles[0]!.text, context);
  assert.deepEqual(Object.keys(context).sort(), ['ServiceWebDevices', 'globalThis']);
  assert.deepEqual(Object.keys(context.ServiceWebDevices as object), ['ServiceDevices']);
});
