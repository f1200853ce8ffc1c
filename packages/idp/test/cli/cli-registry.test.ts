/**
 * The CLI's command registry (src/cli/): every command file's commands are registered and in
 * --help, every flag is declared by a command that reads it, and the built CLI loads lazily
 * (--help no database, `clients list` neither the HTTP app nor the JOSE library).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type Command, FLAGS, type Flag, SHARED_FLAGS, UsageError } from '../../src/cli/command.js';
import { ACCEPTED_FLAGS, COMMANDS, findCommand, helpText, refuseUnreadFlags } from '../../src/cli/registry.js';

const CLI_DIR = fileURLToPath(new URL('../../src/cli/', import.meta.url));
const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
/** `loaded URL` for a module of the built service (dist/), for the lazy-loading checks. */
const built = (path: string) => new RegExp(`loaded ${new URL(`../../dist/${path}`, import.meta.url).href.replaceAll('.', '\\.')}`);
const dependency = (name: string) => new RegExp(`loaded \\S*/node_modules/${name}/`);

const isCommand = (value: unknown): value is Command =>
  typeof value === 'object' && value !== null && 'name' in value && 'usage' in value && 'run' in value;

describe('service-idp command registry', () => {
  it('registers every command that a file in src/cli/ exports, once', async () => {
    const exported: Command[] = [];
    for (const file of readdirSync(CLI_DIR).filter((name) => name.endsWith('.ts'))) {
      const module: Record<string, unknown> = await import(pathToFileURL(join(CLI_DIR, file)).href);
      for (const value of Object.values(module)) exported.push(...(Array.isArray(value) ? value : [value]).filter(isCommand));
    }
    assert.ok(exported.length >= 30, `the command files export the commands (${exported.length})`);
    for (const command of exported) assert.ok(COMMANDS.includes(command), `${command.name} is registered`);
    const names = COMMANDS.map((c) => c.name);
    assert.deepEqual(names, [...new Set(names)], 'no name twice');
    for (const name of names) assert.equal(findCommand([...name.split(' '), 'x'])?.command.name, name);
  });

  it('lists every command in --help, in registry order, with the flags it reads', () => {
    const help = helpText();
    let at = 0;
    for (const command of COMMANDS) {
      const found = help.indexOf(`  service-idp ${command.name}`, at);
      assert.ok(found >= at, `${command.name} is in --help after the one before`);
      at = found;
      for (const flag of command.flags) assert.match(command.usage, new RegExp(`--${flag}\\b`), `${command.name}'s usage names --${flag}`);
    }
  });

  it('accepts exactly the flags some command reads', () => {
    assert.deepEqual([...ACCEPTED_FLAGS].sort(), Object.keys(FLAGS).sort());
  });

  it('refuses on every command each flag it does not read, naming it, and takes its own and the shared ones', () => {
    for (const command of COMMANDS)
      for (const flag of Object.keys(FLAGS) as Flag[]) {
        const given = { [flag]: FLAGS[flag].type === 'boolean' ? true : 'x' };
        if (SHARED_FLAGS.includes(flag) || command.flags.includes(flag)) assert.doesNotThrow(() => refuseUnreadFlags(command, given));
        else
          assert.throws(
            () => refuseUnreadFlags(command, given),
            (error: unknown) => error instanceof UsageError && error.message.includes(`does not take --${flag};`),
            `${command.name} --${flag}`,
          );
      }
  });

  describe('loads lazily', () => {
    let dir: string;
    let hook: string;
    before(() => {
      dir = mkdtempSync(join(tmpdir(), 'service-idp-cli-registry-'));
      // Logs every module the process resolves, one URL a line, on stderr.
      writeFileSync(
        join(dir, 'hook.mjs'),
        'export async function resolve(specifier, context, next) { const r = await next(specifier, context); process._rawDebug("loaded " + r.url); return r; }\n',
      );
      hook = join(dir, 'register.mjs');
      writeFileSync(
        hook,
        `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(dir, 'hook.mjs')).href)});\n`,
      );
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    const loaded = (args: string[]) =>
      new Promise<string>((resolve, reject) =>
        execFile(process.execPath, ['--import', hook, CLI, ...args], { env: { PATH: process.env.PATH ?? '' } }, (error, _out, stderr) =>
          error ? reject(new Error(`${args.join(' ')}: ${stderr}`)) : resolve(stderr),
        ),
      );

    it('--help loads no database', async () => {
      const modules = await loaded(['--help']);
      assert.match(modules, built('cli/registry.js'));
      for (const unloaded of [dependency('kysely'), dependency('better-sqlite3'), built('storage/'), built('context.js')])
        assert.doesNotMatch(modules, unloaded);
    });

    it('config check and --version load no database, and no schema library without a --config file', async () => {
      for (const args of [['config', 'check'], ['--version']]) {
        const modules = await loaded(args);
        for (const unloaded of [
          dependency('kysely'),
          dependency('better-sqlite3'),
          dependency('typebox'),
          built('storage/'),
          built('context.js'),
        ])
          assert.doesNotMatch(modules, unloaded, args.join(' '));
      }
    });

    it('clients list loads neither the HTTP app nor the whole context nor jose', async () => {
      const data = join(dir, 'data');
      mkdirSync(data);
      const modules = await loaded(['clients', 'list', '--data', data]);
      assert.match(modules, built('clients/store.js'));
      for (const unloaded of [dependency('fastify'), dependency('jose'), built('context.js'), built('index.js')])
        assert.doesNotMatch(modules, unloaded);
    });
  });
});
