/**
 * The front door, as a new user meets it: a fresh clone of this repository in a temporary
 * folder, then the documentation's own commands as written: the README's `npm install && npm
 * start`, reading the codes with `npx service-idp mail`, then from docs/getting-started.md the
 * curl walkthrough (taken from the file itself, so the documentation cannot drift from what is
 * tested) twice, Ctrl-C, and "run the service alone".
 *
 * It uses the README's ports (8080, 3000 and 3001) and the npm registry (through the local cache).
 * Run with `npm run test:front-door`; CI runs it from `.ci/run`.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const REPOSITORY = fileURLToPath(new URL('..', import.meta.url));
const README = readFileSync(join(REPOSITORY, 'README.md'), 'utf8');
const GETTING_STARTED = readFileSync(join(REPOSITORY, 'docs/getting-started.md'), 'utf8');
const SERVICE = 'http://127.0.0.1:8080';
const DEMO = 'http://localhost:3000';
const SECOND_APP = 'http://localhost:3001';

/** The body of the first fenced block of `language` after `heading` in a Markdown file (`name` for messages). */
function block(name: string, text: string, heading: string, language: string): string {
  const section = text.indexOf(`\n${heading}\n`);
  assert.ok(section >= 0, `${name} has a "${heading}" section`);
  const open = text.indexOf(`\`\`\`${language}\n`, section);
  const close = text.indexOf('\n```', open + 1);
  assert.ok(open > 0 && close > open, `${name}'s "${heading}" section has a ${language} block`);
  return text.slice(open + language.length + 4, close + 1);
}

/** The curl walkthrough of docs/getting-started.md, as a reader pastes it. */
const walkthrough = () => block('docs/getting-started.md', GETTING_STARTED, '## Five-minute walkthrough (curl)', 'sh');

/** The commands of the "Two commands" block, without their comments. */
function twoCommands(): string[] {
  return block('README.md', README, '## Two commands', 'sh')
    .split('\n')
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter(Boolean);
}

interface Finished {
  code: number | null;
  output: string;
}

/** Runs a shell command in the clone; the output is kept for the failure message. */
function sh(clone: string, command: string, timeoutMs = 600_000): Promise<Finished> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', command], { cwd: clone, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** The environment a new user has: none of this repository's test settings. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(env)) if (/^(SERVICE_|DATABASE_URL|SMTP_URL|SMS_|NODE_ENV|DEMO_)/.test(name)) delete env[name];
  return env;
}

/** A long-running command in its own process group, so Ctrl-C can be sent as a terminal does. */
function background(clone: string, command: string): { child: ChildProcess; output: () => string } {
  const child = spawn('bash', ['-c', command], { cwd: clone, env: cleanEnv(), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  return { child, output: () => output };
}

function interrupt(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
    process.kill(-(child.pid as number), 'SIGINT');
  });
}

async function waitFor(url: string, running: { child: ChildProcess; output: () => string }, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    assert.equal(running.child.exitCode, null, `the command exited early:\n${running.output()}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 250));
  }
  assert.fail(`${url} did not answer within ${timeoutMs / 1000} s:\n${running.output()}`);
}

const portFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });

describe('the front door: a fresh clone and the README and getting-started.md as written', { timeout: 1_200_000 }, () => {
  let clone: string;
  let failed = false;
  let start: ReturnType<typeof background> | undefined;
  const step = (name: string, fn: () => Promise<void>) =>
    it(name, async (t) => {
      if (failed) return t.skip('an earlier step failed');
      try {
        await fn();
      } catch (error) {
        failed = true;
        throw error;
      }
    });

  before(async () => {
    for (const port of [8080, 3000, 3001]) assert.ok(await portFree(port), `port ${port} is free (the README's commands use it)`);
    clone = mkdtempSync(join(tmpdir(), 'service-front-door-'));
    execFileSync('git', ['clone', '--quiet', '--no-hardlinks', REPOSITORY, clone]);
  });
  after(async () => {
    if (start) await interrupt(start.child);
    rmSync(clone, { recursive: true, force: true });
  });

  const [install, startCommand] = (twoCommands()[0] ?? '').split('&&').map((c) => c.trim());

  step('`npm install` links an executable service-idp from the first install', async () => {
    assert.equal(install, 'npm install');
    const installed = await sh(clone, install as string);
    assert.equal(installed.code, 0, installed.output);
    assert.doesNotMatch(installed.output, /EBADENGINE/, 'no dependency asks for another Node version');
    const bin = join(clone, 'node_modules/.bin/service-idp');
    assert.ok(existsSync(bin), 'node_modules/.bin/service-idp exists');
    assert.ok(statSync(bin).mode & 0o111, 'and is executable');
  });

  step('`npm start` runs the service and the two demo apps', async () => {
    assert.equal(startCommand, 'npm start');
    start = background(clone, startCommand as string);
    await waitFor(`${SERVICE}/healthz`, start, 300_000);
    await waitFor(DEMO, start, 60_000);
    await waitFor(SECOND_APP, start, 60_000);
    assert.match(start.output(), /npx service-idp mail/, 'the banner says how to read the codes');
    assert.doesNotMatch(
      start.output(),
      /> tsc -b|Build complete|tsdown/,
      'a build that succeeds shows none of its output, one line per step (scripts/build-for-start.ts)',
    );
    // The SDK-free app's sign-in: express-openid-connect discovered the service and sends the
    // browser to its /authorize with the registered redirect URI.
    const login = await fetch(`${SECOND_APP}/login`, { redirect: 'manual' });
    const location = new URL(login.headers.get('location') ?? '', SECOND_APP);
    assert.equal(`${location.origin}${location.pathname}`, `${SERVICE}/authorize`);
    assert.equal(location.searchParams.get('redirect_uri'), `${SECOND_APP}/callback`);
    assert.equal(location.searchParams.get('response_type'), 'code');
  });

  step('`npx service-idp mail` reads the development mailbox, as the README and the banner say', async () => {
    const mail = await sh(clone, 'npx service-idp mail');
    assert.equal(mail.code, 0, mail.output);
    assert.match(mail.output, /development mailbox is empty|Subject:/);
  });

  step('the curl walkthrough, verbatim, signs ann in and prints her ID token claims', async () => {
    const walk = await sh(clone, walkthrough(), 120_000);
    assert.equal(walk.code, 0, walk.output);
    assert.match(walk.output, /email: 'ann@example\.com'/);
    assert.match(walk.output, /email_verified: true/);
  });

  step('run again at once, it says the code was just sent and stops, reusing the registered client', async () => {
    const again = await sh(clone, walkthrough(), 120_000);
    assert.notEqual(again.code, 0, again.output);
    assert.match(again.output, /stopped: .*ERR_RATE_LIMITED/);
    assert.doesNotMatch(again.output, /SyntaxError|TypeError|Cannot read/, `it stops at the failed step:\n${again.output}`);
    const clients = await sh(clone, 'npx service-idp clients list --json');
    const names = (JSON.parse(clients.output.slice(clients.output.indexOf('{'))) as { clients: Array<{ name: string }> }).clients.map(
      (c) => c.name,
    );
    assert.deepEqual(names.sort(), ['Acme Wiki', 'Demo', 'My App'], 'one "My App" after two runs');
  });

  step('Ctrl-C stops all three', async () => {
    const running = start as NonNullable<typeof start>;
    await interrupt(running.child);
    start = undefined;
    assert.match(running.output(), /Stopped\./);
    for (const port of [8080, 3000, 3001]) assert.ok(await portFree(port), `port ${port} is free again`);
  });

  step('a second build with nothing changed checks and bundles nothing: one line per step, each up to date', async () => {
    const again = await sh(clone, 'node --import tsx scripts/build-for-start.ts', 120_000);
    assert.equal(again.code, 0, again.output);
    // The type check and the five bundles.
    assert.equal(again.output.match(/ up to date$/gm)?.length, 6, again.output);
    assert.doesNotMatch(again.output, /checked in/);
    assert.doesNotMatch(again.output, /built in/);
    assert.ok(again.output.trim().split('\n').length < 40, 'under 40 lines');
  });

  step('"run the service alone" (getting-started.md): `npm run build && npx service-idp start`', async () => {
    const alone = /run the service alone: `(npm run build && npx service-idp start)`/i.exec(GETTING_STARTED)?.[1];
    assert.ok(alone, 'docs/getting-started.md says how to run the service alone');
    start = background(clone, alone);
    await waitFor(`${SERVICE}/healthz`, start, 180_000);
    await interrupt(start.child);
    const output = start.output();
    start = undefined;
    assert.match(output, /service-idp stopped \(SIGINT\)\./, output);
    assert.ok(await portFree(8080), 'port 8080 is free again');
  });
});

describe("npm start's build step (scripts/build-for-start.ts)", () => {
  const buildForStart = (env: Record<string, string>) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', join(REPOSITORY, 'scripts/build-for-start.ts')], {
        cwd: REPOSITORY,
        env: { ...process.env, ...env },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => {
        stdout += chunk;
      });
      child.stderr.on('data', (chunk) => {
        stderr += chunk;
      });
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });

  it("is the start script's first step", () => {
    const { scripts } = JSON.parse(readFileSync(join(REPOSITORY, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    assert.match(scripts.start ?? '', /^node --import tsx scripts\/build-for-start\.ts && /);
  });

  it('says a busy port before building anything, naming the variable that moves it', async () => {
    const holder = createServer(() => {});
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    try {
      const port = (holder.address() as AddressInfo).port;
      const answer = await buildForStart({ DEMO_OIDC_PORT: String(port), SERVICE_IDP_PORT: '1', DEMO_PORT: '2' });
      assert.equal(answer.code, 1);
      assert.match(answer.stderr, new RegExp(`Port ${port} is in use .*set DEMO_OIDC_PORT to another port`));
      assert.doesNotMatch(answer.stdout, /types \(tsc -b\)/, 'nothing was built');
    } finally {
      holder.close();
    }
  });
});
