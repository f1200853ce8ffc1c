/**
 * `npm start`'s build: the ports first (a busy one is said before any time is spent), then the
 * type check (`tsc -b`, incremental through its build info), then each package's bundle only
 * when its inputs changed since its last successful build: its own sources and configuration,
 * and what it bundles or copies from the packages before it. One line per step, with its time;
 * a failed step's output is shown whole (issue 40: a silent minute-long build every start).
 * `npm run build` still builds everything, always.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const STAMPS = join(ROOT, 'node_modules', '.cache', 'service-build');

/** Each bundled package, in build order, with the packages whose output it bundles or copies. */
const PACKAGES: Array<{ name: string; dir: string; after: string[] }> = [
  { name: 'service-web', dir: 'packages/web', after: [] },
  { name: 'service-oauth-client', dir: 'packages/oauth-client', after: [] },
  { name: 'service-hosted-pages', dir: 'packages/hosted', after: ['service-web'] },
  { name: 'service-console', dir: 'packages/console', after: ['service-web'] },
  { name: 'service-idp', dir: 'packages/idp', after: ['service-web', 'service-oauth-client', 'service-hosted-pages', 'service-console'] },
];

/** The ports start.ts will listen on: refused now, before a build, if another process holds one. */
async function checkPorts(): Promise<void> {
  const ports = [
    ['SERVICE_IDP_PORT', 8080],
    ['DEMO_PORT', 3000],
    ['DEMO_OIDC_PORT', 3001],
  ].map(([name, fallback]) => [name as string, Number(process.env[name as string] ?? fallback)] as const);
  for (const [name, port] of ports) {
    const busy = await new Promise<boolean>((resolve) => {
      const socket = connect({ port, host: '127.0.0.1' });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (busy) {
      process.stderr.write(`Port ${port} is in use (another npm start?). Stop it, or set ${name} to another port.\n`);
      process.exit(1);
    }
  }
}

/** A fingerprint of a folder's files (path, size, modification time), packages/protocol's sources included for all. */
function fingerprint(dirs: string[], extra: string[]): string {
  const hash = createHash('sha256');
  const visit = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) visit(path);
      else {
        const stat = statSync(path);
        hash.update(`${path}\0${stat.size}\0${stat.mtimeMs}\n`);
      }
    }
  };
  for (const dir of dirs) visit(join(ROOT, dir));
  for (const file of extra) {
    const path = join(ROOT, file);
    if (existsSync(path)) hash.update(`${file}\0${readFileSync(path)}\n`);
  }
  return hash.digest('hex');
}

/** Runs a command, its output kept and shown only if it fails; its time in seconds. */
function run(command: string, args: string[]): Promise<number> {
  const started = performance.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const child = spawn(command, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], shell: process.platform === 'win32' });
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('close', (code) => {
      if (code === 0) return resolve((performance.now() - started) / 1000);
      process.stderr.write(Buffer.concat(chunks));
      process.stderr.write(`\n${[command, ...args].join(' ')} failed (exit status ${code}); its output is above.\n`);
      process.exit(code ?? 1);
    });
  });
}

await checkPorts();
process.stdout.write('Building (only what changed since the last start):\n');
mkdirSync(STAMPS, { recursive: true });
// tsc -b's own no-op check loads the compiler and reads every build info: seconds of a second
// start (issue 40). The same inputs, fingerprinted here, skip it; what it emits must still be there.
const TYPED = ['protocol', 'web', 'hosted', 'console', 'oauth-client', 'idp'].map((name) => `packages/${name}`);
const typesPrint = fingerprint(
  TYPED.map((dir) => `${dir}/src`),
  ['tsconfig.json', 'tsconfig.base.json', 'package-lock.json', ...TYPED.map((dir) => `${dir}/tsconfig.json`)],
);
const typesStamp = join(STAMPS, 'types.stamp');
const typesEmitted = ['packages/protocol/dist', 'packages/oauth-client/dist'].every((dir) => existsSync(join(ROOT, dir)));
process.stdout.write(`  types (tsc -b) … `);
if (typesEmitted && existsSync(typesStamp) && readFileSync(typesStamp, 'utf8') === typesPrint) process.stdout.write('up to date\n');
else {
  process.stdout.write(`checked in ${(await run('npx', ['tsc', '-b'])).toFixed(1)} s\n`);
  writeFileSync(typesStamp, typesPrint);
}
const prints = new Map<string, string>();
for (const pkg of PACKAGES) {
  const own = fingerprint(
    [`${pkg.dir}/src`],
    [`${pkg.dir}/package.json`, `${pkg.dir}/tsdown.config.ts`, 'tsdown.node.ts', 'package-lock.json'],
  );
  const print = createHash('sha256')
    .update([own, fingerprint(['packages/protocol/src'], []), ...pkg.after.map((name) => prints.get(name) ?? '')].join(' '))
    .digest('hex');
  prints.set(pkg.name, print);
  const stampFile = join(STAMPS, `${pkg.name}.stamp`);
  const built = existsSync(join(ROOT, pkg.dir, 'dist'));
  process.stdout.write(`  ${pkg.name} … `);
  if (built && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === print) {
    process.stdout.write('up to date\n');
    continue;
  }
  const seconds = await run('npm', ['run', 'build', '-w', pkg.name]);
  writeFileSync(stampFile, print);
  process.stdout.write(`built in ${seconds.toFixed(1)} s\n`);
}
