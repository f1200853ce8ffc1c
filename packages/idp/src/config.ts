import { resolve } from 'node:path';
import { DEFAULT_HOST, DEFAULT_PORT } from './defaults.js';

export interface ServiceConfig {
  port: number;
  host: string;
  /** Folder with the SQLite database and the server secret. */
  dataDir: string;
  /** Public base URL: the `iss` of every token. */
  issuer: string;
  /** Puts the OTP in OTP_NEEDED responses. Never in production. */
  testMode: boolean;
  /** SMTP server URL for nodemailer; without it mail goes to the development mailbox. */
  smtpUrl: string | undefined;
  mailFrom: string;
  production: boolean;
  logLevel: string;
  /**
   * Which proxies may set X-Forwarded-For (Fastify's trustProxy): false, or a comma-separated
   * list of addresses/CIDRs. Per-IP send limits need the client's address, not the proxy's.
   */
  trustProxy: false | string;
}

/** Environment variables read by every command; flags win over them. docs/operations.md lists the same table. */
export const ENVIRONMENT = {
  SERVICE_IDP_PORT: 'port to listen on (default 8080)',
  SERVICE_IDP_HOST: 'address to bind (default 127.0.0.1)',
  SERVICE_IDP_DATA: 'data folder (default ./data)',
  SERVICE_IDP_ISSUER: "public base URL, the tokens' iss (default http://HOST:PORT)",
  SERVICE_IDP_TEST_MODE: '"1" puts OTPs in responses (refused when NODE_ENV=production)',
  SERVICE_IDP_MAIL_FROM: 'sender of service mail (default "Sign-in <no-reply@localhost>")',
  SERVICE_IDP_LOG_LEVEL: 'fatal, error, warn, info (default), debug',
  SERVICE_IDP_TRUST_PROXY: 'addresses/CIDRs of proxies allowed to set X-Forwarded-For, e.g. 10.0.0.0/8 (default: none)',
  SMTP_URL: 'SMTP server, e.g. smtp://user:pass@mail.example.com:587; required when NODE_ENV=production',
  NODE_ENV: '"production" turns on the production checks',
} as const;

export interface ConfigFlags {
  port?: string | undefined;
  host?: string | undefined;
  data?: string | undefined;
  issuer?: string | undefined;
  'test-mode'?: boolean | undefined;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Merges flags over environment over defaults, once, and refuses unsafe combinations. */
export function loadConfig(flags: ConfigFlags, env: NodeJS.ProcessEnv = process.env): ServiceConfig {
  const port = Number(flags.port ?? env.SERVICE_IDP_PORT ?? DEFAULT_PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new ConfigError(`invalid port: ${flags.port ?? env.SERVICE_IDP_PORT}`);
  const host = flags.host ?? env.SERVICE_IDP_HOST ?? DEFAULT_HOST;
  const issuer = (flags.issuer ?? env.SERVICE_IDP_ISSUER ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(
    /\/+$/,
    '',
  );
  let issuerUrl: URL;
  try {
    issuerUrl = new URL(issuer);
  } catch {
    throw new ConfigError(`invalid issuer URL: ${issuer}`);
  }
  const production = env.NODE_ENV === 'production';
  const testMode = flags['test-mode'] ?? env.SERVICE_IDP_TEST_MODE === '1';
  const smtpUrl = env.SMTP_URL || undefined;
  if (production && testMode) throw new ConfigError('--test-mode is refused when NODE_ENV=production: it puts one-time codes in responses');
  if (production && !smtpUrl)
    throw new ConfigError('SMTP_URL is required when NODE_ENV=production: the development mailbox is not for real users');
  if (production && issuerUrl.protocol !== 'https:') throw new ConfigError('the issuer must be an https URL when NODE_ENV=production');
  return {
    port,
    host,
    dataDir: resolve(flags.data ?? env.SERVICE_IDP_DATA ?? './data'),
    issuer,
    testMode,
    smtpUrl,
    mailFrom: env.SERVICE_IDP_MAIL_FROM ?? 'Sign-in <no-reply@localhost>',
    production,
    logLevel: env.SERVICE_IDP_LOG_LEVEL ?? 'info',
    trustProxy: env.SERVICE_IDP_TRUST_PROXY || false,
  };
}
