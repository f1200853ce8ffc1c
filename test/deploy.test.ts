/**
 * The deployment files (docs/deployment.md), on a machine without a Docker engine or systemd:
 *   - Dockerfile, parsed (dockerfile-ast): two node:20 slim stages pinned to a release, the
 *     final one non-root with the data folder a volume, a HEALTHCHECK on /readyz, exec-form
 *     ENTRYPOINT and CMD, and no install in it. Then its steps run as a script: a small
 *     interpreter applies each stage's WORKDIR, ENV, COPY and RUN in a scratch folder (one
 *     folder per stage standing for its filesystem; the build context is the tracked files
 *     less .dockerignore) with this Node and npm (npm reads its cache first). The image's own
 *     system packages (apt-get) are not installed: the host must have them. The install runs
 *     without its scripts and takes this checkout's better-sqlite3 build for the same Node and
 *     version instead of compiling it (DEPLOY_TEST_COMPILE=1 compiles, minutes more). The result starts
 *     as ENTRYPOINT and CMD say, with the image's ENV (its data folder a fresh one, a free
 *     port, and, as `docker run -e` would, an https issuer and SMTP_URL, which NODE_ENV=
 *     production requires), as the image's user when run as root; the HEALTHCHECK's own
 *     command must pass, and SIGTERM must end it with status 0 within a few seconds.
 *   - compose.yaml, parsed: PostgreSQL with a health check, two nodes on one database URL and
 *     one data volume, started after it, and nginx in front rendering docs/nginx.example.conf;
 *     the rendering is run here and the result checked with `nginx -t` when nginx is installed.
 *   - deploy/service-idp.service: `systemd-analyze verify` with no warning, when installed.
 * Run by `npm run test:deploy` (and .ci/run).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join, posix } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type Copy, DockerfileParser, type Env, type Healthcheck, type Instruction, type JSONInstruction } from 'dockerfile-ast';
import { parse as parseYaml } from 'yaml';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);
const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx', '/usr/local/sbin/nginx'].find((path) => existsSync(path));
/** The user the node images run as. */
const IMAGE_USERS: Record<string, number> = { node: 1000 };
const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 5_000;
/** DEPLOY_TEST_COMPILE=1: run the install scripts as the image build does (better-sqlite3 compiles: minutes). */
const COMPILE = process.env.DEPLOY_TEST_COMPILE === '1';

const dockerfile = DockerfileParser.parse(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));

interface Stage {
  name: string | null;
  image: string;
  instructions: Instruction[];
}

/** The instructions of each FROM, in order. */
function stagesOf(): Stage[] {
  const stages: Stage[] = [];
  for (const instruction of dockerfile.getInstructions()) {
    if (instruction.getKeyword() === 'FROM') {
      const from = dockerfile.getFROMs().find((f) => f.getRange().start.line === instruction.getRange().start.line);
      stages.push({ name: from?.getBuildStage() ?? null, image: from?.getImage() ?? '', instructions: [] });
    } else stages.at(-1)?.instructions.push(instruction);
  }
  return stages;
}

const stages = stagesOf();
const final = stages.at(-1) as Stage;
const only = (stage: Stage, keyword: string) => stage.instructions.filter((i) => i.getKeyword() === keyword);
const one = <T extends Instruction>(stage: Stage, keyword: string) => {
  const found = only(stage, keyword);
  assert.equal(found.length, 1, `one ${keyword} in the final stage`);
  return found[0] as T;
};
/** ENV's name=value pairs, in order. */
const envOf = (stage: Stage) =>
  only(stage, 'ENV').flatMap((i) => (i as Env).getProperties().map((p) => [p.getName(), p.getValue() ?? ''] as const));
/** COPY --from=STAGE (dockerfile-ast's getFromFlag() misses it when another flag follows). */
const fromFlag = (copy: Copy) =>
  copy
    .getFlags()
    .find((flag) => flag.getName() === 'from')
    ?.getValue() ?? undefined;
const jsonArgs = (instruction: Instruction) => (instruction as JSONInstruction).getJSONStrings().map((s) => s.getJSONValue());
/** HEALTHCHECK CMD ["…"] as an argument list (exec form). */
function healthcheckCommand(): string[] {
  const check = one<Healthcheck>(final, 'HEALTHCHECK');
  assert.equal(check.getSubcommand()?.getValue(), 'CMD');
  const content = check.getArgumentsContent() ?? '';
  const command = JSON.parse(content.slice(content.indexOf('CMD') + 3)) as unknown;
  assert.ok(Array.isArray(command) && command.every((a) => typeof a === 'string'), 'HEALTHCHECK CMD in exec form');
  return command as string[];
}

describe('Dockerfile', () => {
  it('has a build stage and a runtime stage on node:20 slim, pinned to one release this Node matches', () => {
    assert.ok(stages.length >= 2, 'multi-stage');
    for (const stage of stages) assert.match(stage.image, /^node:20\.\d+\.\d+-(bookworm-)?slim$/, `${stage.image}: node:20.x.y slim`);
    const version = /^node:(\d+\.\d+\.\d+)/.exec(final.image)?.[1];
    assert.equal(new Set(stages.map((s) => s.image)).size, 1, 'every stage on the same image (the native module is built for it)');
    const [major, minor] = (version ?? '').split('.').map(Number) as [number, number];
    assert.ok(major === 20 && minor >= 19, `${version}: within engines (>=20.19)`);
    assert.equal(process.versions.node.split('.')[0], '20', 'CI runs the same Node major as the image');
  });

  it('installs from the lockfile and builds in the build stage only, and prunes to production dependencies', () => {
    const build = stages[0] as Stage;
    const runs = (stage: Stage) => only(stage, 'RUN').map((i) => i.getArgumentsContent() ?? '');
    assert.ok(
      runs(build).some((r) => /\bnpm ci\b/.test(r)),
      'npm ci in the build stage',
    );
    assert.ok(
      runs(build).some((r) => /\bnpm run build\b/.test(r)),
      'npm run build in the build stage',
    );
    assert.ok(
      runs(build).some((r) => /\bnpm prune --omit=dev\b/.test(r)),
      'npm prune --omit=dev in the build stage',
    );
    for (const r of runs(final)) assert.doesNotMatch(r, /\b(npm|yarn|pnpm)\b/, `no package manager in the final stage: ${r}`);
    for (const copy of only(final, 'COPY') as Copy[])
      assert.ok(fromFlag(copy), `the final stage copies from the build stage only: ${copy}`);
  });

  it('runs as a non-root user with the data folder a volume, bound to all interfaces, on the exposed port', () => {
    const user = only(final, 'USER').at(-1)?.getArgumentsContent() ?? 'root';
    assert.ok(!/^(root|0)(:|$)/.test(user), `USER ${user}`);
    const env = new Map(envOf(final));
    assert.equal(env.get('SERVICE_IDP_HOST'), '0.0.0.0');
    const data = env.get('SERVICE_IDP_DATA');
    assert.ok(data, 'SERVICE_IDP_DATA set');
    const volumes = only(final, 'VOLUME').flatMap((i) => i.getArguments().map((a) => a.getValue()));
    assert.ok(volumes.includes(data), `VOLUME ${data}: ${volumes}`);
    const exposed = only(final, 'EXPOSE').flatMap((i) => i.getArguments().map((a) => a.getValue()));
    assert.ok(exposed.includes(env.get('SERVICE_IDP_PORT') ?? ''), `EXPOSE ${env.get('SERVICE_IDP_PORT')}: ${exposed}`);
    assert.equal(env.get('NODE_ENV'), 'production');
  });

  it('checks health on /readyz with node itself, and takes SIGTERM with node as PID 1 (exec form)', () => {
    const check = healthcheckCommand();
    assert.equal(check[0], 'node', 'the slim image has no curl');
    assert.match(check.join(' '), /\/readyz\b/);
    assert.equal(one(final, 'STOPSIGNAL').getArgumentsContent(), 'SIGTERM');
    const entrypoint = jsonArgs(one(final, 'ENTRYPOINT'));
    const cmd = jsonArgs(one(final, 'CMD'));
    assert.equal(entrypoint[0], 'node', 'ENTRYPOINT in exec form, node first');
    assert.deepEqual(cmd, ['start'], 'CMD in exec form');
  });

  describe('its steps, run as a script in a scratch folder with this Node', { timeout: 600_000 }, () => {
    const scratch = mkdtempSync(join(tmpdir(), 'service-deploy-'));
    let service: ChildProcess | undefined;
    after(() => {
      if (service && service.exitCode === null && service.signalCode === null) service.kill('SIGKILL');
      rmSync(scratch, { recursive: true, force: true });
    });

    /** One folder per stage stands for its filesystem; an absolute path inside it maps under it. */
    const rootOf = (index: number) => join(scratch, `stage-${index}`);
    const inStage = (index: number, path: string) => join(rootOf(index), path);

    it('builds (COPY and RUN of every stage), starts as CMD says, passes its HEALTHCHECK and exits 0 on SIGTERM', async () => {
      const started = Date.now();
      const context = join(scratch, 'context');
      copyContext(context);
      const env: Record<string, string>[] = [];
      const stageUser: (string | undefined)[] = [];
      for (const [index, stage] of stages.entries()) {
        const vars: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
        let cwd = '/';
        mkdirSync(rootOf(index), { recursive: true });
        for (const instruction of stage.instructions) {
          const keyword = instruction.getKeyword();
          if (keyword === 'WORKDIR') {
            cwd = posix.resolve(cwd, instruction.getArgumentsContent() ?? '/');
            mkdirSync(inStage(index, cwd), { recursive: true });
          } else if (keyword === 'ENV') {
            for (const property of (instruction as Env).getProperties())
              vars[property.getName()] = (property.getValue() ?? '').replace(/\$\{?(\w+)\}?/g, (_, name: string) => vars[name] ?? '');
          } else if (keyword === 'USER') {
            stageUser[index] = instruction.getArgumentsContent() ?? undefined;
          } else if (keyword === 'COPY') {
            const copy = instruction as Copy;
            const from = fromFlag(copy);
            const fromIndex = from === undefined ? -1 : stages.findIndex((s, i) => s.name === from || String(i) === from);
            assert.ok(from === undefined || (fromIndex >= 0 && fromIndex < index), `COPY --from=${from}: an earlier stage`);
            const args = copy.getArguments().map((a) => a.getValue());
            const destination = args.pop() as string;
            const target = inStage(index, posix.resolve(cwd, destination));
            for (const source of args) {
              const path = fromIndex >= 0 ? inStage(fromIndex, source) : join(context, source);
              assert.ok(existsSync(path), `COPY ${source}: exists in ${from ? `stage ${from}` : 'the build context'}`);
              const into = statSync(path).isDirectory() ? target : destination.endsWith('/') ? join(target, basename(source)) : target;
              mkdirSync(statSync(path).isDirectory() ? into : dirname(into), { recursive: true });
              cpSync(path, into, { recursive: true, verbatimSymlinks: true });
            }
          } else if (keyword === 'RUN') {
            const command = instruction.getArgumentsContent() ?? '';
            if (/\bapt-get install\b/.test(command)) {
              // The image's system packages: this host must already have them (CI installs none).
              const packages =
                /apt-get install ([^&;]+)/
                  .exec(command)?.[1]
                  ?.split(/\s+/)
                  .filter((w) => w && !w.startsWith('-')) ?? [];
              const tools = packages.map((p) => (p === 'g++' ? 'g++' : p));
              for (const tool of tools) assert.ok(commandExists(tool), `${tool} (from: ${command}) is on this machine`);
              continue;
            }
            assert.doesNotMatch(
              command,
              /(^|\s)\/(?!dev\/null)/,
              `RUN uses paths under WORKDIR only (the interpreter maps no others): ${command}`,
            );
            const t = Date.now();
            const install = /\bnpm (ci|install)\b/.test(command);
            await run('sh', ['-ec', command], {
              cwd: inStage(index, cwd),
              env: {
                ...scriptEnv(),
                ...vars,
                npm_config_prefer_offline: 'true',
                ...(install && !COMPILE ? { npm_config_ignore_scripts: 'true' } : {}),
              },
              maxBuffer: 64 << 20,
            }).catch((error: { stderr?: string; stdout?: string }) => {
              throw new Error(`RUN ${command}\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
            });
            if (install && !COMPILE) {
              // The install scripts skipped: better-sqlite3's compile (minutes on two cores) is
              // replaced by this checkout's build of the same version for this same Node.
              const binary = 'node_modules/better-sqlite3/build/Release/better_sqlite3.node';
              const version = (dir: string) =>
                JSON.parse(readFileSync(join(dir, 'node_modules/better-sqlite3/package.json'), 'utf8')).version;
              assert.equal(version(inStage(index, cwd)), version(ROOT), "the lockfile installs the checkout's better-sqlite3");
              mkdirSync(dirname(inStage(index, join(cwd, binary))), { recursive: true });
              cpSync(join(ROOT, binary), inStage(index, join(cwd, binary)));
            }
            console.log(`# RUN ${command.slice(0, 60)}: ${((Date.now() - t) / 1000).toFixed(1)} s`);
          }
        }
        env.push(vars);
        if (index === stages.length - 1) {
          // What the final stage ships: production dependencies only.
          const app = inStage(index, cwd);
          for (const dev of ['typescript', 'tsdown', '@biomejs/biome', 'playwright-core', 'service-web', 'service-protocol'])
            assert.ok(!existsSync(join(app, 'node_modules', dev)), `${dev} is not in the image`);
          for (const dependency of ['fastify', 'better-sqlite3', 'pg'])
            assert.ok(existsSync(join(app, 'node_modules', dependency)), `${dependency} is in the image`);
        }
      }
      console.log(`# build steps: ${((Date.now() - started) / 1000).toFixed(1)} s`);

      // The container: ENTRYPOINT + CMD, the final stage's ENV, its data volume fresh.
      const last = stages.length - 1;
      const vars = env[last] as Record<string, string>;
      const port = await freePort();
      const data = inStage(last, vars.SERVICE_IDP_DATA as string);
      const containerEnv = {
        ...vars,
        PATH: (vars.PATH ?? '').replace(/(^|:)\/app\b/g, `$1${rootOf(last)}/app`),
        HOME: data,
        SERVICE_IDP_PORT: String(port),
        SERVICE_IDP_DATA: data,
        SERVICE_IDP_ISSUER: 'https://id.example.test',
        SMTP_URL: 'smtp://127.0.0.1:1',
      };
      const uid = IMAGE_USERS[stageUser[last] ?? ''];
      const asImageUser = process.getuid?.() === 0 && uid !== undefined ? { uid, gid: uid } : {};
      if ('uid' in asImageUser) {
        // Traversable by that user, and the data folder its own, as the image's --chown makes it.
        for (let dir = rootOf(last); dir.startsWith(scratch); dir = dirname(dir)) chmodSync(dir, 0o755);
        chownSync(data, uid as number, uid as number);
      }
      const mapArg = (arg: string) => (arg.startsWith('/') && existsSync(inStage(last, arg)) ? inStage(last, arg) : arg);
      const [program, ...args] = [...jsonArgs(one(final, 'ENTRYPOINT')), ...jsonArgs(one(final, 'CMD'))].map(mapArg);
      assert.equal(program, 'node');
      const output: string[] = [];
      const child = spawn(process.execPath, args, {
        cwd: inStage(last, '/app'),
        env: containerEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
        ...asImageUser,
      });
      service = child;
      child.stdout?.setEncoding('utf8').on('data', (chunk: string) => output.push(chunk));
      child.stderr?.setEncoding('utf8').on('data', (chunk: string) => output.push(chunk));
      const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
        child.once('exit', (code, signal) => resolve({ code, signal })),
      );

      // Ready: the HEALTHCHECK's own command passes.
      const [checkProgram, ...checkArgs] = healthcheckCommand();
      assert.equal(checkProgram, 'node');
      const deadline = Date.now() + READY_TIMEOUT_MS;
      let healthy = false;
      while (!healthy && Date.now() < deadline && child.exitCode === null) {
        healthy = await run(process.execPath, checkArgs, { env: containerEnv, timeout: 5_000 }).then(
          () => true,
          () => false,
        );
        if (!healthy) await new Promise((resolve) => setTimeout(resolve, 300));
      }
      assert.ok(healthy, `HEALTHCHECK passes within ${READY_TIMEOUT_MS / 1000} s:\n${output.join('')}`);
      assert.ok(existsSync(join(data, 'server-secret')), 'the server secret is in the data volume');

      // docker stop: SIGTERM, then SIGKILL after the grace period; it must not come to that.
      const stopAt = Date.now();
      child.kill('SIGTERM');
      const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), STOP_TIMEOUT_MS).unref());
      const result = await Promise.race([exited, timeout]);
      assert.notEqual(result, 'timeout', `exits within ${STOP_TIMEOUT_MS / 1000} s of SIGTERM:\n${output.join('')}`);
      assert.deepEqual(result, { code: 0, signal: null }, output.join(''));
      assert.match(output.join(''), /service-idp stopped \(SIGTERM\)/);
      console.log(
        `# stopped ${((Date.now() - stopAt) / 1000).toFixed(1)} s after SIGTERM; in all ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
    });
  });
});

describe('compose.yaml', () => {
  const compose = parseYaml(readFileSync(join(ROOT, 'compose.yaml'), 'utf8'), { merge: true }) as {
    services: Record<string, Service>;
    volumes?: Record<string, unknown>;
  };
  interface Service {
    image?: string;
    build?: unknown;
    command?: string[];
    environment?: Record<string, string>;
    volumes?: string[];
    ports?: string[];
    healthcheck?: { test: string[] };
    depends_on?: Record<string, { condition: string }>;
  }
  const { services } = compose;
  const nodes = Object.entries(services).filter(([name, s]) => s.build !== undefined && /^idp-\d+$/.test(name));

  it('runs PostgreSQL 15 with a health check', () => {
    const postgres = services.postgres as Service;
    assert.match(postgres.image ?? '', /^postgres:15\b/);
    assert.match((postgres.healthcheck?.test ?? []).join(' '), /pg_isready/);
  });

  it('runs two nodes of the image built here on one database and one data folder (the same server secret)', () => {
    assert.equal(nodes.length, 2, nodes.map(([name]) => name).join(' '));
    const urls = new Set(nodes.map(([, s]) => s.environment?.DATABASE_URL));
    assert.equal(urls.size, 1);
    assert.match([...urls][0] ?? '', /^postgres:\/\/[^@]+@postgres:5432\//);
    const issuers = new Set(nodes.map(([, s]) => s.environment?.SERVICE_IDP_ISSUER));
    assert.equal(issuers.size, 1, 'one issuer');
    const dataVolumes = new Set(nodes.map(([, s]) => s.volumes?.find((v) => v.split(':')[1] === '/data')));
    assert.equal(dataVolumes.size, 1, 'one data volume');
    assert.ok(compose.volumes && ([...dataVolumes][0]?.split(':')[0] as string) in compose.volumes, 'a named volume');
    for (const [name, node] of nodes) {
      assert.equal(node.ports, undefined, `${name} is reached through nginx only`);
      const [first] = Object.entries(node.depends_on ?? {});
      assert.ok(first, `${name} waits for the database`);
      const init = services[first[0]] as Service;
      // Either the database itself, or a one-shot that waits for it (creating the secret once).
      if (first[0] !== 'postgres') {
        assert.equal(first[1].condition, 'service_completed_successfully');
        assert.deepEqual(init.command, ['migrate']);
        assert.equal(init.depends_on?.postgres?.condition, 'service_healthy');
        assert.equal(init.environment?.DATABASE_URL, node.environment?.DATABASE_URL);
        assert.deepEqual(init.volumes, node.volumes);
      } else assert.equal(first[1].condition, 'service_healthy');
      assert.equal(
        node.environment?.SERVICE_IDP_TRUST_PROXY,
        (services.nginx as { networks: Record<string, { ipv4_address: string }> }).networks.backend?.ipv4_address,
      );
    }
  });

  it('puts nginx with docs/nginx.example.conf in front, once both nodes are healthy (the image HEALTHCHECK)', async () => {
    const nginx = services.nginx as Service;
    for (const [name] of nodes) assert.equal(nginx.depends_on?.[name]?.condition, 'service_healthy', name);
    const mount = nginx.volumes?.find((v) => v.startsWith('./docs/nginx.example.conf:'));
    assert.ok(mount, 'mounts docs/nginx.example.conf');
    const mounted = mount.split(':')[1] as string;
    // Run the service's own rendering of the example (everything before the exec of nginx).
    const [shell, flag, script] = nginx.command ?? [];
    assert.deepEqual([shell, flag], ['sh', '-c']);
    const render = (script ?? '').split(' && exec ')[0] as string;
    assert.match(script ?? '', / && exec nginx -g 'daemon off;'$/);
    const dir = mkdtempSync(join(tmpdir(), 'service-deploy-nginx-'));
    try {
      const rendered = join(dir, 'nginx.conf');
      const local = render.replace(mounted, join(ROOT, 'docs/nginx.example.conf')).replace('/etc/nginx/nginx.conf', rendered);
      assert.notEqual(local, render, 'the command reads the mounted example');
      execFileSync('sh', ['-c', local]);
      const conf = readFileSync(rendered, 'utf8');
      const upstream = [...conf.matchAll(/^\s*server (\S+) max_fails/gm)].map((m) => m[1]);
      assert.deepEqual(
        upstream,
        nodes.map(([name]) => `${name}:8080`),
        'the upstream block lists the two nodes',
      );
      assert.match(conf, /^\s*listen 8080;/m);
      assert.ok(nginx.ports?.includes('8080:8080'));
      if (!NGINX) return;
      // nginx -t on it, the node names pointed at loopback (this machine cannot resolve them).
      const checked = conf
        .replace(/server idp-\d+:8080/g, 'server 127.0.0.1:8080')
        .replace('listen 8080;', 'listen 127.0.0.1:8080;')
        .replace(
          'http {',
          `http {\n${['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${dir}/${t};`).join('\n')}\n  access_log off;`,
        );
      writeFileSync(rendered, checked);
      await run(NGINX, ['-t', '-p', dir, '-c', rendered, '-g', `pid ${dir}/nginx.pid; error_log ${dir}/error.log;`]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('deploy/service-idp.service', () => {
  const unit = readFileSync(join(ROOT, 'deploy/service-idp.service'), 'utf8');
  const settings = new Map<string, string[]>();
  for (const line of unit.split('\n')) {
    const match = /^(\w+)=(.*)$/.exec(line);
    if (match) settings.set(match[1] as string, [...(settings.get(match[1] as string) ?? []), match[2] as string]);
  }
  const setting = (name: string) => settings.get(name)?.at(-1);

  it('runs `service-idp start` as its own user, hardened, restarted on failure, stopped with SIGTERM', () => {
    assert.match(setting('ExecStart') ?? '', /\/service-idp start$/);
    assert.ok(setting('User') && setting('User') !== 'root');
    assert.ok(setting('EnvironmentFile'));
    assert.equal(setting('Restart'), 'on-failure');
    assert.equal(setting('KillSignal'), 'SIGTERM');
    assert.equal(setting('NoNewPrivileges'), 'yes');
    assert.equal(setting('ProtectSystem'), 'strict');
    assert.equal(setting('PrivateTmp'), 'yes');
    const data = /SERVICE_IDP_DATA=(\S+)/.exec(settings.get('Environment')?.join(' ') ?? '')?.[1];
    assert.ok(data && setting('ReadWritePaths')?.split(/\s+/).includes(data), `ReadWritePaths has the data folder ${data}`);
    assert.equal(settings.get('MemoryDenyWriteExecute'), undefined, "V8's JIT needs writable executable memory");
  });

  it('passes systemd-analyze verify without a warning', {
    skip: !commandExists('systemd-analyze') && 'systemd-analyze not installed',
  }, async () => {
    // verify checks that ExecStart's program exists: point it at this checkout's, which the
    // unit's /opt/service-idp/node_modules/.bin/service-idp is once installed.
    const dir = mkdtempSync(join(tmpdir(), 'service-deploy-unit-'));
    try {
      const program = (setting('ExecStart') ?? '').split(' ')[0] as string;
      const local = existsSync(program)
        ? unit
        : unit.replace(`ExecStart=${program} `, `ExecStart=${join(ROOT, 'packages/idp/bin/service-idp.js')} `);
      writeFileSync(join(dir, 'service-idp.service'), local);
      const { stdout, stderr } = await run('systemd-analyze', ['verify', join(dir, 'service-idp.service')]);
      assert.equal(`${stdout}${stderr}`.trim(), '', 'no warning');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** The build context: tracked (and new, not ignored) files, less what .dockerignore excludes. */
function copyContext(into: string): void {
  const ignore = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => ({ negate: line.startsWith('!'), pattern: globToRegExp(line.replace(/^!/, '').replace(/^\/|\/$/g, '')) }));
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter(Boolean);
  let copied = 0;
  for (const file of files) {
    // A path is excluded when it or a parent folder matches the last matching pattern.
    const parts = file.split('/');
    let excluded = false;
    for (const rule of ignore) if (parts.some((_, i) => rule.pattern.test(parts.slice(0, i + 1).join('/')))) excluded = !rule.negate;
    if (excluded || !existsSync(join(ROOT, file))) continue;
    mkdirSync(dirname(join(into, file)), { recursive: true });
    cpSync(join(ROOT, file), join(into, file));
    copied++;
  }
  assert.ok(copied > 100, `${copied} files in the build context`);
}

/** .dockerignore's patterns (Go filepath.Match plus **). */
function globToRegExp(glob: string): RegExp {
  let source = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === '*' && glob[i + 1] === '*') {
      source += glob[i + 2] === '/' ? '(?:.*/)?' : '.*';
      i += glob[i + 2] === '/' ? 2 : 1;
    } else if (c === '*') source += '[^/]*';
    else if (c === '?') source += '[^/]';
    else source += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

/** The host's environment for RUN, without the calling `npm run`'s configuration. */
function scriptEnv(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => !/^npm_/i.test(e[0]) && e[1] !== undefined));
}

function commandExists(name: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
