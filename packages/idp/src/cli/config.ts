import { configWarnings, type ServiceConfig } from '../config.js';
import { CONFIG_FLAGS, type Command } from './command.js';

export const configCheck: Command = {
  name: 'config check',
  usage: `  service-idp config check [--config FILE] [--port PORT] [--host HOST] [--issuer URL] [--test-mode]
                           [--dev-inbox] [--metrics-port PORT] [--console-port PORT]
      Reads the configuration as start would (start's flags, environment, --config file, defaults),
      prints the effective settings as JSON with passwords, tokens and secrets hidden, and
      exits 0; a bad setting is one line and exit 2. Opens no database.
`,
  flags: CONFIG_FLAGS,
  data: 'none',
  async run({ config }, io) {
    for (const warning of configWarnings(config)) io.err(`service-idp: warning: ${warning}\n`);
    io.out(`${JSON.stringify(redactedConfig(config), null, 2)}\n`);
    return 0;
  },
};

const HIDDEN = '***';

/** A URL with its password hidden (an unparsable one is hidden whole: it may hold one). */
function hideUrlPassword(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  try {
    const url = new URL(raw);
    if (url.password) url.password = HIDDEN;
    return url.toString();
  } catch {
    return HIDDEN;
  }
}

/** The effective configuration as `config check` prints it: passwords, tokens and signing secrets hidden. */
function redactedConfig(config: ServiceConfig): Record<string, unknown> {
  const sms: Record<string, unknown> = { ...config.sms };
  if ('secret' in sms) sms.secret = HIDDEN;
  if ('authToken' in sms) sms.authToken = HIDDEN;
  if ('url' in sms) sms.url = hideUrlPassword(sms.url as string);
  return {
    ...config,
    databaseUrl: hideUrlPassword(config.databaseUrl) ?? null,
    smtpUrl: hideUrlPassword(config.smtpUrl) ?? null,
    sms,
    sendCaptcha: config.sendCaptcha ? { ...config.sendCaptcha, secret: HIDDEN } : null,
  };
}
