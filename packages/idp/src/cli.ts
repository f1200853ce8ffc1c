#!/usr/bin/env node
/**
 * service-idp: run the identity service and manage its data. Every command reads the same
 * --data and --database flags and environment as `start`, and works while the service runs.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { canonicalEmail, Paths } from 'service-protocol';
import { ADMIN_PREFIX } from './admin/prefix.js';
import { ConfigError, type ConfigFlags, ENVIRONMENT, ISSUER_FILE, loadConfig } from './config.js';
import { PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX } from './defaults.js';
import { defaultDeviceName } from './devices/user-agent.js';
import { ServiceError } from './errors.js';

// Only what every command needs is imported above. A command imports the rest when it runs:
// `start` the HTTP app (./index.js), the others storage and flows (./context.js), so `--help`
// or a bad command line loads no database and no operator command loads Fastify (tests and
// scripts run these commands by the hundred).

const ENVIRONMENT_WIDTH = Math.max(...Object.keys(ENVIRONMENT).map((name) => name.length)) + 2;

const HELP = `service-idp — passwordless identity service

Usage:
  service-idp start [--port 8080] [--host 127.0.0.1] [--data ./data] [--database URL] [--issuer URL] [--test-mode]
                    [--dev-inbox] [--metrics-port PORT]
      Run the service. The first start creates the data folder, the database, a signing
      key and the server secret; later starts reuse them. --dev-inbox serves /dev/mail to this
      machine; --metrics-port serves /metrics on a separate loopback listener.
  service-idp clients create --name NAME [--origin URL ...] [--redirect-uri URL ...] [--public]
                             [--post-logout-redirect-uri URL ...] [--id-token-alg RS256|ES256|EdDSA] [--json]
      Register a client application. Prints its clientId, publishableKey (browser, valid
      only from the listed origins) and secretKey (backend) once; they cannot be shown again.
      --redirect-uri: where /authorize may send codes (exact match; repeat for several).
      --public: no secretKey (a single-page or native app); the token endpoint takes its
      client_id alone and requires PKCE S256. Needs at least one --origin or --redirect-uri.
      --post-logout-redirect-uri: where the end-session endpoint (/logout) may send the browser
      back after signing out (exact match; repeat for several).
  service-idp clients update CLIENT_ID [--mfa-policy optional|required] [--id-token-alg RS256|ES256|EdDSA]
                             [--post-logout-redirect-uri URL ...] [--passkey-mfa yes|no]
      optional (default): users choose whether to enroll in MFA; required: no code without it.
      --id-token-alg: how the client's ID tokens are signed (default RS256).
      --post-logout-redirect-uri: replaces the list (one empty value, "", clears it).
      --passkey-mfa: yes (default): a passkey sign-in also passes this client's MFA; no: the
      user's MFA step follows it.
  service-idp clients delegation-keys CLIENT_ID [--json] [--issuer URL] [--sp-signing-key FILE --sp-encryption-key FILE]
      Delegation keys for the client's backend: prints SERVICE_BASE_URL (the URL the service
      last started on this data folder serves, or --issuer), OAUTH_CLIENT_ID, the
      SP's Ed25519 and X25519 private keys (shown once) and the service's public keys, one line
      each. With the two files (SPKI PEM public keys made elsewhere), stores those instead.
      Running it again replaces the SP keys.
  service-idp clients list [--json]
  service-idp clients delete CLIENT_ID
      Delete a client with its devices, pending sign-ins and delegation keys; its keys stop
      working at once. Users stay (they may use other clients).
  service-idp users reset-mfa EMAIL
      Recovery for a user who lost their second factor and recovery codes: removes both (and
      every remember_me), mails the user a notice and prints what was removed. Verify who asks
      before running it.
  service-idp users recovery-codes ID|EMAIL
      Makes a new set of recovery codes for a user with MFA and prints it once (the old set
      stops working; the user is told by mail). Verify who asks, and hand the codes over privately.
  service-idp users list [--email TEXT] [--limit 50] [--cursor CURSOR] [--json]
      Users, oldest first; --email keeps addresses containing TEXT. A full page ends with the
      --cursor of the next one.
  service-idp users show ID|EMAIL [--json]
      The account, its devices, MFA method (no secret) and the clients it signed in to.
  service-idp users disable ID|EMAIL
  service-idp users enable ID|EMAIL
      A disabled user cannot sign in anywhere (no code is sent; answers look like any other)
      and no token is issued for them; enabling restores the account as it was.
  service-idp users delete ID|EMAIL
      Delete the user and every row about them in one transaction; an event without personal
      data records that a deletion happened. Cannot be undone.
  service-idp users export ID|EMAIL
      Everything held about the user, as JSON: account, devices, MFA method without secrets,
      client sign-ins, events.
  service-idp devices list --user ID|EMAIL [--json]
      The user's devices for every client (remembered browsers and passkeys, with their
      kind; a synced passkey is marked), revoked and expired ones included.
  service-idp devices revoke DEVICE_ID
      The device's key (or the passkey) stops working on every node at once.
  service-idp events [--user ID|EMAIL] [--type TYPE] [--since 2026-01-31|24h|7d] [--limit 50] [--cursor CURSOR] [--json]
      The audit trail, newest first.
  service-idp admin-keys create --name NAME [--json]
      A key for the admin API (${ADMIN_PREFIX}, Authorization: Bearer KEY). Shown once; only a
      keyed hash is stored.
  service-idp admin-keys list [--json]
      Names, creation and last-use times; never the keys.
  service-idp admin-keys revoke KEY_ID
      The key stops working at once, on every node.
  service-idp webhooks create --url URL --events TYPE,TYPE|all [--json]
      Send events to URL as Standard Webhooks (signed POSTs, retried with back-off for a day).
      Prints the endpoint id and its signing secret (whsec_…) once; it cannot be shown again.
  service-idp webhooks list [--json]
      Endpoints with their event types and delivery health (failures, last error, disabled).
  service-idp webhooks delete ID
      Stop sending to the endpoint and drop its pending deliveries.
  service-idp webhooks disable ID
  service-idp webhooks enable ID
      Pause, or resume (also after the service disabled a failing endpoint); pending
      deliveries still within their retry day are sent.
  service-idp keys rotate
      New signing keys (RS256, ES256, EdDSA); the JWKS serves old and new until tokens signed
      by the old ones expire.
  service-idp mail [--json] [--limit 20]
      The development mailbox (used when SMTP_URL is not set), newest first.
  service-idp sms [--json] [--limit 20]
      The development SMS outbox (SMS_TRANSPORT=outbox), newest first.
  service-idp migrate
      Apply database migrations (start does this too). Refuses a database whose schema is
      newer than this build.

Options shared by every command:
  --data DIR       data folder (server secret; SQLite database unless --database), default ./data
  --database URL   postgres://user:pass@host:5432/db: use PostgreSQL, shared by every node
                   (default: DATABASE_URL, else SQLite in the data folder). Every node and
                   command needs the same data folder secret (copy DIR/server-secret).

Environment:
${Object.entries(ENVIRONMENT)
  .map(([name, text]) => `  ${name.padEnd(ENVIRONMENT_WIDTH)}${text}`)
  .join('\n')}

Exit status: 0 done, 1 failed, 2 bad command line or configuration (the message says which).
`;

const options = {
  port: { type: 'string' },
  host: { type: 'string' },
  data: { type: 'string' },
  database: { type: 'string' },
  issuer: { type: 'string' },
  'test-mode': { type: 'boolean' },
  'dev-inbox': { type: 'boolean' },
  'metrics-port': { type: 'string' },
  name: { type: 'string' },
  origin: { type: 'string', multiple: true },
  'redirect-uri': { type: 'string', multiple: true },
  'post-logout-redirect-uri': { type: 'string', multiple: true },
  public: { type: 'boolean' },
  json: { type: 'boolean' },
  'mfa-policy': { type: 'string' },
  'passkey-mfa': { type: 'string' },
  'id-token-alg': { type: 'string' },
  'sp-signing-key': { type: 'string' },
  'sp-encryption-key': { type: 'string' },
  limit: { type: 'string' },
  email: { type: 'string' },
  user: { type: 'string' },
  type: { type: 'string' },
  since: { type: 'string' },
  cursor: { type: 'string' },
  url: { type: 'string' },
  events: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const MAIL_LIMIT_DEFAULT = 20;
const MAIL_LIMIT_MAX = 1000;

/** A bad command line: one line naming the problem, exit status 2. */
class UsageError extends ConfigError {}

/** parseArgs with our own one-line messages instead of Node's. */
function parseCommandLine(argv: string[]) {
  // `--limit -3`: keep a negative number as the option's value so the range check can name it.
  const args = [...argv];
  for (let i = 0; i < args.length - 1; i++) {
    const name = args[i]?.replace(/^--/, '') as keyof typeof options;
    if (args[i]?.startsWith('--') && options[name]?.type === 'string' && /^-\d/.test(args[i + 1] ?? '')) {
      args.splice(i, 2, `${args[i]}=${args[i + 1]}`);
    }
  }
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const option = /option '(-[^' ]+)/i.exec(message)?.[1] ?? 'an option';
    if (/^Unknown option/.test(message)) throw new UsageError(`unknown option ${option}`);
    if (/does not take an argument/.test(message)) throw new UsageError(`${option} takes no value`);
    throw new UsageError(`${option} needs a value`);
  }
}

function wholeNumber(flag: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^-?\d+$/.test(raw) || value < min || value > max)
    throw new UsageError(`${flag} must be a whole number from ${min} to ${max}, not "${raw}"`);
  return value;
}

/** Plain columns with a header row, for people; --json is for scripts. */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]?.length ?? 0)));
  return [header, ...rows]
    .map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  '))
    .join('\n');
}

const cursor = (raw: string | undefined) => (raw === undefined ? {} : { cursor: raw });

const time = (at: number | null) => (at === null ? '-' : new Date(at).toISOString());

/** --since: an ISO 8601 date or time, or a duration back from now (90m, 24h, 7d). */
function sinceTime(raw: string | undefined, now: number): number | undefined {
  if (raw === undefined) return undefined;
  const ago = /^(\d{1,6})([mhd])$/.exec(raw);
  if (ago) return now - Number(ago[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[ago[2] as 'm' | 'h' | 'd'];
  const at = /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2})?)?$/.test(raw) ? Date.parse(raw) : Number.NaN;
  if (Number.isNaN(at))
    throw new UsageError(`--since must be a date (2026-01-31, 2026-01-31T12:00:00Z) or a duration (90m, 24h, 7d), not "${raw}"`);
  return at;
}

/** The URL the service serves on this data folder: --issuer / SERVICE_IDP_ISSUER, else what the last start recorded. */
function servedIssuer(dataDir: string, explicit: string | undefined): string {
  if (explicit) return explicit.replace(/\/+$/, '');
  try {
    return readFileSync(join(dataDir, ISSUER_FILE), 'utf8').trim();
  } catch {
    throw new UsageError(
      `cannot tell which URL the service serves: no service has started on ${dataDir} yet. Pass --issuer URL (or SERVICE_IDP_ISSUER)`,
    );
  }
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandLine(argv);
  const [command, sub] = positionals;
  if (values.help || command === 'help') {
    process.stdout.write(HELP);
    return 0;
  }
  if (!command) {
    process.stderr.write(HELP);
    return 2;
  }
  const flags: ConfigFlags = {
    port: values.port,
    host: values.host,
    data: values.data,
    database: values.database,
    issuer: values.issuer,
    'test-mode': values['test-mode'],
    'dev-inbox': values['dev-inbox'],
    'metrics-port': values['metrics-port'],
  };
  const config = loadConfig(flags);

  if (command === 'start') {
    if (config.testMode) {
      process.stderr.write('\n  !!! TEST MODE: one-time codes are returned in API responses. Never use this with real users. !!!\n\n');
    }
    const pretty = config.logFormat ? config.logFormat === 'pretty' : Boolean(process.stdout.isTTY);
    const { startService } = await import('./index.js');
    const service = await startService(config, { logger: { level: config.logLevel, pretty } }).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE')
        throw new UsageError(`port ${config.port} on ${config.host} is in use (another service-idp?): choose another with --port`);
      if ((error as NodeJS.ErrnoException).code === 'EADDRNOTAVAIL')
        throw new UsageError(`cannot listen on ${config.host}: no such address here`);
      throw error;
    });
    process.stdout.write(
      [
        `service-idp listening`,
        `  issuer:     ${service.url}`,
        `  discovery:  ${service.url}${Paths.discovery}`,
        `  data:       ${config.dataDir}`,
        `  database:   ${service.ctx.database}`,
        `  mail goes to: ${service.ctx.mailer.describe()}`,
        `  SMS goes to:  ${service.ctx.sms.describe()}`,
        ...(service.devInboxUrl ? [`  dev inbox:  ${service.devInboxUrl} (this machine only)`] : []),
        ...(service.metricsUrl ? [`  metrics:    ${service.metricsUrl}`] : []),
        '',
      ].join('\n'),
    );
    const stop = async (signal: NodeJS.Signals) => {
      await service.close();
      process.stdout.write(`service-idp stopped (${signal}).\n`);
      process.exit(0);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    return -1; // keep running
  }

  const known = [
    'clients create',
    'clients update',
    'clients delete',
    'clients delegation-keys',
    'clients list',
    'keys rotate',
    'users reset-mfa',
    'admin-keys create',
    'admin-keys list',
    'admin-keys revoke',
    'users list',
    'users show',
    'users disable',
    'users enable',
    'users delete',
    'users export',
    'users recovery-codes',
    'devices list',
    'devices revoke',
    'webhooks create',
    'webhooks list',
    'webhooks delete',
    'webhooks disable',
    'webhooks enable',
    'events',
    'mail',
    'sms',
    'migrate',
  ];
  const name = ['clients', 'keys', 'users', 'devices', 'admin-keys', 'webhooks'].includes(command)
    ? `${command} ${sub ?? ''}`.trim()
    : command;
  if (!known.includes(name)) throw new UsageError(`unknown command "${positionals.slice(0, 2).join(' ')}"`);
  const paged = name === 'users list' || name === 'events';
  const limit = paged
    ? wholeNumber('--limit', values.limit, PAGE_SIZE_DEFAULT, 1, PAGE_SIZE_MAX)
    : wholeNumber('--limit', values.limit, MAIL_LIMIT_DEFAULT, 1, MAIL_LIMIT_MAX);
  const since = sinceTime(values.since, Date.now());
  const [, , target] = positionals;
  if (/^users (show|disable|enable|delete|export)$/.test(name) && !target) throw new UsageError(`usage: service-idp ${name} ID|EMAIL`);
  if (name === 'devices list' && !values.user) throw new UsageError('usage: service-idp devices list --user ID|EMAIL');
  if (name === 'admin-keys create' && !values.name) throw new UsageError('usage: service-idp admin-keys create --name NAME');
  if (name === 'admin-keys revoke' && !target) throw new UsageError('usage: service-idp admin-keys revoke KEY_ID');
  if (name === 'devices revoke' && !target) throw new UsageError('usage: service-idp devices revoke DEVICE_ID');
  if (name === 'webhooks create' && (!values.url || !values.events))
    throw new UsageError('usage: service-idp webhooks create --url URL --events TYPE,TYPE|all');
  if (/^webhooks (delete|disable|enable)$/.test(name) && !target) throw new UsageError(`usage: service-idp ${name} ID`);
  /** The ID|EMAIL, DEVICE_ID or KEY_ID the command acts on. */
  const subject = target ?? '';
  const issuer = name === 'clients delegation-keys' ? servedIssuer(config.dataDir, values.issuer ?? process.env.SERVICE_IDP_ISSUER) : '';

  const { openContext } = await import('./context.js');
  const ctx = await openContext(config);
  try {
    switch (name) {
      case 'clients create': {
        if (!values.name) throw new UsageError('clients create needs --name');
        const keys = await ctx.operations.createClient(
          {
            name: values.name,
            origins: values.origin ?? [],
            redirectUris: values['redirect-uri'] ?? [],
            public: values.public ?? false,
            postLogoutRedirectUris: values['post-logout-redirect-uri'] ?? [],
            ...(values['id-token-alg'] ? { idTokenSignedResponseAlg: values['id-token-alg'] } : {}),
          },
          'cli',
        );
        if (values.json) process.stdout.write(`${JSON.stringify(keys)}\n`);
        else {
          process.stdout.write(
            `Client created. The keys are shown once; store them now.\n  clientId:       ${keys.clientId}\n  publishableKey: ${keys.publishableKey}\n${
              keys.secretKey
                ? `  secretKey:      ${keys.secretKey}\n`
                : '  secretKey:      none (public client: PKCE S256 at the token endpoint)\n'
            }`,
          );
        }
        return 0;
      }
      case 'clients update': {
        const [, , clientId] = positionals;
        const postLogout = values['post-logout-redirect-uri'];
        if (!clientId || (!values['mfa-policy'] && !values['id-token-alg'] && !postLogout && !values['passkey-mfa']))
          throw new UsageError(
            'usage: service-idp clients update CLIENT_ID [--mfa-policy optional|required] [--id-token-alg RS256|ES256|EdDSA] [--post-logout-redirect-uri URL ...] [--passkey-mfa yes|no]',
          );
        if (values['mfa-policy']) {
          await ctx.operations.setMfaPolicy(clientId, values['mfa-policy'], 'cli');
          process.stdout.write(`Client ${clientId}: MFA ${values['mfa-policy']}.\n`);
        }
        if (values['passkey-mfa']) {
          await ctx.operations.setPasskeyMfa(clientId, values['passkey-mfa'], 'cli');
          process.stdout.write(
            `Client ${clientId}: a passkey sign-in ${values['passkey-mfa'] === 'yes' ? 'also passes' : 'does not pass'} MFA.\n`,
          );
        }
        if (values['id-token-alg']) {
          await ctx.operations.setIdTokenAlg(clientId, values['id-token-alg'], 'cli');
          process.stdout.write(`Client ${clientId}: ID tokens signed with ${values['id-token-alg']}.\n`);
        }
        if (postLogout) {
          const uris = postLogout.filter((uri) => uri !== '');
          await ctx.operations.setPostLogoutRedirectUris(clientId, uris, 'cli');
          process.stdout.write(`Client ${clientId}: post-logout redirect URIs ${uris.length ? uris.join(' ') : 'none'}.\n`);
        }
        return 0;
      }
      case 'clients delete': {
        const [, , clientId] = positionals;
        if (!clientId) throw new UsageError('usage: service-idp clients delete CLIENT_ID');
        await ctx.operations.deleteClient(clientId, 'cli');
        process.stdout.write(`Client ${clientId} deleted.\n`);
        return 0;
      }
      case 'clients delegation-keys': {
        const [, , clientId] = positionals;
        if (!clientId)
          throw new UsageError('usage: service-idp clients delegation-keys CLIENT_ID [--sp-signing-key FILE --sp-encryption-key FILE]');
        const signing = values['sp-signing-key'];
        const encryption = values['sp-encryption-key'];
        if (Boolean(signing) !== Boolean(encryption))
          throw new UsageError('give both --sp-signing-key and --sp-encryption-key, or neither');
        const made = await ctx.delegation.createKeys(
          clientId,
          signing && encryption ? { verifyPem: readFileSync(signing, 'utf8'), encryptionPem: readFileSync(encryption, 'utf8') } : undefined,
        );
        await ctx.events.record({ type: 'client.updated', clientId: made.client.id, actor: 'cli', detail: { delegationKeys: 'replaced' } });
        // One line per value (base64 of the PEM), as secret stores and .env files want them.
        const line = (pem: string) => Buffer.from(pem).toString('base64');
        const env: Record<string, string> = {
          SERVICE_BASE_URL: issuer,
          OAUTH_CLIENT_ID: made.client.id,
          ...(made.sp
            ? { SP_ED25519_PRIVATE_KEY_PEM: line(made.sp.signingPrivatePem), SP_X25519_PRIVATE_KEY_PEM: line(made.sp.encryptionPrivatePem) }
            : {}),
          IDP_ED25519_PUBLIC_KEY_PEM: line(made.idp.verifyPublicPem),
          IDP_X25519_PUBLIC_KEY_PEM: line(made.idp.encryptionPublicPem),
        };
        if (values.json) process.stdout.write(`${JSON.stringify(env)}\n`);
        else {
          process.stdout.write(
            made.sp
              ? `# Delegation keys for ${made.client.name}. The SP private keys are shown once: put these lines in the SP's secret store.\n`
              : `# Delegation for ${made.client.name} uses the SP public keys given. Add these lines to the SP's configuration (its private keys stay where they are).\n`,
          );
          for (const [key, value] of Object.entries(env)) process.stdout.write(`${key}=${value}\n`);
        }
        return 0;
      }
      case 'clients list': {
        const list = await ctx.clients.list();
        if (values.json) process.stdout.write(`${JSON.stringify(list)}\n`);
        else if (list.length === 0) process.stdout.write('No clients yet: service-idp clients create --name NAME --origin URL\n');
        else
          process.stdout.write(
            `${table(
              ['CLIENT ID', 'NAME', 'TYPE', 'MFA', 'ORIGINS', 'REDIRECT URIS', 'POST-LOGOUT URIS'],
              list.map((c) => [
                c.id,
                c.name,
                c.type,
                c.mfaPolicy,
                c.origins.join(' '),
                c.redirectUris.join(' '),
                c.postLogoutRedirectUris.join(' '),
              ]),
            )}\n`,
          );
        return 0;
      }
      case 'users reset-mfa': {
        const email = canonicalEmail(positionals[2] ?? '');
        if (email === null) throw new UsageError('usage: service-idp users reset-mfa EMAIL (a valid address)');
        const removed = await ctx.mfa.resetByOperator(email);
        process.stdout.write(
          removed
            ? `MFA (${removed}) removed for ${email}; the user was told by mail. They can enroll again at their next new-device sign-in.\n`
            : `${email} has no MFA method: nothing changed.\n`,
        );
        return 0;
      }
      case 'keys rotate': {
        const kid = await ctx.operations.rotateSigningKey('cli');
        process.stdout.write(
          `New signing key ${kid}. (That is the RS256 key; ES256 and EdDSA keys were renewed too.) Running nodes sign with them within 30 s; the old keys stay in the JWKS until their tokens expire.\n`,
        );
        return 0;
      }
      case 'admin-keys create': {
        const made = await ctx.adminKeys.create(values.name ?? '', 'cli');
        if (values.json) process.stdout.write(`${JSON.stringify(made)}\n`);
        else
          process.stdout.write(
            `Admin key ${made.id} (${made.name}) created. It is shown once; store it now.\n  key: ${made.key}\nUse it as: Authorization: Bearer KEY on ${ADMIN_PREFIX}/…\n`,
          );
        return 0;
      }
      case 'admin-keys list': {
        const keys = await ctx.adminKeys.list();
        if (values.json) process.stdout.write(`${JSON.stringify(keys)}\n`);
        else if (keys.length === 0) process.stdout.write('No admin keys yet: service-idp admin-keys create --name NAME\n');
        else
          process.stdout.write(
            `${table(
              ['KEY ID', 'NAME', 'CREATED', 'LAST USED', 'STATUS'],
              keys.map((k) => [
                k.id,
                k.name,
                time(k.createdAt),
                time(k.lastUsedAt),
                k.revokedAt === null ? 'live' : `revoked ${time(k.revokedAt)}`,
              ]),
            )}\n`,
          );
        return 0;
      }
      case 'admin-keys revoke':
        await ctx.adminKeys.revoke(subject, 'cli');
        process.stdout.write(`Admin key ${subject} revoked.\n`);
        return 0;
      case 'webhooks create': {
        const made = await ctx.webhooks.create({ url: values.url ?? '', events: (values.events ?? '').split(',') }, 'cli');
        if (values.json) process.stdout.write(`${JSON.stringify(made)}\n`);
        else
          process.stdout.write(
            `Webhook ${made.id} created for ${made.events.join(', ')}. The signing secret is shown once; store it now.\n  secret: ${made.secret}\nVerify each delivery with it (Standard Webhooks; docs/operations.md).\n`,
          );
        return 0;
      }
      case 'webhooks list': {
        const endpoints = await ctx.webhooks.list();
        if (values.json) process.stdout.write(`${JSON.stringify(endpoints)}\n`);
        else if (endpoints.length === 0) process.stdout.write('No webhooks yet: service-idp webhooks create --url URL --events all\n');
        else
          process.stdout.write(
            `${table(
              ['WEBHOOK ID', 'URL', 'EVENTS', 'STATUS', 'FAILURES', 'LAST ERROR', 'LAST DELIVERED'],
              endpoints.map((w) => [
                w.id,
                w.url,
                w.events.join(','),
                w.disabledAt === null ? 'enabled' : `disabled (${w.disabledReason}) ${time(w.disabledAt)}`,
                String(w.failureCount),
                w.lastError === null ? '-' : `${w.lastError} at ${time(w.lastErrorAt)}`,
                time(w.lastDeliveredAt),
              ]),
            )}\n`,
          );
        return 0;
      }
      case 'webhooks delete':
        await ctx.webhooks.delete(subject, 'cli');
        process.stdout.write(`Webhook ${subject} deleted with its pending deliveries.\n`);
        return 0;
      case 'webhooks disable':
      case 'webhooks enable': {
        const changed = name === 'webhooks enable' ? await ctx.webhooks.enable(subject, 'cli') : await ctx.webhooks.disable(subject, 'cli');
        process.stdout.write(`Webhook ${changed.id} ${changed.disabledAt === null ? 'enabled' : 'disabled'}.\n`);
        return 0;
      }
      case 'users list': {
        const page = await ctx.users.list({ ...(values.email ? { email: values.email } : {}), ...cursor(values.cursor), limit });
        if (values.json) process.stdout.write(`${JSON.stringify(page)}\n`);
        else if (page.users.length === 0)
          process.stdout.write(values.email ? `No user's address contains "${values.email}".\n` : 'No users yet.\n');
        else
          process.stdout.write(
            `${table(
              ['USER ID', 'EMAIL', 'CREATED', 'STATUS'],
              page.users.map((u) => [
                u.id,
                u.email,
                time(u.createdAt),
                u.disabledAt === null ? 'active' : `disabled ${time(u.disabledAt)}`,
              ]),
            )}\n${page.nextCursor ? `More: --cursor ${page.nextCursor}\n` : ''}`,
          );
        return 0;
      }
      case 'users show': {
        const shown = await ctx.users.show(subject);
        if (values.json) {
          process.stdout.write(`${JSON.stringify(shown)}\n`);
          return 0;
        }
        const lines = [
          `User ${shown.id}`,
          `  email:    ${shown.email}`,
          `  created:  ${time(shown.createdAt)}`,
          `  status:   ${shown.disabledAt === null ? 'active' : `disabled since ${time(shown.disabledAt)}`}`,
          `  MFA:      ${shown.mfa ? `${shown.mfa.method}${shown.mfa.phone ? ` ${shown.mfa.phone}` : ''} since ${time(shown.mfa.confirmedAt)}` : 'none'}`,
          `  recovery: ${shown.recoveryCodes ? `${shown.recoveryCodes.remaining} of ${shown.recoveryCodes.total} codes unused, made ${time(shown.recoveryCodes.createdAt)}` : 'no codes'}`,
          `  devices:  ${shown.devices.filter((d) => d.removedAt === null).length} active, ${shown.devices.length} in all, of which ${shown.devices.filter((d) => d.removedAt === null && d.kind === 'passkey').length} active passkeys (service-idp devices list --user ${shown.id})`,
          `  clients:  ${shown.clientSignIns.map((c) => `${c.clientName ?? c.clientId} (${c.clientId})`).join(', ') || 'none yet'}`,
        ];
        process.stdout.write(`${lines.join('\n')}\n`);
        return 0;
      }
      case 'users disable':
      case 'users enable': {
        const changed = name === 'users disable' ? await ctx.users.disable(subject, 'cli') : await ctx.users.enable(subject, 'cli');
        process.stdout.write(`User ${changed.id} (${changed.email}) ${changed.disabledAt === null ? 'enabled' : 'disabled'}.\n`);
        return 0;
      }
      case 'users delete': {
        const found = await ctx.users.find(subject);
        await ctx.users.delete(found.id, 'cli');
        process.stdout.write(`User ${found.id} deleted with every row about them.\n`);
        return 0;
      }
      case 'users recovery-codes': {
        const codes = await ctx.users.regenerateRecoveryCodes(subject, 'cli');
        process.stdout.write(`New recovery codes (shown once; the earlier ones no longer work):\n${codes.join('\n')}\n`);
        return 0;
      }
      case 'users export':
        process.stdout.write(`${JSON.stringify(await ctx.users.export(subject), null, 2)}\n`);
        return 0;
      case 'devices list': {
        const devices = await ctx.users.devices(values.user ?? '');
        if (values.json) process.stdout.write(`${JSON.stringify(devices)}\n`);
        else if (devices.length === 0) process.stdout.write('This user has no devices.\n');
        else
          process.stdout.write(
            `${table(
              ['DEVICE ID', 'CLIENT ID', 'KIND', 'NAME', 'CREATED', 'LAST USED', 'STATUS'],
              devices.map((d) => [
                d.id,
                d.clientId,
                d.kind === 'passkey' ? `passkey${d.synced ? ' (synced)' : ''}` : 'browser',
                d.name ?? defaultDeviceName(d.browser, d.os),
                time(d.createdAt),
                time(d.lastUsedAt),
                d.removedAt === null ? 'active' : `revoked ${time(d.removedAt)}`,
              ]),
            )}\n`,
          );
        return 0;
      }
      case 'devices revoke':
        await ctx.users.revokeDevice(subject, 'cli');
        process.stdout.write(`Device ${subject} revoked.\n`);
        return 0;
      case 'events': {
        const userId = values.user ? (await ctx.users.find(values.user)).id : undefined;
        const page = await ctx.events.list({
          ...(userId ? { userId } : {}),
          ...(values.type ? { type: values.type } : {}),
          ...(since !== undefined ? { since } : {}),
          ...cursor(values.cursor),
          limit,
        });
        if (values.json) process.stdout.write(`${JSON.stringify(page)}\n`);
        else if (page.events.length === 0) process.stdout.write('No events.\n');
        else
          process.stdout.write(
            `${table(
              ['TIME', 'TYPE', 'USER', 'CLIENT', 'DEVICE', 'IP', 'BY', 'DETAIL'],
              page.events.map((e) => [
                time(e.at),
                e.type,
                e.userId ?? '-',
                e.clientId ?? '-',
                e.deviceId ?? '-',
                e.ip ?? '-',
                e.actor ?? '-',
                e.detail
                  ? Object.entries(e.detail)
                      .map(([k, v]) => `${k}=${v}`)
                      .join(' ')
                  : '',
              ]),
            )}\n${page.nextCursor ? `More: --cursor ${page.nextCursor}\n` : ''}`,
          );
        return 0;
      }
      case 'mail': {
        const messages = await ctx.mailbox.list(limit);
        if (values.json) process.stdout.write(`${JSON.stringify(messages)}\n`);
        else if (messages.length === 0) process.stdout.write('The development mailbox is empty.\n');
        else
          for (const m of messages)
            process.stdout.write(`--- ${new Date(m.createdAt).toISOString()}  to ${m.to}\nSubject: ${m.subject}\n\n${m.text}\n\n`);
        return 0;
      }
      case 'sms': {
        const messages = await ctx.smsOutbox.list(limit);
        if (values.json) process.stdout.write(`${JSON.stringify(messages)}\n`);
        else if (messages.length === 0) process.stdout.write('The development SMS outbox is empty.\n');
        else for (const m of messages) process.stdout.write(`--- ${new Date(m.createdAt).toISOString()}  to ${m.to}\n${m.body}\n\n`);
        return 0;
      }
      default: // migrate: openContext applied them
        process.stdout.write(`Database ${ctx.database} is up to date.\n`);
        return 0;
    }
  } finally {
    await ctx.close();
  }
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
