/**
 * The two libraries' README snippets, run as written: service-web's "Initialize" and "The flow"
 * bundled into a page (their placeholders `pk_...` and `https://id.example.com` replaced by a
 * real client's key and the service's URL; `ask()` answered by the test), and
 * service-oauth-client's login handler as the page's backend, configured from the environment.
 * A new user signs in in Chromium and the backend's session knows who they are.
 *
 * And the relying-party recipes of docs/integrations.md (Auth.js, passport): each snippet is the
 * marked lines of the example app that oidc-recipes.test.ts runs in Chromium, character for
 * character.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { build } from 'esbuild';
import { type ClientKeys, freePort, ROOT, type Stack, startStack } from './harness.ts';

/**
 * The lines of an example app between `// docs/integrations.md: <name>` and `// docs/integrations.md end`,
 * their common indentation removed: what the recipe must show, character for character.
 */
function region(file: string, name: string): string {
  const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
  const start = lines.findIndex((line) => line.trim() === `// docs/integrations.md: ${name}`);
  const end = lines.findIndex((line, at) => at > start && line.trim() === '// docs/integrations.md end');
  assert.ok(start >= 0 && end > start, `${file} marks the "${name}" recipe`);
  const body = lines.slice(start + 1, end);
  const indent = Math.min(...body.filter((line) => line.trim()).map((line) => line.length - line.trimStart().length));
  return `${body.map((line) => line.slice(indent)).join('\n')}\n`;
}

/** The first ```ts block after `heading` in a Markdown file (a README or a doc). */
function snippet(file: string, heading: string): string {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const section = text.indexOf(`\n${heading}\n`);
  assert.ok(section >= 0, `${file} has "${heading}"`);
  const open = text.indexOf('```ts\n', section);
  return text.slice(open + 6, text.indexOf('\n```', open) + 1);
}

describe('README snippets: service-web in the page, service-oauth-client in the backend', { timeout: 180_000 }, () => {
  let stack: Stack;
  let dir: string;
  let backend: ChildProcess | undefined;
  let backendOutput = '';

  before(async () => {
    stack = await startStack();
    dir = join(ROOT, 'examples/demo/.test-data', `snippets-${Date.now().toString(36)}`);
    mkdirSync(join(dir, 'public'), { recursive: true });
  });
  after(async () => {
    backend?.kill('SIGTERM');
    await stack?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('pasted together, they sign a new user in and open a backend session', async () => {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const client = await stack.idp<ClientKeys>('clients', 'create', '--name', 'Snippets', '--origin', origin);

    const initialize = snippet('packages/web/README.md', '## Initialize');
    assert.match(initialize, /'pk_\.\.\.', 'https:\/\/id\.example\.com'/, 'the placeholders this test fills in');
    const page = [
      initialize
        .replace("'pk_...'", JSON.stringify(client.publishableKey))
        .replace("'https://id.example.com'", JSON.stringify(stack.serviceUrl)),
      snippet('packages/web/README.md', '## The flow'),
      // What the test reads: the backend's view of the session.
      "document.body.dataset.me = await (await fetch('/api/me')).text();",
    ].join('\n');
    writeFileSync(join(dir, 'page.ts'), `declare const ask: (question: string) => Promise<string>;\n${page}`);
    await build({
      entryPoints: [join(dir, 'page.ts')],
      bundle: true,
      format: 'esm',
      target: 'es2022',
      platform: 'browser',
      outfile: join(dir, 'public/app.js'),
      logLevel: 'silent',
    });
    writeFileSync(join(dir, 'public/index.html'), '<!doctype html><title>snippets</title><script type="module" src="/app.js"></script>');
    writeFileSync(join(dir, 'server.ts'), snippet('packages/oauth-client/README.md', '## Exchange the code in your login handler'));

    backend = spawn(process.execPath, ['--import', 'tsx', 'server.ts'], {
      cwd: dir,
      env: {
        PATH: process.env.PATH ?? '',
        PORT: String(port),
        SESSION_SECRET: 'a test session secret, 32 chars+',
        OAUTH_TOKEN_ENDPOINT: `${stack.serviceUrl}/oauth/token`,
        OAUTH_CLIENT_ID: client.clientId,
        SERVICE_API_KEY: client.secretKey,
        JWKS_URL: `${stack.serviceUrl}/.well-known/jwks.json`,
        OAUTH_ISSUER: stack.serviceUrl,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    backend.stdout?.on('data', (d) => {
      backendOutput += d;
    });
    backend.stderr?.on('data', (d) => {
      backendOutput += d;
    });
    const deadline = Date.now() + 30_000;
    while (
      !(await fetch(origin).then(
        (r) => r.ok,
        () => false,
      ))
    ) {
      assert.equal(backend.exitCode, null, `the backend snippet exited:\n${backendOutput}`);
      assert.ok(Date.now() < deadline, `the backend snippet did not listen:\n${backendOutput}`);
      await new Promise((r) => setTimeout(r, 200));
    }

    const email = `snippet.${Date.now().toString(36)}@example.com`;
    const context = await stack.browser.newContext();
    const tab = await context.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (error) => errors.push(error.message));
    const asked: string[] = [];
    await tab.exposeFunction('ask', async (question: string) => {
      asked.push(question);
      return question === 'Your email address' ? email : stack.nextMailOtp(email, 0);
    });
    await tab.goto(origin);
    await tab
      .waitForFunction(() => document.body?.dataset.me !== undefined || false, undefined, { timeout: 60_000 })
      .catch(() => {
        assert.fail(`the page did not finish: ${errors.join('; ')}\n${backendOutput}`);
      });
    assert.deepEqual(errors, []);
    assert.deepEqual(asked, ['Your email address', 'The code we emailed you']);
    const me = JSON.parse((await tab.evaluate(() => document.body.dataset.me)) ?? '{}');
    assert.equal(me.email, email);
    assert.match(me.id, /^usr_/);
    const [cookie] = await context.cookies(origin);
    assert.equal(cookie?.httpOnly, true, 'the session cookie is HttpOnly');
    await context.close();
  });
});

describe('docs/integrations.md relying-party recipes: each snippet is the lines of the app tested in Chromium', () => {
  for (const [heading, file, name] of [
    ['### Auth.js (`@auth/express`)', 'examples/demo/src/authjs-app.ts', 'Auth.js'],
    ['### passport with `openid-client/passport`', 'examples/demo/src/passport-app.ts', 'passport'],
  ] as const) {
    it(`${name}: docs/integrations.md's snippet is ${file}'s`, () => {
      assert.equal(snippet('docs/integrations.md', heading), region(file, name));
    });
  }
});
