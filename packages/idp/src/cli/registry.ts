import { type ParseArgsConfig, parseArgs } from 'node:util';
import { ENVIRONMENT } from '../config.js';
import { adminKeyCommands } from './admin-keys.js';
import { apis } from './apis.js';
import { backups } from './backup.js';
import { clients } from './clients.js';
import { type Command, FLAGS, type Flag, SHARED_FLAGS, UsageError, type Values } from './command.js';
import { configCheck } from './config.js';
import { connections } from './connections.js';
import { devices } from './devices.js';
import { events } from './events.js';
import { rotate } from './keys.js';
import { mailboxes } from './mail.js';
import { operatorCommands } from './operators.js';
import { orgDomains } from './org-domains.js';
import { orgs } from './orgs.js';
import { roles, userRoles } from './roles.js';
import { settings } from './settings.js';
import { migrate, start } from './start.js';
import { users } from './users.js';
import { webhooks } from './webhooks.js';

/** Every command, in the order --help lists them. */
export const COMMANDS: readonly Command[] = [
  start,
  ...clients,
  ...users,
  ...userRoles,
  ...devices,
  events,
  ...adminKeyCommands,
  ...operatorCommands,
  ...webhooks,
  ...connections,
  ...apis,
  ...roles,
  ...orgs,
  ...orgDomains,
  ...settings,
  rotate,
  ...mailboxes,
  migrate,
  ...backups,
  configCheck,
];

/** The words that name a group of commands (`clients` in `clients list`): a group alone is no command. */
const GROUPS = new Set(COMMANDS.filter((c) => c.name.includes(' ')).map((c) => c.name.split(' ')[0]));

/**
 * The command the first words name: `users roles add`, `clients list`, or `events` (words after
 * a one-word command are its operands); the longest name that matches.
 */
export function findCommand(positionals: string[]): { command: Command; operands: string[] } | undefined {
  const [first, second, third] = positionals;
  const names =
    first !== undefined && GROUPS.has(first)
      ? [`${first} ${second ?? ''} ${third ?? ''}`.trim(), `${first} ${second ?? ''}`.trim()]
      : [first];
  const command = names.map((name) => COMMANDS.find((c) => c.name === name)).find((found) => found !== undefined);
  // Operands follow the name: `backup FILE`, `clients delete CLIENT_ID`.
  return command && { command, operands: positionals.slice(command.name.split(' ').length) };
}

const ENVIRONMENT_WIDTH = Math.max(...Object.keys(ENVIRONMENT).map((name) => name.length)) + 2;

/** --help: each command's usage in registry order, then the shared options, the environment and the exit status. */
export function helpText(): string {
  return `service-idp — passwordless identity service

Usage:
${COMMANDS.map((c) => c.usage).join('')}
Options shared by every command:
  --data DIR       data folder (server secret; SQLite database unless --database), default ./data.
                   Only start makes it: the other commands refuse a folder that is not there.
  --database URL   postgres://user:pass@host:5432/db: use PostgreSQL, shared by every node
                   (default: DATABASE_URL, else SQLite in the data folder). Every node and
                   command needs the same data folder secret (copy DIR/server-secret).
  --config FILE    JSON object of settings named as in the environment table below
                   ({"SERVICE_IDP_PORT": 8080}); the environment and flags win over it.
  --version        print the version and exit.

Environment:
${Object.entries(ENVIRONMENT)
  .map(([name, text]) => `  ${name.padEnd(ENVIRONMENT_WIDTH)}${text}`)
  .join('\n')}

Exit status: 0 done, 1 failed, 2 bad command line or configuration (the message says which).
`;
}

/** The flags the command line knows: the shared ones and every command's (each command takes only its own: refuseUnreadFlags). */
export const ACCEPTED_FLAGS: ReadonlySet<Flag> = new Set([...SHARED_FLAGS, ...COMMANDS.flatMap((c) => c.flags)]);

/**
 * Refuses a flag the command does not read, naming it (exit 2): ignored, it would be a setting
 * dropped in silence, as `--mfa-policy` on `clients create` once was. One rule for every command,
 * from the flags each declares (Command.flags) and the shared ones.
 */
export function refuseUnreadFlags(command: Command, values: Values): void {
  for (const flag of Object.keys(values) as Flag[])
    if (!SHARED_FLAGS.includes(flag) && !command.flags.includes(flag))
      throw new UsageError(`${command.name} does not take --${flag}; nothing was done`);
}

/** parseArgs with our own one-line messages instead of Node's. */
export function parseCommandLine(argv: string[]): { values: Values; positionals: string[] } {
  const options: NonNullable<ParseArgsConfig['options']> = Object.fromEntries([...ACCEPTED_FLAGS].map((flag) => [flag, FLAGS[flag]]));
  // `--limit -3`: keep a negative number as the option's value so the range check can name it.
  const args = [...argv];
  for (let i = 0; i < args.length - 1; i++) {
    const name = args[i]?.replace(/^--/, '') ?? '';
    if (args[i]?.startsWith('--') && options[name]?.type === 'string' && /^-\d/.test(args[i + 1] ?? '')) {
      args.splice(i, 2, `${args[i]}=${args[i + 1]}`);
    }
  }
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true }) as { values: Values; positionals: string[] };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const option = /option '(-[^' ]+)/i.exec(message)?.[1] ?? 'an option';
    if (/^Unknown option/.test(message)) throw new UsageError(`unknown option ${option}`);
    if (/does not take an argument/.test(message)) throw new UsageError(`${option} takes no value`);
    throw new UsageError(`${option} needs a value`);
  }
}
