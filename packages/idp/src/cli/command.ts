import type { ServiceConfig } from '../config.js';
import { ConfigError } from '../errors.js';

/**
 * Every flag of the command line, as node:util parseArgs reads it. A command lists the ones it
 * reads (Command.flags); a flag it does not read is refused (registry.ts refuseUnreadFlags),
 * never dropped in silence: `clients create --mfa-policy required` once made a lax client.
 */
export const FLAGS = {
  port: { type: 'string' },
  host: { type: 'string' },
  data: { type: 'string' },
  database: { type: 'string' },
  issuer: { type: 'string' },
  'test-mode': { type: 'boolean' },
  'dev-inbox': { type: 'boolean' },
  'metrics-port': { type: 'string' },
  'console-port': { type: 'string' },
  name: { type: 'string' },
  origin: { type: 'string', multiple: true },
  'redirect-uri': { type: 'string', multiple: true },
  'post-logout-redirect-uri': { type: 'string', multiple: true },
  'backchannel-logout-uri': { type: 'string' },
  'backchannel-logout-session-required': { type: 'string' },
  'frontchannel-logout-uri': { type: 'string' },
  'frontchannel-logout-session-required': { type: 'string' },
  public: { type: 'boolean' },
  // Machine clients (cli/clients.ts): client_credentials, private_key_jwt.
  machine: { type: 'boolean' },
  jwks: { type: 'string' },
  'jwks-uri': { type: 'string' },
  json: { type: 'boolean' },
  'mfa-policy': { type: 'string' },
  'passkey-mfa': { type: 'string' },
  dpop: { type: 'string' },
  par: { type: 'string' },
  'third-party': { type: 'string' },
  'device-grant': { type: 'string' },
  'sms-countries': { type: 'string' },
  'mail-domains': { type: 'string' },
  'id-token-alg': { type: 'string' },
  logo: { type: 'string' },
  accent: { type: 'string' },
  'display-name': { type: 'string' },
  'terms-url': { type: 'string' },
  'privacy-url': { type: 'string' },
  'mail-sender-name': { type: 'string' },
  'sp-signing-key': { type: 'string' },
  'sp-encryption-key': { type: 'string' },
  limit: { type: 'string' },
  email: { type: 'string' },
  user: { type: 'string' },
  type: { type: 'string' },
  since: { type: 'string' },
  'created-since': { type: 'string' },
  'created-before': { type: 'string' },
  cursor: { type: 'string' },
  url: { type: 'string' },
  events: { type: 'string' },
  status: { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  force: { type: 'boolean' },
  config: { type: 'string' },
  version: { type: 'boolean' },
  role: { type: 'string' },
  // connections (cli/connections.ts)
  preset: { type: 'string' },
  'upstream-issuer': { type: 'string' },
  'client-id': { type: 'string' },
  'client-secret': { type: 'string' },
  'client-secret-file': { type: 'string' },
  scopes: { type: 'string' },
  clients: { type: 'string' },
  'keep-tokens': { type: 'string' },
  'apple-team-id': { type: 'string' },
  'apple-key-id': { type: 'string' },
  connection: { type: 'string' },
  // organizations (cli/orgs.ts) and their domains (cli/org-domains.ts)
  'mfa-required': { type: 'string' },
  'manages-organization': { type: 'string' },
  'external-id': { type: 'string' },
  'email-code': { type: 'string' },
  'join-role': { type: 'string' },
  subject: { type: 'string' },
  // APIs and roles (cli/apis.ts, cli/roles.ts)
  identifier: { type: 'string' },
  permissions: { type: 'string' },
  'introspection-client': { type: 'string' },
  'roles-in-token': { type: 'string' },
  grant: { type: 'string', multiple: true },
  // clients registration-token (cli/clients.ts): how long the initial access token lasts.
  hours: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export type Flag = keyof typeof FLAGS;

/** Read by every command: where the data is, the configuration file, --version and --help. */
export const SHARED_FLAGS: readonly Flag[] = ['data', 'database', 'config', 'version', 'help'];

/** The configuration flags (cli.ts hands them to loadConfig): read by `start` and `config check`, which shows what start would use. */
export const CONFIG_FLAGS: readonly Flag[] = ['port', 'host', 'issuer', 'test-mode', 'dev-inbox', 'metrics-port', 'console-port'];

/** The parsed flags: a string, a list for repeatable ones, true for switches. */
export type Values = {
  [F in Flag]?: (typeof FLAGS)[F] extends { type: 'boolean' } ? boolean : (typeof FLAGS)[F] extends { multiple: true } ? string[] : string;
};

export interface CommandArgs {
  values: Values;
  /** The words after the command's name (CLIENT_ID, ID|EMAIL, …). */
  operands: string[];
  config: ServiceConfig;
  /** The settings the configuration was read from: the configuration file's under the environment's. */
  settings: NodeJS.ProcessEnv;
  /** --limit, checked against the command's range (Command.paged). */
  limit: number;
  /** --since as epoch milliseconds. */
  since: number | undefined;
}

/**
 * What a command gets of its process: where it writes, the environment it reads and how `start`
 * stays up. The bin (cli.ts) hands over the process's own; tests run commands in-process with
 * their own (runCli in cli/run.ts).
 */
export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** The environment settings are read from (the process's, in the bin). */
  env: NodeJS.ProcessEnv;
  /** stdout is a terminal: `start` logs readably unless SERVICE_IDP_LOG_FORMAT says otherwise. */
  isTTY: boolean;
  /** `start` keeps running: `stop` runs on SIGINT or SIGTERM, and the process ends after it (the bin's part). */
  onStopSignal(stop: (signal: NodeJS.Signals) => Promise<void>): void;
}

export interface Command {
  /** As typed: `clients list`, `events`. */
  name: string;
  /** Its entry in --help, printed as is: usage line(s), then what it does (may be empty when the next entry says it). */
  usage: string;
  /** The flags it reads besides SHARED_FLAGS; any other is refused (exit 2). */
  flags: readonly Flag[];
  /** --limit is a page size (PAGE_SIZE_DEFAULT, at most PAGE_SIZE_MAX) rather than a message count (mail, sms). */
  paged?: boolean;
  /**
   * What it needs of the data folder: `existing` (the default: a folder that is not there is a
   * mistyped --data, refused rather than made), `created` (start makes it), `none` (config check).
   */
  data?: 'existing' | 'created' | 'none';
  /** Returns the exit status, or -1 to keep the process running (start). Imports what it uses when it runs. */
  run(args: CommandArgs, io: Io): Promise<number>;
}

/** A bad command line: one line naming the problem, exit status 2. */
export class UsageError extends ConfigError {}
