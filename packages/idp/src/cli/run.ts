import { existsSync, readFileSync } from 'node:fs';
import type { ServiceConfig } from '../config.js';
import { loadConfig } from '../config.js';
import { PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX } from '../defaults.js';
import { ConfigError, ServiceError } from '../errors.js';
import { type Io, UsageError } from './command.js';
import { sinceTime, wholeNumber } from './format.js';
import { findCommand, helpText, parseCommandLine, refuseUnreadFlags } from './registry.js';

// Only the command line, the configuration and the registry are loaded up front. A command
// imports the rest when it runs: `start` the HTTP app (../index.js), the others the database and
// the stores or flows they use (open.ts), so `--help` or a bad command line loads no
// database and no operator command loads Fastify (tests and scripts run these by the hundred).

const MAIL_LIMIT_DEFAULT = 20;
const MAIL_LIMIT_MAX = 1000;

/**
 * Runs one command line (the words after `service-idp`) and returns its exit status: 0 done,
 * 1 failed, 2 bad command line or configuration, or -1 when `start` keeps running. Every error
 * ends here as one line on `io.err`; nothing exits the process or reads its environment (the bin,
 * cli.ts, hands over process.env and sets the exit code), so tests run commands in-process.
 */
export async function runCli(argv: string[], io: Io): Promise<number> {
  try {
    return await run(argv, io);
  } catch (error) {
    // A request the service refuses as malformed (a bad cursor or event type) is a bad command line too.
    const usage = error instanceof ConfigError || (error instanceof ServiceError && error.code === 'ERR_REQUEST_INVALID');
    const message = (error instanceof Error ? error.message : String(error)).replace(/\.$/, '');
    io.err(`service-idp: ${message}${usage ? '. See service-idp --help.' : ''}\n`);
    if (!usage && error instanceof Error && io.env.SERVICE_IDP_LOG_LEVEL === 'debug') io.err(`${error.stack}\n`);
    return usage ? 2 : 1;
  }
}

async function run(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommandLine(argv);
  if (values.version) {
    io.out(`${packageVersion()}\n`);
    return 0;
  }
  if (values.help || positionals[0] === 'help') {
    io.out(helpText());
    return 0;
  }
  if (positionals.length === 0) {
    io.err(helpText());
    return 2;
  }
  const found = findCommand(positionals);
  if (!found) throw new UsageError(`unknown command "${positionals.slice(0, 2).join(' ')}"`);
  refuseUnreadFlags(found.command, values);
  // Flags > environment > file > defaults: the file's settings go under the environment's.
  const file = values.config ?? (io.env.SERVICE_IDP_CONFIG || undefined);
  const settings = file === undefined ? io.env : { ...(await import('../config-file.js')).readConfigFile(file), ...definedOnly(io.env) };
  const config = loadConfig(
    {
      port: values.port,
      host: values.host,
      data: values.data,
      database: values.database,
      issuer: values.issuer,
      'test-mode': values['test-mode'],
      'dev-inbox': values['dev-inbox'],
      'metrics-port': values['metrics-port'],
      'console-port': values['console-port'],
    },
    settings,
  );
  const { command, operands } = found;
  const data = command.data ?? 'existing';
  const args = { values, operands, config, settings, limit: 0, since: undefined as number | undefined };
  if (data === 'existing') {
    // Every data command checks --limit and --since, whether it reads them or not.
    args.limit = command.paged
      ? wholeNumber('--limit', values.limit, PAGE_SIZE_DEFAULT, 1, PAGE_SIZE_MAX)
      : wholeNumber('--limit', values.limit, MAIL_LIMIT_DEFAULT, 1, MAIL_LIMIT_MAX);
    args.since = sinceTime(values.since, Date.now());
    if (!existsSync(config.dataDir))
      throw new UsageError(
        `no data folder ${config.dataDir}: check --data (or SERVICE_IDP_DATA); \`service-idp start\` makes it on its first run`,
      );
  }
  try {
    return await command.run(args, io);
  } catch (error) {
    throw await unreachableDatabase(error, config);
  }
}

/** The package's version, from its package.json (two levels above dist/cli/ and src/cli/). */
function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

/** The environment's set variables: an empty one is unset (as loadConfig reads it), so it leaves the file's setting. */
const definedOnly = (env: NodeJS.ProcessEnv) =>
  Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''));

/**
 * A database that cannot be reached or entered (refused, unknown host, wrong password, no such
 * database) is a configuration error: one line naming the database, its password hidden.
 */
async function unreachableDatabase(error: unknown, config: ServiceConfig): Promise<unknown> {
  if (!config.databaseUrl || !(error instanceof Error) || error instanceof ConfigError) return error;
  const { describeDatabase, isDatabaseUnavailable } = await import('../storage/database.js');
  const code = (error as { code?: unknown }).code;
  // 28P01 wrong password, 28000 no such role or no access, 3D000 no such database.
  if (!isDatabaseUnavailable(error) && code !== '28P01' && code !== '28000' && code !== '3D000') return error;
  const reason = error.message || String(code);
  return new ConfigError(`cannot use the database ${describeDatabase(config)} (--database / DATABASE_URL): ${reason}`);
}
