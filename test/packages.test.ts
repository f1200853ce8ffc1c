/**
 * The packages as an integrator gets them: `npm pack` of service-web, service-oauth-client and
 * service-idp, installed into empty folders outside the workspace from the tarballs alone (plus
 * registry packages), then
 *   - the metadata every public package needs, and source maps that embed their sources;
 *   - a consumer that imports every export of every entry point, type-checked by `tsc --strict`
 *     (no skipLibCheck, no ambient @types) with bundler and with nodenext resolution, and
 *     `require('service-web')` from CommonJS;
 *   - esbuild bundling service-web for the browser and the consumer for Node;
 *   - the service started with `npx service-idp start --test-mode` from its own folder, and one
 *     sign-in: the esbuild bundle of service-web in Chromium (Debian's, as the browser suite
 *     uses), the code exchanged by the installed service-oauth-client;
 *   - the installed verifyAccessToken, as an API's resource server, verifying the running
 *     service's client_credentials tokens for a registered API, bearer and DPoP-bound.
 * Run by `npm run test:packages` (and .ci/run); npm reads the registry through its cache.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { chromium } from 'playwright-core';
import ts from 'typescript';
import { CHROMIUM, freePort, servePages } from '../examples/demo/test/harness.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PUBLIC = ['service-web', 'service-oauth-client', 'service-idp'] as const;
/** Every entry point a consumer can import. */
const ENTRIES = [
  'service-web',
  'service-web/passkeys',
  'service-web/dpop',
  'service-web/devices',
  'service-oauth-client',
  'service-oauth-client/delegation',
  'service-idp',
] as const;
const run = promisify(execFile);
/** The API the resource server's half protects (test/consumer/backend.ts names it too). */
const API = 'https://api.example.com';

/** npm as a user runs it: none of the calling `npm run`'s configuration leaks in. */
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
const npm = (cwd: string, ...args: string[]) => run('npm', args, { cwd, env, maxBuffer: 16 << 20 });

describe('the packed packages, installed outside the workspace', { timeout: 240_000 }, () => {
  const tmp = mkdtempSync(join(tmpdir(), 'service-packages-'));
  const tarballs = join(tmp, 'tarballs');
  const consumer = join(tmp, 'consumer');
  const serviceDir = join(tmp, 'service');
  const packed = new Map<string, { filename: string; files: string[] }>();
  let service: ChildProcess | undefined;

  before(async () => {
    mkdirSync(tarballs);
    const { stdout } = await npm(ROOT, 'pack', '--json', '--pack-destination', tarballs, ...PUBLIC.flatMap((name) => ['-w', name]));
    for (const entry of JSON.parse(stdout) as { name: string; filename: string; files: { path: string }[] }[]) {
      packed.set(entry.name, { filename: join(tarballs, entry.filename), files: entry.files.map((f) => f.path) });
    }
    const tarball = (name: string) => `file:${packed.get(name)?.filename}`;

    // The libraries, without service-idp, so nothing reaches them through the service.
    mkdirSync(consumer);
    writeJson(join(consumer, 'package.json'), {
      name: 'consumer',
      private: true,
      type: 'module',
      dependencies: { 'service-web': tarball('service-web'), 'service-oauth-client': tarball('service-oauth-client') },
    });
    cpSync(fileURLToPath(new URL('./consumer', import.meta.url)), consumer, { recursive: true });

    // The service alone. better-sqlite3 compiles from source on this machine (about two minutes):
    // its install script is skipped and the workspace's build for this same Node is reused, at
    // the workspace's version. Everything else is npm's ordinary install of the tarball.
    mkdirSync(serviceDir);
    const sqlite = JSON.parse(readFileSync(join(ROOT, 'node_modules/better-sqlite3/package.json'), 'utf8')) as { version: string };
    writeJson(join(serviceDir, 'package.json'), {
      name: 'service',
      private: true,
      dependencies: { 'service-idp': tarball('service-idp'), 'better-sqlite3': sqlite.version },
    });
    const flags = ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'];
    const installs = await Promise.all([npm(consumer, ...flags), npm(serviceDir, ...flags)]);
    // Node 20.19 is the floor everywhere: nothing an integrator installs may ask for Node 22
    // (fastify's light-my-request 6.8 pulls cookie@2, which does; service-idp pins 6.6).
    for (const { stderr } of installs) assert.doesNotMatch(stderr, /EBADENGINE/, 'no dependency asks for another Node version');
    const binary = 'node_modules/better-sqlite3/build/Release/better_sqlite3.node';
    mkdirSync(join(serviceDir, binary, '..'), { recursive: true });
    copyFileSync(join(ROOT, binary), join(serviceDir, binary));
  });

  after(() => {
    if (service?.pid) process.kill(-service.pid, 'SIGTERM');
    rmSync(tmp, { recursive: true, force: true });
  });

  it('ships license, engines, README and LICENSE in every public package, and no workspace-only dependency', () => {
    for (const name of PUBLIC) {
      const installedIn = name === 'service-idp' ? serviceDir : consumer;
      const manifest = JSON.parse(readFileSync(join(installedIn, 'node_modules', name, 'package.json'), 'utf8'));
      assert.equal(manifest.license, 'Apache-2.0', name);
      assert.equal(manifest.engines?.node, '>=20.19', name);
      const files = packed.get(name)?.files ?? [];
      assert.ok(files.includes('LICENSE') && files.includes('README.md'), `${name}: ${files.join(' ')}`);
      for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
        const workspaceOnly = Object.keys(manifest[field] ?? {}).filter((dep) => dep.startsWith('service-'));
        assert.deepEqual(workspaceOnly, [], `${name} ${field}`);
      }
    }
  });

  it('ships only source maps that embed their sources', () => {
    const maps = [
      ...['service-web', 'service-oauth-client'].map((name) => join(consumer, 'node_modules', name)),
      join(serviceDir, 'node_modules/service-idp'),
    ].flatMap((dir) => filesUnder(dir).filter((file) => file.endsWith('.map')));
    assert.ok(maps.length >= 4, maps.join('\n'));
    for (const file of maps) {
      const map = JSON.parse(readFileSync(file, 'utf8')) as { sources: string[]; sourcesContent?: (string | null)[] };
      const missing = map.sources.filter((_, i) => typeof map.sourcesContent?.[i] !== 'string');
      assert.deepEqual(missing, [], `${file} links sources it does not embed`);
    }
  });

  it('type-checks a consumer of every export with tsc --strict, bundler and nodenext resolution', async () => {
    const strict = {
      strict: true,
      skipLibCheck: false,
      noEmit: true,
      target: 'ES2022',
      lib: ['ES2022', 'DOM'],
      types: [],
      noUncheckedIndexedAccess: true,
      exactOptionalPropertyTypes: true,
    };
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    // The libraries from the consumer's folder, service-idp from its own: each brings only what it declares.
    const folders = [
      { cwd: consumer, entries: ENTRIES.filter((e) => e !== 'service-idp'), files: ['browser.ts', 'backend.ts'], cjs: ['require.cts'] },
      { cwd: serviceDir, entries: ['service-idp'], files: [], cjs: [] },
    ];
    const checks: Promise<void>[] = [];
    for (const { cwd, entries, files, cjs } of folders) {
      writeFileSync(join(cwd, 'every-export.ts'), everyExportModule(cwd, entries, await runtimeExports(cwd, entries)));
      writeJson(join(cwd, 'tsconfig.bundler.json'), {
        compilerOptions: { ...strict, module: 'preserve', moduleResolution: 'bundler' },
        files: [...files, 'every-export.ts'],
      });
      writeJson(join(cwd, 'tsconfig.nodenext.json'), {
        compilerOptions: { ...strict, module: 'nodenext', moduleResolution: 'nodenext' },
        files: [...files, ...cjs, 'every-export.ts'],
      });
      for (const project of ['tsconfig.bundler.json', 'tsconfig.nodenext.json']) {
        checks.push(
          run(process.execPath, [tsc, '-p', project], { cwd }).then(
            () => undefined,
            (error: { stdout: string }) => assert.fail(`tsc -p ${project} in ${cwd}:\n${error.stdout}`),
          ),
        );
      }
    }
    await Promise.all(checks);
  });

  it('loads service-web with require() from CommonJS', async () => {
    const { stdout } = await run(
      process.execPath,
      ['-e', "const w = require('service-web'); console.log(typeof w.ServiceClient, w.Status.SUCCESS)"],
      {
        cwd: consumer,
      },
    );
    assert.equal(stdout.trim(), 'function SUCCESS');
  });

  it('bundles service-web with esbuild for the browser, inlining everything', async () => {
    const result = await build({
      absWorkingDir: consumer,
      entryPoints: ['browser.ts'],
      bundle: true,
      platform: 'browser',
      format: 'esm',
      minify: true,
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(result.metafile.inputs);
    assert.ok(inputs.includes('node_modules/service-web/dist/index.js'), inputs.join('\n'));
    assert.ok(
      inputs.every((input) => input === 'browser.ts' || input.startsWith('node_modules/service-web/')),
      inputs.join('\n'),
    );
    assert.deepEqual(result.metafile.outputs[Object.keys(result.metafile.outputs)[0] ?? '']?.imports, []);
  });

  it('runs the service installed from its tarball (npx service-idp start) and signs a user in through the libraries, in Chromium', async () => {
    const npx = (...args: string[]) => run('npx', ['--no-install', 'service-idp', ...args], { cwd: serviceDir, env });
    const pages = await servePages();
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run'],
    });
    try {
      // Only `start` makes the data folder (a mistyped --data is refused); a command run first needs it made.
      mkdirSync(join(serviceDir, 'data'), { recursive: true });
      const client = JSON.parse(
        (await npx('clients', 'create', '--name', 'Packaged', '--origin', pages.origin, '--json')).stdout,
      ) as ClientOut;
      // An API and a machine client granted read:notes on it: the resource server's half below.
      await npx('apis', 'create', '--identifier', API, '--name', 'Notes', '--permissions', 'read:notes,write:notes', '--json');
      const machine = JSON.parse((await npx('clients', 'create', '--name', 'Nightly job', '--machine', '--json')).stdout) as ClientOut;
      await npx('clients', 'grant', machine.clientId, '--grant', `${API}=read:notes`, '--json');
      const port = await freePort();
      service = spawn('npx', ['--no-install', 'service-idp', 'start', '--port', String(port), '--test-mode'], {
        cwd: serviceDir,
        env,
        detached: true, // its own process group: npx and the node it starts stop together
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      await new Promise<void>((resolve, reject) => {
        service?.stdout?.on('data', (chunk: Buffer) => {
          output += chunk;
          if (output.includes('service-idp listening')) resolve();
        });
        service?.stderr?.on('data', (chunk: Buffer) => {
          output += chunk;
        });
        service?.once('exit', (code) => reject(new Error(`service-idp exited with ${code}:\n${output}`)));
      });
      const url = `http://127.0.0.1:${port}`;

      // The service serves its copy of the script-tag build, compressed.
      const script = await fetch(`${url}/sdk/v1/service-web.js`, { headers: { 'accept-encoding': 'br' } });
      assert.equal(script.status, 200);
      assert.equal(script.headers.get('content-encoding'), 'br');
      assert.match(await script.text(), /globalThis\.ServiceWeb=/);

      // The browser half, bundled by esbuild, on a page of the client's origin.
      const bundle = await build({
        absWorkingDir: consumer,
        entryPoints: ['browser.ts'],
        bundle: true,
        platform: 'browser',
        format: 'iife',
        globalName: 'Consumer',
        minify: true,
        write: false,
        logLevel: 'silent',
      });
      pages.pages.set('/', `<!doctype html><meta charset="utf-8"><script>${bundle.outputFiles[0]?.text}</script>`);
      const page = await browser.newPage();
      await page.goto(`${pages.origin}/`);
      const email = `packaged-${Date.now()}@example.com`;
      const signedIn = await page.evaluate(
        ([serviceUrl, key, userid]) =>
          (
            window as unknown as { Consumer: { signIn(u: string, k: string, e: string): Promise<Record<string, unknown>> } }
          ).Consumer.signIn(serviceUrl, key, userid),
        [url, client.publishableKey, email] as const,
      );
      assert.equal(signedIn.deviceRemembered, true, 'the device key is kept in IndexedDB');

      // The backend half, bundled for Node with the server library left as a dependency.
      await build({
        absWorkingDir: consumer,
        entryPoints: ['backend.ts'],
        bundle: true,
        platform: 'node',
        format: 'esm',
        external: ['service-oauth-client'],
        outfile: 'out/backend.mjs',
        logLevel: 'silent',
      });
      const backend = (await import(pathToFileURL(join(consumer, 'out/backend.mjs')).href)) as typeof import('./consumer/backend.ts');
      const claims = await backend.exchange(
        { serviceUrl: url, clientId: client.clientId, secretKey: client.secretKey },
        String(signedIn.code),
        String(signedIn.codeVerifier),
      );
      assert.equal(claims.email, email);
      assert.equal(claims.iss, url);
      assert.equal(claims.aud, client.clientId);

      // The resource server's half: the installed verifyAccessToken takes the service's access
      // tokens for the API (a machine client's, bearer and DPoP-bound), and refuses a replayed proof
      // and a bound token sent as bearer.
      const settings = { serviceUrl: url, clientId: machine.clientId, secretKey: machine.secretKey };
      const bearer = await clientCredentials(url, machine);
      const verified = await backend.verifyBearer(settings, bearer.access_token);
      assert.ok(verified && 'claims' in verified, JSON.stringify(verified));
      assert.equal(verified.claims.sub, machine.clientId);
      assert.deepEqual(verified.scopes, ['read:notes']);

      const { privateKey, publicKey } = await generateKeyPair('ES256');
      const jwk = await exportJWK(publicKey);
      const proof = (claims: Record<string, string>) =>
        new SignJWT({ jti: randomUUID(), iat: Math.floor(Date.now() / 1000), ...claims })
          .setProtectedHeader({ typ: 'dpop+jwt', alg: 'ES256', jwk })
          .sign(privateKey);
      const bound = await clientCredentials(url, machine, (nonce) => proof({ htm: 'POST', htu: `${url}/oauth/token`, ...nonce }));
      assert.equal(bound.token_type, 'DPoP');
      const apiProof = await proof({
        htm: 'GET',
        htu: `${API}/notes`,
        ath: createHash('sha256').update(bound.access_token).digest('base64url'),
      });
      const boundVerified = await backend.verifyApiRequest(settings, bound.access_token, apiProof);
      assert.ok(boundVerified && 'claims' in boundVerified, JSON.stringify(boundVerified));
      assert.equal(boundVerified.jkt, await calculateJwkThumbprint(jwk));
      const replayed = await backend.verifyApiRequest(settings, bound.access_token, apiProof);
      assert.deepEqual([replayed && 'status' in replayed && replayed.status], [401], 'a replayed proof is refused');
      assert.equal((await backend.verifyBearer(settings, bound.access_token))?.status, 401, 'a bound token is no bearer token');
    } finally {
      await browser.close();
      await pages.close();
    }
  });
});

interface ClientOut {
  clientId: string;
  publishableKey: string;
  secretKey: string;
}

/**
 * A client_credentials token for API, as a machine client's backend asks it; with `proof`, bound
 * by DPoP (signed again with the service's nonce when it asks for one, RFC 9449 8).
 */
async function clientCredentials(
  url: string,
  machine: ClientOut,
  proof?: (nonce: { nonce?: string }) => Promise<string>,
): Promise<{ access_token: string; token_type: string }> {
  const body = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: machine.clientId,
    client_secret: machine.secretKey,
    resource: API,
  });
  const post = async (nonce: { nonce?: string }) =>
    fetch(`${url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(proof ? { dpop: await proof(nonce) } : {}) },
      body,
    });
  let response = await post({});
  const nonce = response.headers.get('dpop-nonce');
  if (response.status === 400 && proof && nonce) response = await post({ nonce });
  const answer = (await response.json()) as { access_token: string; token_type: string };
  assert.equal(response.status, 200, JSON.stringify(answer));
  return answer;
}

function writeJson(path: string, value: unknown) {
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && !join(entry.parentPath, entry.name).includes('/node_modules/', dir.length))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** The names each entry point exports at run time, read by Node from the installed packages. */
async function runtimeExports(cwd: string, entries: readonly string[]): Promise<Record<string, string[]>> {
  const script = `const out = {}; for (const e of ${JSON.stringify(entries)}) out[e] = Object.keys(await import(e)); console.log(JSON.stringify(out));`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd });
  return JSON.parse(stdout);
}

/**
 * A module importing every name every entry point declares (read with the TypeScript checker
 * from the installed .d.ts files), values used as values; and every run-time export must be
 * declared. Whatever the packages export later is covered without editing this test.
 */
function everyExportModule(cwd: string, entries: readonly string[], runtime: Record<string, string[]>): string {
  const probe = join(cwd, 'probe.ts');
  writeFileSync(probe, entries.map((entry, i) => `import * as m${i} from '${entry}';\nvoid m${i};`).join('\n'));
  const program = ts.createProgram([probe], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    noEmit: true,
    types: [],
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(probe);
  assert.ok(source);
  const lines: string[] = [];
  const values: string[] = [];
  source.statements.filter(ts.isImportDeclaration).forEach((declaration, i) => {
    const entry = entries[i] as string;
    const moduleSymbol = checker.getSymbolAtLocation(declaration.moduleSpecifier);
    assert.ok(moduleSymbol, `${entry} has no types`);
    const exported = checker.getExportsOfModule(moduleSymbol);
    const names = exported.map((s) => s.name);
    const undeclared = (runtime[entry] ?? []).filter((name) => !names.includes(name));
    assert.deepEqual(undeclared, [], `${entry}: exported at run time without a declaration`);
    const specifiers = exported.map((symbol) => {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      const isValue = (target.flags & ts.SymbolFlags.Value) !== 0;
      const local = `e${i}_${symbol.name}`;
      if (isValue) values.push(local);
      return `${isValue ? '' : 'type '}${symbol.name} as ${local}`;
    });
    lines.push(`import { ${specifiers.join(', ')} } from '${entry}';`);
  });
  rmSync(probe);
  return `${lines.join('\n')}\n\nexport const values: unknown[] = [${values.join(', ')}];\n`;
}
