import { Paths } from 'service-protocol';
import { type Command, UsageError } from './command.js';

export const start: Command = {
  name: 'start',
  usage: `  service-idp start [--port 8080] [--host 127.0.0.1] [--data ./data] [--database URL] [--issuer URL] [--test-mode]
                    [--dev-inbox] [--metrics-port PORT]
      Run the service. The first start creates the data folder, the database, a signing
      key and the server secret; later starts reuse them. --dev-inbox serves /dev/mail to this
      machine; --metrics-port serves /metrics on a separate loopback listener.
`,
  flags: ['port', 'host', 'issuer', 'test-mode', 'dev-inbox', 'metrics-port'],
  async run({ config }, io) {
    if (config.testMode) {
      io.err('\n  !!! TEST MODE: one-time codes are returned in API responses. Never use this with real users. !!!\n\n');
    }
    const pretty = config.logFormat ? config.logFormat === 'pretty' : Boolean(process.stdout.isTTY);
    const { startService } = await import('../index.js');
    const service = await startService(config, { logger: { level: config.logLevel, pretty } }).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE')
        throw new UsageError(`port ${config.port} on ${config.host} is in use (another service-idp?): choose another with --port`);
      if ((error as NodeJS.ErrnoException).code === 'EADDRNOTAVAIL')
        throw new UsageError(`cannot listen on ${config.host}: no such address here`);
      throw error;
    });
    io.out(
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
      io.out(`service-idp stopped (${signal}).\n`);
      process.exit(0);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    return -1; // keep running
  },
};

export const migrate: Command = {
  name: 'migrate',
  usage: `  service-idp migrate
      Apply database migrations (start does this too). Refuses a database whose schema is
      newer than this build.
`,
  flags: [],
  async run({ config }, io) {
    const { withData } = await import('./open.js');
    // Opening applies them.
    await withData(config, async (data) => io.out(`Database ${data.database} is up to date.\n`));
    return 0;
  },
};
