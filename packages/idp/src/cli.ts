#!/usr/bin/env node
import { type Io, UsageError } from './cli/command.js';
import { sinceTime, wholeNumber } from './cli/format.js';
import { findCommand, helpText, parseCommandLine } from './cli/registry.js';
/**
 * service-idp: run the identity service and manage its data. Every command reads the same
 * --data and --database flags and environment as `start`, and works while the service runs.
 * The commands are in cli/, one file per group, listed in cli/registry.ts.
 */
import { ConfigError, loadConfig } from './config.js';
import { PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX } from './defaults.js';
import { ServiceError } from './errors.js';

// Only the command line, the configuration and the registry are loaded up front. A command
// imports the rest when it runs: `start` the HTTP app (./index.js), the others the database and
// the stores or flows they use (cli/open.ts), so `--help` or a bad command line loads no
// database and no operator command loads Fastify (tests and scripts run these by the hundred).

const MAIL_LIMIT_DEFAULT = 20;
const MAIL_LIMIT_MAX = 1000;

const io: Io = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
};

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandLine(argv);
  if (values.help || positionals[0] === 'help') {
    io.out(helpText());
    return 0;
  }
  if (positionals.length === 0) {
    io.err(helpText());
    return 2;
  }
  const config = loadConfig({
    port: values.port,
    host: values.host,
    data: values.data,
    database: values.database,
    issuer: values.issuer,
    'test-mode': values['test-mode'],
    'dev-inbox': values['dev-inbox'],
    'metrics-port': values['metrics-port'],
  });
  const found = findCommand(positionals);
  if (!found) throw new UsageError(`unknown command "${positionals.slice(0, 2).join(' ')}"`);
  const { command, operands } = found;
  if (command.name === 'start') return command.run({ values, operands, config, limit: 0, since: undefined }, io);
  // Every data command checks --limit and --since, whether it reads them or not.
  const limit = command.paged
    ? wholeNumber('--limit', values.limit, PAGE_SIZE_DEFAULT, 1, PAGE_SIZE_MAX)
    : wholeNumber('--limit', values.limit, MAIL_LIMIT_DEFAULT, 1, MAIL_LIMIT_MAX);
  const since = sinceTime(values.since, Date.now());
  return command.run({ values, operands, config, limit, since }, io);
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (error: unknown) => {
    // A request the service refuses as malformed (a bad cursor or event type) is a bad command line too.
    const usage = error instanceof ConfigError || (error instanceof ServiceError && error.code === 'ERR_REQUEST_INVALID');
    const message = (error instanceof Error ? error.message : String(error)).replace(/\.$/, '');
    process.stderr.write(`service-idp: ${message}${usage ? '. See service-idp --help.' : ''}\n`);
    if (!usage && error instanceof Error && process.env.SERVICE_IDP_LOG_LEVEL === 'debug') process.stderr.write(`${error.stack}\n`);
    process.exitCode = usage ? 2 : 1;
  },
);
