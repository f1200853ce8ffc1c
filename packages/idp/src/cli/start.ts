import { existsSync } from 'node:fs';
import { Paths } from 'service-protocol';
import type { ServiceConfig } from '../config.js';
import type { MigrationStatus } from '../storage/migrations.js';
import { CONFIG_FLAGS, type Command, UsageError } from './command.js';

export const start: Command = {
  name: 'start',
  usage: `  service-idp start [--port 8080] [--host 127.0.0.1] [--data ./data] [--database URL] [--issuer URL] [--test-mode]
                    [--dev-inbox] [--metrics-port PORT] [--console-port PORT]
      Run the service. The first start creates the data folder, the database, a signing
      key and the server secret; later starts reuse them. --dev-inbox serves /dev/mail to this
      machine; --metrics-port serves /metrics on a separate loopback listener; --console-port
      serves the operator console (/admin) on its own loopback listener instead of the main one.
`,
  flags: CONFIG_FLAGS,
  data: 'created',
  async run({ config }, io) {
    const json = config.logFormat === 'json';
    // With SERVICE_IDP_LOG_FORMAT=json stdout is JSON lines only, the banner too (a log collector reads it whole).
    const say = (msg: string, fields: Record<string, unknown> = {}) =>
      io.out(json ? `${JSON.stringify({ level: 30, time: Date.now(), msg, ...fields })}\n` : `${msg}\n`);
    // Warnings go to stderr; with json they are JSON lines at pino's warn level, as a log collector reads every other line.
    const warn = (msg: string, banner: string) => io.err(json ? `${JSON.stringify({ level: 40, time: Date.now(), msg })}\n` : banner);
    if (config.testMode) {
      const msg = 'TEST MODE: one-time codes are returned in API responses. Never use this with real users.';
      warn(msg, `\n  !!! ${msg} !!!\n\n`);
    }
    const { configWarnings } = await import('../config.js');
    for (const warning of configWarnings(config)) warn(`warning: ${warning}`, `service-idp: warning: ${warning}\n`);
    const pretty = config.logFormat ? config.logFormat === 'pretty' : io.isTTY;
    const { startService } = await import('../index.js');
    const service = await startService(config, { logger: { level: config.logLevel, pretty } }).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE')
        throw new UsageError(`port ${config.port} on ${config.host} is in use (another service-idp?): choose another with --port`);
      if ((error as NodeJS.ErrnoException).code === 'EADDRNOTAVAIL')
        throw new UsageError(`cannot listen on ${config.host}: no such address here`);
      throw error;
    });
    const banner = {
      issuer: service.url,
      discovery: `${service.url}${Paths.discovery}`,
      data: config.dataDir,
      database: service.ctx.database,
      mail: service.ctx.mailer.describe(),
      sms: service.ctx.sms.describe(),
      ...(service.devInboxUrl ? { devInbox: service.devInboxUrl } : {}),
      ...(service.metricsUrl ? { metrics: service.metricsUrl } : {}),
      ...(service.consoleUrl ? { console: `${service.consoleUrl}/admin` } : {}),
    };
    if (json) say('service-idp listening', banner);
    else
      io.out(
        [
          `service-idp listening`,
          `  issuer:     ${banner.issuer}`,
          `  discovery:  ${banner.discovery}`,
          `  data:       ${banner.data}`,
          `  database:   ${banner.database}`,
          `  mail goes to: ${banner.mail}`,
          `  SMS goes to:  ${banner.sms}`,
          ...(banner.devInbox ? [`  dev inbox:  ${banner.devInbox} (mail and SMS; this machine only)`] : []),
          ...(banner.metrics ? [`  metrics:    ${banner.metrics}`] : []),
          ...(banner.console ? [`  console:    ${banner.console}`] : []),
          '',
        ].join('\n'),
      );
    io.onStopSignal(async (signal) => {
      await service.close();
      say(`service-idp stopped (${signal}).`);
    });
    return -1; // keep running
  },
};

export const migrate: Command = {
  name: 'migrate',
  usage: `  service-idp migrate [--status [--json] | --dry-run]
      Apply database migrations, naming each one applied, and make the first signing keys
      (start does both too; run it before starting several nodes on a new database). Refuses a
      database whose schema is newer than this build. --status lists the applied and pending
      migrations; --dry-run names the ones migrate would apply. Neither changes anything.
`,
  flags: ['status', 'dry-run', 'json'],
  async run({ values, config }, io) {
    if (values.status && values['dry-run']) throw new UsageError('give --status or --dry-run, not both');
    if (!values.status && !values['dry-run']) {
      const { withData, signingKeys } = await import('./open.js');
      // Opening applies them; then the first signing keys, once per database (under the migration
      // lock), so nodes started together after `migrate` (compose.yaml) find one key set.
      await withData(config, async (data) => {
        const made = await (await signingKeys(data)).ensure();
        const count = data.applied.length;
        if (count > 0)
          io.out(
            `Applied ${count} migration${count === 1 ? '' : 's'} to ${data.database}, in this order:\n${data.applied.map((name) => `  ${name}\n`).join('')}`,
          );
        if (made.length > 0) io.out(`Made the first signing keys: ${made.join(', ')}.\n`);
        io.out(`Database ${data.database} is up to date.\n`);
      });
      return 0;
    }
    const { database, status } = await readStatus(config);
    if (values['dry-run']) {
      if (status.unknown.length > 0)
        throw new Error(
          `migrate would refuse ${database}: its schema is newer than this build (unknown migrations: ${status.unknown.join(', ')})`,
        );
      io.out(
        status.pending.length === 0
          ? `Database ${database} is up to date: migrate would apply nothing.\n`
          : `migrate would apply ${status.pending.length} migration${status.pending.length === 1 ? '' : 's'} to ${database}, in this order:\n${status.pending.map((name) => `  ${name}\n`).join('')}`,
      );
    } else if (values.json) io.out(`${JSON.stringify({ database, ...status })}\n`);
    else {
      const { table, time } = await import('./format.js');
      const rows = [
        ...status.applied.map((m) => [m.name, 'applied', time(m.at)]),
        ...status.pending.map((name) => [name, 'pending', '-']),
        ...status.unknown.map((name) => [name, 'unknown (a newer release)', '-']),
      ];
      io.out(
        `Database ${database}: ${status.applied.length} applied, ${status.pending.length} pending${status.unknown.length ? `, ${status.unknown.length} unknown` : ''}.\n${table(['MIGRATION', 'STATUS', 'APPLIED'], rows)}\n`,
      );
    }
    return 0;
  },
};

/** The migrations' status, changing nothing: no server secret made, and no SQLite file created where there is none. */
async function readStatus(config: ServiceConfig) {
  const [{ describeDatabase, openDatabase }, { KNOWN_MIGRATIONS, migrationStatus }] = await Promise.all([
    import('../storage/database.js'),
    import('../storage/migrations.js'),
  ]);
  const database = describeDatabase(config);
  if (!config.databaseUrl && !existsSync(database))
    return { database, status: { applied: [], pending: [...KNOWN_MIGRATIONS], unknown: [] } as MigrationStatus };
  const db = openDatabase(config, { checkpointWorker: false });
  try {
    return { database, status: await migrationStatus(db) };
  } finally {
    await db.destroy();
  }
}
