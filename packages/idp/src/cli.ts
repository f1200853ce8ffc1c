#!/usr/bin/env node
/**
 * service-idp: run the identity service and manage its data. Every command reads the same
 * --data and --database flags and environment as `start`, and works while the service runs.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Paths } from 'service-protocol';
import { ConfigError, type ConfigFlags, ENVIRONMENT, loadConfig } from './config.js';
import { openContext } from './context.js';
import { startService } from './index.js';

const HELP = `service-idp — passwordless identity service

Usage:
  service-idp start [--port 8080] [--host 127.0.0.1] [--data ./data] [--database URL] [--issuer URL] [--test-mode]
      Run the service. The first start creates the data folder, the database, a signing
      key and the server secret; later starts reuse them.
  service-idp clients create --name NAME --origin URL [--origin URL ...] [--json]
      Register a client application. Prints its clientId, publishableKey (browser, valid
      only from the listed origins) and secretKey (backend) once; they cannot be shown again.
  service-idp clients update CLIENT_ID --mfa-policy optional|required
      optional (default): users choose whether to enroll in MFA; required: no code without it.
  service-idp clients delegation-keys CLIENT_ID [--json] [--sp-signing-key FILE --sp-encryption-key FILE]
      Delegation keys for the client's backend: prints SERVICE_BASE_URL, OAUTH_CLIENT_ID, the
      SP's Ed25519 and X25519 private keys (shown once) and the service's public keys, one line
      each. With the two files (SPKI PEM public keys made elsewhere), stores those instead.
      Running it again replaces the SP keys.
  service-idp clients list [--json]
  service-idp keys rotate
      New signing key; the JWKS serves old and new until tokens signed by the old one expire.
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
  .map(([name, text]) => `  ${name.padEnd(24)}${text}`)
  .join('\n')}
`;

const options = {
  port: { type: 'string' },
  host: { type: 'string' },
  data: { type: 'string' },
  database: { type: 'string' },
  issuer: { type: 'string' },
  'test-mode': { type: 'boolean' },
  name: { type: 'string' },
  origin: { type: 'string', multiple: true },
  json: { type: 'boolean' },
  'mfa-policy': { type: 'string' },
  'sp-signing-key': { type: 'string' },
  'sp-encryption-key': { type: 'string' },
  limit: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  const [command, sub] = positionals;
  if (values.help || !command || command === 'help') {
    process.stdout.write(HELP);
    return command || values.help ? 0 : 1;
  }
  const flags: ConfigFlags = {
    port: values.port,
    host: values.host,
    data: values.data,
    database: values.database,
    issuer: values.issuer,
    'test-mode': values['test-mode'],
  };
  const config = loadConfig(flags);

  if (command === 'start') {
    if (config.testMode) {
      process.stderr.write('\n  !!! TEST MODE: one-time codes are returned in API responses. Never use this with real users. !!!\n\n');
    }
    const service = await startService(config, { logger: { level: config.logLevel } });
    process.stdout.write(
      [
        `service-idp listening`,
        `  issuer:     ${config.issuer}`,
        `  discovery:  ${config.issuer}${Paths.discovery}`,
        `  data:       ${config.dataDir}`,
        `  database:   ${service.ctx.database}`,
        `  mail goes to: ${service.ctx.mailer.describe()}`,
        `  SMS goes to:  ${service.ctx.sms.describe()}`,
        '',
      ].join('\n'),
    );
    const stop = async () => {
      await service.close();
      process.exit(0);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    return -1; // keep running
  }

  const ctx = await openContext(config);
  try {
    switch (`${command} ${sub ?? ''}`.trim()) {
      case 'clients create': {
        if (!values.name) throw new ConfigError('clients create needs --name');
        const keys = await ctx.clients.create({ name: values.name, origins: values.origin ?? [] });
        if (values.json) process.stdout.write(`${JSON.stringify(keys)}\n`);
        else {
          process.stdout.write(
            `Client created. The keys are shown once; store them now.\n  clientId:       ${keys.clientId}\n  publishableKey: ${keys.publishableKey}\n  secretKey:      ${keys.secretKey}\n`,
          );
        }
        return 0;
      }
      case 'clients update': {
        const [, , clientId] = positionals;
        if (!clientId || !values['mfa-policy'])
          throw new ConfigError('usage: service-idp clients update CLIENT_ID --mfa-policy optional|required');
        await ctx.clients.setMfaPolicy(clientId, values['mfa-policy']);
        process.stdout.write(`Client ${clientId}: MFA ${values['mfa-policy']}.\n`);
        return 0;
      }
      case 'clients delegation-keys': {
        const [, , clientId] = positionals;
        if (!clientId)
          throw new ConfigError('usage: service-idp clients delegation-keys CLIENT_ID [--sp-signing-key FILE --sp-encryption-key FILE]');
        const signing = values['sp-signing-key'];
        const encryption = values['sp-encryption-key'];
        if (Boolean(signing) !== Boolean(encryption))
          throw new ConfigError('give both --sp-signing-key and --sp-encryption-key, or neither');
        const made = await ctx.delegation.createKeys(
          clientId,
          signing && encryption ? { verifyPem: readFileSync(signing, 'utf8'), encryptionPem: readFileSync(encryption, 'utf8') } : undefined,
        );
        // One line per value (base64 of the PEM), as secret stores and .env files want them.
        const line = (pem: string) => Buffer.from(pem).toString('base64');
        const env: Record<string, string> = {
          SERVICE_BASE_URL: config.issuer,
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
          for (const [name, value] of Object.entries(env)) process.stdout.write(`${name}=${value}\n`);
        }
        return 0;
      }
      case 'clients list': {
        const list = await ctx.clients.list();
        if (values.json) process.stdout.write(`${JSON.stringify(list)}\n`);
        else for (const c of list) process.stdout.write(`${c.id}  ${c.name}  ${c.origins.join(' ')}  mfa=${c.mfaPolicy}\n`);
        return 0;
      }
      case 'keys rotate': {
        const kid = await ctx.keyring.rotate();
        process.stdout.write(
          `New signing key ${kid}. Running nodes sign with it within 30 s; the old key stays in the JWKS until its tokens expire.\n`,
        );
        return 0;
      }
      case 'mail': {
        const limit = Number(values.limit ?? 20);
        const messages = await ctx.mailbox.list(Number.isInteger(limit) && limit > 0 ? limit : 20);
        if (values.json) process.stdout.write(`${JSON.stringify(messages)}\n`);
        else if (messages.length === 0) process.stdout.write('The development mailbox is empty.\n');
        else
          for (const m of messages)
            process.stdout.write(`--- ${new Date(m.createdAt).toISOString()}  to ${m.to}\nSubject: ${m.subject}\n\n${m.text}\n\n`);
        return 0;
      }
      case 'sms': {
        const limit = Number(values.limit ?? 20);
        const messages = await ctx.smsOutbox.list(Number.isInteger(limit) && limit > 0 ? limit : 20);
        if (values.json) process.stdout.write(`${JSON.stringify(messages)}\n`);
        else if (messages.length === 0) process.stdout.write('The development SMS outbox is empty.\n');
        else for (const m of messages) process.stdout.write(`--- ${new Date(m.createdAt).toISOString()}  to ${m.to}\n${m.body}\n\n`);
        return 0;
      }
      case 'migrate':
        process.stdout.write(`Database ${ctx.database} is up to date.\n`);
        return 0;
      default:
        process.stderr.write(`Unknown command: ${positionals.join(' ')}\n\n${HELP}`);
        return 1;
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
    const known =
      error instanceof ConfigError || (error instanceof Error && 'code' in error && String(error.code).startsWith('ERR_PARSE_ARGS'));
    process.stderr.write(`service-idp: ${error instanceof Error ? error.message : String(error)}\n`);
    if (!known && error instanceof Error && process.env.SERVICE_IDP_LOG_LEVEL === 'debug') process.stderr.write(`${error.stack}\n`);
    process.exitCode = known ? 2 : 1;
  },
);
