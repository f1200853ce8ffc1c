import { statSync } from 'node:fs';
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { parseCountries } from './clients/send-rules.js';
import {
  CAPTCHA_VERIFY_TIMEOUT_MS,
  CONSOLE_LISTENER_HOST,
  DB_POOL_SIZE,
  DB_STATEMENT_TIMEOUT_MS,
  DEFAULT_HOST,
  DEFAULT_PORT,
  DEVICE_IDLE_EXPIRY_DAYS,
  EVENT_RETENTION_DAYS,
  KEY_CACHE_SECONDS,
  MAIL_BUDGET_PER_APPLICATION,
  MAIL_BUDGET_SERVICE,
  MFA_REMEMBER_DAYS,
  ORGANIZATIONS_PER_USER,
  REGISTERED_CLIENT_UNUSED_DAYS,
  ROLE_NAME_MAX_LENGTH,
  SEND_CHALLENGE_AFTER_MAIL_SERVICE,
  SEND_CHALLENGE_AFTER_PER_IP,
  SEND_CHALLENGE_AFTER_PER_SUBNET,
  SEND_CHALLENGE_AFTER_SMS_SERVICE,
  SEND_SPACING_PER_PURPOSE,
  SMS_BUDGET_PER_APPLICATION,
  SMS_BUDGET_SERVICE,
  SMS_PER_PREFIX,
  WEBHOOK_LEASE_MS,
  WEBHOOK_REQUEST_TIMEOUT_MS,
} from './defaults.js';
import { ConfigError } from './errors.js';
import { parseBudget, type SendBudgets } from './otp/send-budgets.js';
import { CAPTCHA_PROVIDERS, type CaptchaConfig } from './otp/send-captcha.js';
import type { ChallengeThresholds } from './otp/send-challenge.js';
import { parseSmsCost, type SendRules } from './otp/send-rules.js';
import type { SmsConfig } from './sms/configured.js';
import { smsWebhookKey, WEBHOOK_SECRET_MIN_LENGTH } from './sms/webhook.js';
import type { Limit } from './throttle/service.js';

/** In the data folder: the issuer the last start on it served (what `clients delegation-keys` prints). */
export const ISSUER_FILE = 'issuer';

export interface ServiceConfig {
  port: number;
  host: string;
  /** Folder with the server secret, and the SQLite database unless `databaseUrl` is set. */
  dataDir: string;
  /** postgres://… selects PostgreSQL (shared by every node); undefined keeps SQLite in dataDir. */
  databaseUrl: string | undefined;
  /** PostgreSQL connections per node. */
  dbPoolSize: number;
  /** PostgreSQL statement_timeout: longer statements are cancelled (the request gets a 503). */
  dbStatementTimeoutMs: number;
  /** Public base URL: the `iss` of every token. */
  issuer: string;
  /** Puts the OTP in OTP_NEEDED responses. Never in production. */
  testMode: boolean;
  /** SMTP server URL for nodemailer; without it mail goes to the development mailbox. */
  smtpUrl: string | undefined;
  mailFrom: string;
  /** Folder with operator templates replacing the built-in ones (see mail/templates.ts). */
  mailTemplatesDir: string | undefined;
  /** Folder of language files adding or overriding the hosted pages' and mails' languages (i18n/locales.ts). */
  localesDir: string | undefined;
  production: boolean;
  logLevel: string;
  /** `service-idp start`'s log lines: one readable line per request, or JSON; unset: pretty on a terminal. */
  logFormat: 'json' | 'pretty' | undefined;
  /**
   * Which proxies may set X-Forwarded-For (Fastify's trustProxy): false, or a comma-separated
   * list of addresses/CIDRs. Per-IP send limits need the client's address, not the proxy's.
   */
  trustProxy: false | string;
  /** DNS servers (address or address:port) for domain verification's TXT look-ups (SERVICE_IDP_DNS_SERVERS); unset: the system's. */
  dnsServers?: readonly string[] | undefined;
  /** Where SMS goes: the development outbox, a signed webhook, or a Twilio-compatible API. */
  sms: SmsConfig;
  /** How long remember_me skips MFA on a device. */
  mfaRememberDays: number;
  /** A device unused for this many days is no longer trusted. */
  deviceIdleDays: number;
  /** Audit events older than this many days are swept. */
  eventRetentionDays: number;
  /**
   * Dynamic client registration (RFC 7591, client-registration/registration.ts): `off` (default, no
   * /oauth/register), `open` (anyone, public native clients on loopback or private-use redirect
   * URIs only), `initial-token` (with an initial access token from `clients registration-token`).
   */
  clientRegistration: 'off' | 'open' | 'initial-token';
  /**
   * OAuth Client ID Metadata Documents (clients/metadata-document.ts): when on, a client_id that
   * is an https URL names a public third-party client described by the document there. Default off.
   */
  clientIdMetadataDocuments: boolean;
  /** A registered client with no token request for this many days is deleted by the sweep. */
  registeredClientUnusedDays: number;
  /**
   * Organizations users make themselves in the account center (organizations/self-service.ts):
   * off by default; the maker joins with `creatorRole` (a role that manages organizations), and
   * one user makes at most `perUser`.
   */
  organizationSelfService: { enabled: boolean; creatorRole: string; perUser: number };
  /**
   * WebAuthn relying party id for passkeys (SERVICE_IDP_PASSKEY_RP_ID), e.g. example.com: each
   * ceremony's origin must be this domain or under it. Unset: the host of the page's origin
   * (one of the client's registered origins), so each application has its own passkeys.
   */
  passkeyRpId?: string | undefined;
  /** One code per purpose and recipient per this many seconds (a resend waits); SEND_SPACING_PER_PURPOSE by default. */
  sendSpacingSeconds: number;
  /** What the service and each application may send per channel (MAIL_BUDGET_SERVICE … unless SERVICE_IDP_*_BUDGET sets others). */
  sendBudgets: SendBudgets;
  /** When a browser's code send must solve a proof of work first (SEND_CHALLENGE_AFTER_* unless SERVICE_IDP_CHALLENGE_* sets others). */
  sendChallengeThresholds: ChallengeThresholds;
  /** The operator's CAPTCHA that replaces the proof of work (SERVICE_IDP_SEND_CHALLENGE=turnstile|hcaptcha); undefined: the proof of work. */
  sendCaptcha: CaptchaConfig | undefined;
  /** Where SMS may go and what they may cost, and whether disposable mail domains are refused (SERVICE_IDP_SMS_*, SERVICE_IDP_REFUSE_DISPOSABLE_MAIL). */
  sendRules: SendRules;
  /** How long a node serves its signing keys before re-reading them (KEY_CACHE_SECONDS by default); the same on every node. */
  keyCacheSeconds: number;
  /** Each webhook POST must answer within this time. */
  webhookRequestTimeoutMs: number;
  /** A node's claim on a webhook delivery: longer than the request timeout, so a live node never loses it. */
  webhookLeaseMs: number;
  /** Production webhooks may name and reach loopback, private and other internal addresses (always so outside production). */
  webhookAllowInternal: boolean;
  /** Request header (lower case) holding an approximate place set by the operator's proxy, e.g. cf-ipcountry. */
  placeHeader: string | undefined;
  /**
   * Serves the development mailbox and SMS outbox (/dev/mail, /dev/sms: every live code) to
   * this machine's own, unproxied requests. Off unless asked for; refused in production.
   */
  devInbox: boolean;
  /** GET /metrics on a listener of its own (loopback by default), never on the public one; undefined: off. */
  metrics: { host: string; port: number } | undefined;
  /** The console (/admin) on a listener of its own, reached at `url` (redirect URI, cookies, CSRF origin); undefined: on the main one. */
  console: { host: string; port: number; url: string } | undefined;
}

/** Environment variables read by every command; flags win over them. docs/operations.md lists the same table. */
export const ENVIRONMENT = {
  SERVICE_IDP_CONFIG: 'JSON file of settings named as in this table; the environment and flags win over it; same as --config',
  SERVICE_IDP_PORT: 'port to listen on (default 8080)',
  SERVICE_IDP_HOST: 'address to bind (default 127.0.0.1)',
  SERVICE_IDP_DATA: 'data folder (default ./data)',
  DATABASE_URL: 'postgres://user:pass@host:5432/db selects PostgreSQL (default: SQLite in the data folder); same as --database',
  SERVICE_IDP_DB_POOL_SIZE: `PostgreSQL connections per node (default ${DB_POOL_SIZE})`,
  SERVICE_IDP_DB_STATEMENT_TIMEOUT_MS: `PostgreSQL statement timeout in ms (default ${DB_STATEMENT_TIMEOUT_MS})`,
  SERVICE_IDP_ISSUER: "public base URL, the tokens' iss (default http://HOST:PORT)",
  SERVICE_IDP_TEST_MODE: '"1" puts OTPs in responses (refused when NODE_ENV=production)',
  SERVICE_IDP_MAIL_FROM: 'sender of service mail (default "Sign-in <no-reply@localhost>")',
  SERVICE_IDP_MAIL_TEMPLATES: 'folder of mail templates replacing the built-in ones: NAME.txt and NAME.html (docs/operations.md)',
  SERVICE_IDP_LOCALES: "folder of language files (<tag>.json) adding or overriding the pages' and mails' languages (docs/operations.md)",
  SERVICE_IDP_LOG_LEVEL: 'fatal, error, warn, info (default), debug',
  SERVICE_IDP_LOG_FORMAT: 'json or pretty (default: pretty on a terminal, JSON otherwise)',
  SERVICE_IDP_TRUST_PROXY: 'addresses/CIDRs of proxies allowed to set X-Forwarded-For, e.g. 10.0.0.0/8 (default: none)',
  SERVICE_IDP_DNS_SERVERS: "DNS servers for organizations' domain verification, e.g. 1.1.1.1,[2606:4700::1111]:53 (default: the system's)",
  SERVICE_IDP_MFA_REMEMBER_DAYS: 'days remember_me skips MFA on a device (default 30)',
  SERVICE_IDP_DEVICE_IDLE_DAYS: `days a device may go unused before it stops being trusted (default ${DEVICE_IDLE_EXPIRY_DAYS})`,
  SERVICE_IDP_PASSKEY_RP_ID:
    "passkeys' relying party id, a domain every app origin is under, e.g. example.com (default: each page's own host)",
  SERVICE_IDP_CLIENT_REGISTRATION:
    'clients that register themselves at /oauth/register (RFC 7591): off (default), open (native apps on loopback or private-use redirect URIs), initial-token',
  SERVICE_IDP_CLIENT_ID_METADATA_DOCUMENTS:
    'on: a client_id that is an https URL is fetched as its OAuth Client ID Metadata Document (public third-party clients, e.g. MCP); off (default)',
  SERVICE_IDP_REGISTERED_CLIENT_UNUSED_DAYS: `days a registered client may go without a token request before the sweep deletes it (default ${REGISTERED_CLIENT_UNUSED_DAYS})`,
  SERVICE_IDP_ORGANIZATION_SELF_SERVICE:
    'on: signed-in users create organizations in the account center and become their admin; off (default)',
  SERVICE_IDP_ORGANIZATION_CREATOR_ROLE:
    'the organization role (one that manages organizations) a self-service creator joins with (default admin)',
  SERVICE_IDP_ORGANIZATIONS_PER_USER: `organizations one user may create in the account center (default ${ORGANIZATIONS_PER_USER})`,
  SERVICE_IDP_EVENT_RETENTION_DAYS: `days the audit trail keeps an event (default ${EVENT_RETENTION_DAYS})`,
  SERVICE_IDP_SEND_SPACING_SECONDS: `seconds before a code of the same purpose is sent again to one address or phone (default ${SEND_SPACING_PER_PURPOSE[0].windowSeconds})`,
  SERVICE_IDP_MAIL_BUDGET:
    'mails the whole service may send, e.g. 600/minute,10000/hour,100000/day (default: docs/security.md, send budgets)',
  SERVICE_IDP_APP_MAIL_BUDGET: 'mails the sign-ins of one application may trigger, same form (default: half the service default)',
  SERVICE_IDP_SMS_BUDGET: 'SMS the whole service may send, e.g. 30/minute,300/hour,2000/day (default: docs/security.md, send budgets)',
  SERVICE_IDP_APP_SMS_BUDGET: 'SMS the sign-ins of one application may trigger, same form (default: half the service default)',
  SERVICE_IDP_CHALLENGE_PER_IP:
    'code requests from one client address before a proof of work is asked, e.g. 15/hour; same form as the budgets (default: docs/security.md, send challenge)',
  SERVICE_IDP_CHALLENGE_PER_SUBNET: 'code requests from one /24 or /48 before a proof of work is asked, same form (default 60/hour)',
  SERVICE_IDP_CHALLENGE_MAIL:
    'mail code requests service-wide before every browser must solve one, same form (default: half the mail budget)',
  SERVICE_IDP_CHALLENGE_SMS: 'SMS code requests service-wide before every browser must solve one, same form (default: half the SMS budget)',
  SERVICE_IDP_SEND_CHALLENGE:
    'the challenge asked past those thresholds: pow (default, self-hosted proof of work), turnstile (Cloudflare) or hcaptcha, with your keys below',
  SERVICE_IDP_CAPTCHA_SITE_KEY: 'with turnstile or hcaptcha: the public site key the widget is rendered with',
  SERVICE_IDP_CAPTCHA_SECRET: 'with turnstile or hcaptcha: the secret key siteverify is called with (never logged)',
  SERVICE_IDP_CAPTCHA_VERIFY_URL: "the provider's siteverify URL (default: the provider's own)",
  SERVICE_IDP_CAPTCHA_SCRIPT_URL: "the widget's script, which the hosted pages load and their CSP allows (default: the provider's own)",
  SERVICE_IDP_CAPTCHA_TIMEOUT_MS: `ms a siteverify call may take before the send is refused (default ${CAPTCHA_VERIFY_TIMEOUT_MS})`,
  SERVICE_IDP_SMS_COUNTRIES:
    'countries (ISO 3166 codes) SMS may go to for an application without its own list, e.g. US,CA,GB (default: none with a real SMS transport, any with the outbox)',
  SERVICE_IDP_SMS_PER_PREFIX:
    'SMS to one number block (country code and 4 digits), same form as the budgets (default: docs/security.md, SMS pumping)',
  SERVICE_IDP_SMS_PRICES: 'price of one SMS, default=0.05 and per country, e.g. default=0.05,GB=0.04 (needed by the cost cap)',
  SERVICE_IDP_SMS_DAILY_COST_CAP: "what SMS may cost per day, in the prices' currency, e.g. 50 (default: no cap)",
  SERVICE_IDP_REFUSE_DISPOSABLE_MAIL: '"true" refuses codes to disposable mail domains (the disposable-email-domains list; default: off)',
  SERVICE_IDP_KEY_CACHE_SECONDS: `seconds a node serves its signing keys before re-reading them, so a rotation reaches it; the same on every node (default ${KEY_CACHE_SECONDS})`,
  SERVICE_IDP_WEBHOOK_TIMEOUT_MS: `ms each webhook delivery may take to answer (default ${WEBHOOK_REQUEST_TIMEOUT_MS})`,
  SERVICE_IDP_WEBHOOK_LEASE_MS: `ms a node holds a webhook delivery; longer than the timeout (default ${WEBHOOK_LEASE_MS})`,
  SERVICE_IDP_WEBHOOK_ALLOW_INTERNAL:
    '"1" lets production webhooks name and reach loopback, private and other internal addresses (default: refused)',
  SERVICE_IDP_PLACE_HEADER:
    'request header with an approximate place set by your proxy or CDN (e.g. cf-ipcountry), shown in new-device mail (default: none)',
  SERVICE_IDP_DEV_INBOX:
    '"1" serves /dev/mail and /dev/sms (every code) to loopback, unproxied requests; same as --dev-inbox (refused when NODE_ENV=production)',
  SERVICE_IDP_METRICS_PORT: 'port of the separate /metrics listener (default: no metrics listener); same as --metrics-port',
  SERVICE_IDP_METRICS_HOST: 'address the /metrics listener binds (default 127.0.0.1)',
  SERVICE_IDP_CONSOLE_PORT:
    'port of a separate listener for the operator console /admin (default: the console is on the main listener); same as --console-port',
  SERVICE_IDP_CONSOLE_HOST: 'address the console listener binds (default 127.0.0.1)',
  SERVICE_IDP_CONSOLE_URL: "the console listener's public URL, an origin other than the issuer's (default http://HOST:PORT)",
  SMS_TRANSPORT: 'outbox (default; development only), webhook or twilio',
  SMS_WEBHOOK_URL: 'with SMS_TRANSPORT=webhook: where each SMS is POSTed as signed JSON',
  SMS_WEBHOOK_SECRET: 'with SMS_TRANSPORT=webhook: Standard Webhooks signing secret (whsec_…, or any 16+ characters)',
  TWILIO_ACCOUNT_SID: 'with SMS_TRANSPORT=twilio: account SID (also TWILIO_AUTH_TOKEN, TWILIO_FROM, optional TWILIO_BASE_URL)',
  SMTP_URL: 'SMTP server, e.g. smtp://user:pass@mail.example.com:587; required when NODE_ENV=production',
  NODE_ENV: '"production" turns on the production checks',
} as const;

export interface ConfigFlags {
  port?: string | undefined;
  host?: string | undefined;
  data?: string | undefined;
  database?: string | undefined;
  issuer?: string | undefined;
  'test-mode'?: boolean | undefined;
  'dev-inbox'?: boolean | undefined;
  'metrics-port'?: string | undefined;
  'console-port'?: string | undefined;
}

/** Merges flags over environment over defaults, once, and refuses unsafe combinations. */
export function loadConfig(flags: ConfigFlags, env: NodeJS.ProcessEnv = process.env): ServiceConfig {
  const port = Number(flags.port ?? env.SERVICE_IDP_PORT ?? DEFAULT_PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new ConfigError(`invalid port ${flags.port ?? env.SERVICE_IDP_PORT}: a whole number from 0 to 65535`);
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
  if (issuerUrl.protocol !== 'https:' && issuerUrl.protocol !== 'http:')
    throw new ConfigError(`the issuer must be an http(s) URL, not ${issuerUrl.protocol.slice(0, -1)}: ${issuer}`);
  const logFormat = env.SERVICE_IDP_LOG_FORMAT || undefined;
  if (logFormat !== undefined && logFormat !== 'json' && logFormat !== 'pretty')
    throw new ConfigError(`SERVICE_IDP_LOG_FORMAT must be json or pretty, not ${logFormat}`);
  const production = env.NODE_ENV === 'production';
  const rememberDays = Number(env.SERVICE_IDP_MFA_REMEMBER_DAYS || MFA_REMEMBER_DAYS);
  if (!Number.isInteger(rememberDays) || rememberDays < 0 || rememberDays > 365) {
    throw new ConfigError(`invalid SERVICE_IDP_MFA_REMEMBER_DAYS: ${env.SERVICE_IDP_MFA_REMEMBER_DAYS} (0 to 365)`);
  }
  const databaseUrl = flags.database ?? (env.DATABASE_URL || undefined);
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('--database / DATABASE_URL must be a postgres:// URL (leave it unset for SQLite in the data folder)');
  }
  const dbPoolSize = integerSetting(env, 'SERVICE_IDP_DB_POOL_SIZE', DB_POOL_SIZE, 1, 1000);
  const dbStatementTimeoutMs = integerSetting(env, 'SERVICE_IDP_DB_STATEMENT_TIMEOUT_MS', DB_STATEMENT_TIMEOUT_MS, 1, 3_600_000);
  const sms = smsConfig(env);
  const testMode = flags['test-mode'] ?? env.SERVICE_IDP_TEST_MODE === '1';
  const smtpUrl = smtpUrlSetting(env.SMTP_URL);
  if (production && testMode) throw new ConfigError('--test-mode is refused when NODE_ENV=production: it puts one-time codes in responses');
  if (production && !smtpUrl)
    throw new ConfigError('SMTP_URL is required when NODE_ENV=production: the development mailbox is not for real users');
  if (production && issuerUrl.protocol !== 'https:') throw new ConfigError('the issuer must be an https URL when NODE_ENV=production');
  const devInbox = flags['dev-inbox'] ?? env.SERVICE_IDP_DEV_INBOX === '1';
  if (production && devInbox) throw new ConfigError('--dev-inbox is refused when NODE_ENV=production: it shows every one-time code');
  const webhookRequestTimeoutMs = integerSetting(env, 'SERVICE_IDP_WEBHOOK_TIMEOUT_MS', WEBHOOK_REQUEST_TIMEOUT_MS, 100, 600_000);
  const webhookLeaseMs = integerSetting(env, 'SERVICE_IDP_WEBHOOK_LEASE_MS', WEBHOOK_LEASE_MS, 1000, 3_600_000);
  // The lease covers the attempt and the write of its outcome: a shorter one would hand a live node's delivery to another node.
  if (webhookLeaseMs <= webhookRequestTimeoutMs)
    throw new ConfigError(
      `SERVICE_IDP_WEBHOOK_LEASE_MS (${webhookLeaseMs}) must be longer than the webhook timeout (${webhookRequestTimeoutMs} ms)`,
    );
  const allowInternal = env.SERVICE_IDP_WEBHOOK_ALLOW_INTERNAL || '0';
  // Strict: a "true" or "yes" read as off would leave the operator wondering why deliveries fail.
  if (allowInternal !== '0' && allowInternal !== '1')
    throw new ConfigError(`SERVICE_IDP_WEBHOOK_ALLOW_INTERNAL must be 1 or 0, not ${allowInternal}`);
  const metricsPortSetting = flags['metrics-port'] ?? (env.SERVICE_IDP_METRICS_PORT || undefined);
  const metricsPort = metricsPortSetting === undefined ? undefined : Number(metricsPortSetting);
  if (metricsPort !== undefined && (!Number.isInteger(metricsPort) || metricsPort < 0 || metricsPort > 65535))
    throw new ConfigError(`invalid metrics port ${metricsPortSetting}: a whole number from 0 to 65535`);
  const consoleListener = consoleSetting(flags, env, { port, host, issuerUrl, production });
  return {
    port,
    host,
    dataDir: resolve(flags.data ?? env.SERVICE_IDP_DATA ?? './data'),
    databaseUrl,
    dbPoolSize,
    dbStatementTimeoutMs,
    issuer,
    testMode,
    smtpUrl,
    mailFrom: env.SERVICE_IDP_MAIL_FROM ?? 'Sign-in <no-reply@localhost>',
    mailTemplatesDir: folderSetting(env, 'SERVICE_IDP_MAIL_TEMPLATES'),
    localesDir: folderSetting(env, 'SERVICE_IDP_LOCALES'),
    production,
    logLevel: env.SERVICE_IDP_LOG_LEVEL ?? 'info',
    logFormat,
    trustProxy: trustProxySetting(env.SERVICE_IDP_TRUST_PROXY),
    dnsServers: dnsServersSetting(env.SERVICE_IDP_DNS_SERVERS),
    sms,
    mfaRememberDays: rememberDays,
    deviceIdleDays: integerSetting(env, 'SERVICE_IDP_DEVICE_IDLE_DAYS', DEVICE_IDLE_EXPIRY_DAYS, 1, 3650),
    eventRetentionDays: integerSetting(env, 'SERVICE_IDP_EVENT_RETENTION_DAYS', EVENT_RETENTION_DAYS, 1, 3650),
    clientRegistration: clientRegistrationSetting(env.SERVICE_IDP_CLIENT_REGISTRATION),
    clientIdMetadataDocuments: onOffSetting(env, 'SERVICE_IDP_CLIENT_ID_METADATA_DOCUMENTS'),
    registeredClientUnusedDays: integerSetting(env, 'SERVICE_IDP_REGISTERED_CLIENT_UNUSED_DAYS', REGISTERED_CLIENT_UNUSED_DAYS, 1, 3650),
    organizationSelfService: {
      enabled: onOffSetting(env, 'SERVICE_IDP_ORGANIZATION_SELF_SERVICE'),
      creatorRole: creatorRoleSetting(env.SERVICE_IDP_ORGANIZATION_CREATOR_ROLE),
      perUser: integerSetting(env, 'SERVICE_IDP_ORGANIZATIONS_PER_USER', ORGANIZATIONS_PER_USER, 1, 1000),
    },
    sendSpacingSeconds: integerSetting(env, 'SERVICE_IDP_SEND_SPACING_SECONDS', SEND_SPACING_PER_PURPOSE[0].windowSeconds, 1, 3600),
    sendBudgets: {
      email: {
        service: budgetSetting(env, 'SERVICE_IDP_MAIL_BUDGET', MAIL_BUDGET_SERVICE),
        application: budgetSetting(env, 'SERVICE_IDP_APP_MAIL_BUDGET', MAIL_BUDGET_PER_APPLICATION),
      },
      sms: {
        service: budgetSetting(env, 'SERVICE_IDP_SMS_BUDGET', SMS_BUDGET_SERVICE),
        application: budgetSetting(env, 'SERVICE_IDP_APP_SMS_BUDGET', SMS_BUDGET_PER_APPLICATION),
      },
    },
    sendChallengeThresholds: {
      ip: budgetSetting(env, 'SERVICE_IDP_CHALLENGE_PER_IP', SEND_CHALLENGE_AFTER_PER_IP),
      subnet: budgetSetting(env, 'SERVICE_IDP_CHALLENGE_PER_SUBNET', SEND_CHALLENGE_AFTER_PER_SUBNET),
      service: {
        email: budgetSetting(env, 'SERVICE_IDP_CHALLENGE_MAIL', SEND_CHALLENGE_AFTER_MAIL_SERVICE),
        sms: budgetSetting(env, 'SERVICE_IDP_CHALLENGE_SMS', SEND_CHALLENGE_AFTER_SMS_SERVICE),
      },
    },
    sendCaptcha: captchaSetting(env),
    sendRules: sendRulesSetting(env, sms),
    keyCacheSeconds: integerSetting(env, 'SERVICE_IDP_KEY_CACHE_SECONDS', KEY_CACHE_SECONDS, 1, 300),
    webhookRequestTimeoutMs,
    webhookLeaseMs,
    webhookAllowInternal: allowInternal === '1',
    placeHeader: env.SERVICE_IDP_PLACE_HEADER?.trim().toLowerCase() || undefined,
    passkeyRpId: passkeyRpIdSetting(env.SERVICE_IDP_PASSKEY_RP_ID),
    devInbox,
    metrics: metricsPort === undefined ? undefined : { host: env.SERVICE_IDP_METRICS_HOST || '127.0.0.1', port: metricsPort },
    console: consoleListener,
  };
}

/**
 * --console-port / SERVICE_IDP_CONSOLE_PORT, _HOST and _URL: the console's own listener. Its URL
 * is an origin (no path: the console lives at /admin below it), never the issuer's (the main
 * listener no longer serves /admin), https in production like the issuer.
 */
function consoleSetting(
  flags: ConfigFlags,
  env: NodeJS.ProcessEnv,
  main: { port: number; host: string; issuerUrl: URL; production: boolean },
): ServiceConfig['console'] {
  const portSetting = flags['console-port'] ?? (env.SERVICE_IDP_CONSOLE_PORT || undefined);
  if (portSetting === undefined) {
    const orphan = ['SERVICE_IDP_CONSOLE_HOST', 'SERVICE_IDP_CONSOLE_URL'].find((name) => env[name]);
    if (orphan) throw new ConfigError(`${orphan} is set but no console port: set SERVICE_IDP_CONSOLE_PORT (--console-port) too`);
    return undefined;
  }
  const port = Number(portSetting);
  if (!/^\d+$/.test(portSetting) || port > 65535)
    throw new ConfigError(`invalid console port ${portSetting}: a whole number from 0 to 65535`);
  const host = env.SERVICE_IDP_CONSOLE_HOST || CONSOLE_LISTENER_HOST;
  if (port !== 0 && port === main.port && (host === main.host || host === '0.0.0.0' || main.host === '0.0.0.0'))
    throw new ConfigError(`the console port ${port} is the main listener's: choose another --console-port`);
  const url = (env.SERVICE_IDP_CONSOLE_URL || `http://${host.includes(':') ? `[${host}]` : host}:${port}`).replace(/\/+$/, '');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(`invalid SERVICE_IDP_CONSOLE_URL: ${url}`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    throw new ConfigError(`SERVICE_IDP_CONSOLE_URL must be an http(s) URL, not ${parsed.protocol.slice(0, -1)}: ${url}`);
  if (parsed.origin !== url)
    throw new ConfigError(`SERVICE_IDP_CONSOLE_URL must be an origin only (scheme, host, port), with no path, query or user: ${url}`);
  // Port 0 (tests): startService binds a free port and rewrites the URL, never the main listener's.
  if (parsed.origin === main.issuerUrl.origin && parsed.port !== '0')
    throw new ConfigError(
      `SERVICE_IDP_CONSOLE_URL must differ from the issuer's origin (${parsed.origin}): the console listener is reached at its own address`,
    );
  if (main.production && parsed.protocol !== 'https:')
    throw new ConfigError('SERVICE_IDP_CONSOLE_URL must be an https URL when NODE_ENV=production');
  return { host, port, url };
}

/**
 * What `start` and `config check` warn about: settings that work but are likely a mistake.
 * An issuer on an unspecified address (0.0.0.0, ::) is no URL a browser or a relying party can
 * reach; it is only derived so when --issuer is not given (production refuses it: not https).
 */
export function configWarnings(config: Pick<ServiceConfig, 'issuer' | 'host'>): string[] {
  const host = new URL(config.issuer).hostname.replace(/^\[|\]$/g, '');
  return host === '0.0.0.0' || host === '::'
    ? [
        `the issuer ${config.issuer} is the address to listen on (--host ${config.host}), not one a browser can reach: set --issuer (SERVICE_IDP_ISSUER) to the URL users reach`,
      ]
    : [];
}

/** SMTP_URL: nodemailer's smtp:// or smtps:// URL. Never echoed: it may hold a password. */
function smtpUrlSetting(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  let protocol: string;
  try {
    protocol = new URL(raw).protocol;
  } catch {
    throw new ConfigError('SMTP_URL is not a URL: give smtp://user:pass@mail.example.com:587 (or smtps://… for TLS from the start)');
  }
  if (protocol !== 'smtp:' && protocol !== 'smtps:')
    throw new ConfigError(`SMTP_URL must be an smtp:// or smtps:// URL, not ${protocol.slice(0, -1)}`);
  return raw;
}

/** A setting naming a folder that must exist (a typo would otherwise be silently ignored). */
function folderSetting(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[name];
  if (!raw) return undefined;
  const folder = resolve(raw);
  let isFolder = false;
  try {
    isFolder = statSync(folder).isDirectory();
  } catch {}
  if (!isFolder) throw new ConfigError(`${name}: no folder ${folder}`);
  return folder;
}

/** proxy-addr's names for address ranges, accepted by Fastify's trustProxy beside addresses and CIDRs. */
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** SERVICE_IDP_DNS_SERVERS: comma-separated IP addresses, each with an optional port (IPv6 in brackets then). */
function dnsServersSetting(raw: string | undefined): string[] | undefined {
  if (!raw) return undefined;
  return raw.split(',').map((item) => {
    const entry = item.trim();
    const match = /^(?:\[([0-9a-fA-F:.]+)\]|([0-9.]+))(?::(\d{1,5}))?$/.exec(entry) ?? /^([0-9a-fA-F:]+)$/.exec(entry);
    const address = match?.[1] ?? match?.[2] ?? '';
    if (!match || isIP(address) === 0 || Number(match[3] ?? 53) > 65535)
      throw new ConfigError(
        `SERVICE_IDP_DNS_SERVERS: "${entry}" is not an IP address with an optional port (separate several with commas)`,
      );
    return entry;
  });
}

/** SERVICE_IDP_TRUST_PROXY: comma-separated addresses, CIDRs or range names, checked here rather than by Fastify at listen. */
function trustProxySetting(raw: string | undefined): false | string {
  if (!raw) return false;
  for (const entry of raw.split(',').map((item) => item.trim())) {
    const [address = '', bits, extra] = entry.split('/');
    const maxBits = isIP(address) === 4 ? 32 : 128;
    const ok =
      PROXY_RANGE_NAMES.has(entry) ||
      (isIP(address) !== 0 && extra === undefined && (bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= maxBits)));
    if (!ok)
      throw new ConfigError(
        `SERVICE_IDP_TRUST_PROXY: "${entry}" is not an address, a CIDR (10.0.0.0/8) or loopback, linklocal, uniquelocal (separate several with commas)`,
      );
  }
  return raw;
}

/** A relying party id is a domain (WebAuthn L3 5.1.2: a valid domain string); an IP address never is. */
function passkeyRpIdSetting(raw: string | undefined): string | undefined {
  const value = raw?.trim().toLowerCase();
  if (!value) return undefined;
  if (!/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/.test(value) || /^[0-9.]+$/.test(value))
    throw new ConfigError(`invalid SERVICE_IDP_PASSKEY_RP_ID: ${raw} (a domain such as example.com)`);
  return value;
}

function budgetSetting(env: NodeJS.ProcessEnv, name: string, fallback: readonly Limit[]): readonly Limit[] {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  try {
    return parseBudget(raw);
  } catch (error) {
    throw new ConfigError(`invalid ${name}: ${(error as Error).message}`);
  }
}

/**
 * The service-wide send rules. Unset, SERVICE_IDP_SMS_COUNTRIES allows no country with a real
 * SMS transport (no SMS until the operator chooses: docs/operations.md) and any with the
 * development outbox, which reaches nobody and bills nothing.
 */
function sendRulesSetting(env: NodeJS.ProcessEnv, sms: SmsConfig): SendRules {
  const named = <T>(name: string, read: () => T): T => {
    try {
      return read();
    } catch (error) {
      throw new ConfigError(`invalid ${name}: ${(error as Error).message}`);
    }
  };
  const listed = env.SERVICE_IDP_SMS_COUNTRIES?.trim();
  const countries = listed
    ? named('SERVICE_IDP_SMS_COUNTRIES', () => parseCountries(listed.split(',')))
    : sms.transport === 'outbox'
      ? 'any'
      : [];
  const cap = env.SERVICE_IDP_SMS_DAILY_COST_CAP?.trim();
  const prices = env.SERVICE_IDP_SMS_PRICES?.trim() ?? '';
  const cost = cap ? named('SERVICE_IDP_SMS_DAILY_COST_CAP or SERVICE_IDP_SMS_PRICES', () => parseSmsCost(cap, prices)) : undefined;
  if (!cap && env.SERVICE_IDP_SMS_PRICES?.trim())
    throw new ConfigError('SERVICE_IDP_SMS_PRICES is set but no SERVICE_IDP_SMS_DAILY_COST_CAP: set the cap the prices count towards');
  const disposable = env.SERVICE_IDP_REFUSE_DISPOSABLE_MAIL?.trim().toLowerCase() ?? '';
  if (!['', '0', '1', 'true', 'false'].includes(disposable))
    throw new ConfigError(`invalid SERVICE_IDP_REFUSE_DISPOSABLE_MAIL: ${disposable} (true or false)`);
  return {
    sms: { countries, perPrefix: budgetSetting(env, 'SERVICE_IDP_SMS_PER_PREFIX', SMS_PER_PREFIX), cost },
    refuseDisposableMail: disposable === 'true' || disposable === '1',
  };
}

/**
 * SERVICE_IDP_SEND_CHALLENGE and the CAPTCHA's keys: both keys are required with a CAPTCHA and
 * refused without one (a key left over would read as protection that is not there).
 */
function captchaSetting(env: NodeJS.ProcessEnv): CaptchaConfig | undefined {
  const kind = env.SERVICE_IDP_SEND_CHALLENGE?.trim() || 'pow';
  const names = [
    'SERVICE_IDP_CAPTCHA_SITE_KEY',
    'SERVICE_IDP_CAPTCHA_SECRET',
    'SERVICE_IDP_CAPTCHA_VERIFY_URL',
    'SERVICE_IDP_CAPTCHA_SCRIPT_URL',
  ];
  if (kind === 'pow') {
    const orphan = names.find((name) => env[name]);
    if (orphan) throw new ConfigError(`${orphan} is set but SERVICE_IDP_SEND_CHALLENGE is pow: set it to turnstile or hcaptcha`);
    return undefined;
  }
  if (kind !== 'turnstile' && kind !== 'hcaptcha')
    throw new ConfigError(`SERVICE_IDP_SEND_CHALLENGE must be pow, turnstile or hcaptcha, not ${kind}`);
  const need = (name: string) => {
    const value = env[name]?.trim();
    if (!value) throw new ConfigError(`SERVICE_IDP_SEND_CHALLENGE=${kind} needs ${name}`);
    return value;
  };
  const url = (name: string, fallback: string) => {
    const value = env[name]?.trim() || fallback;
    if (!/^https?:\/\//.test(value) || !URL.canParse(value)) throw new ConfigError(`invalid ${name}: an http(s) URL`);
    // The secret travels to the verify URL: in production, only over TLS.
    if (env.NODE_ENV === 'production' && !value.startsWith('https:'))
      throw new ConfigError(`${name} must be https when NODE_ENV=production`);
    return value;
  };
  const provider = CAPTCHA_PROVIDERS[kind];
  return {
    kind,
    siteKey: need('SERVICE_IDP_CAPTCHA_SITE_KEY'),
    secret: need('SERVICE_IDP_CAPTCHA_SECRET'),
    verifyUrl: url('SERVICE_IDP_CAPTCHA_VERIFY_URL', provider.verifyUrl),
    scriptUrl: url('SERVICE_IDP_CAPTCHA_SCRIPT_URL', provider.scriptUrl),
    timeoutMs: integerSetting(env, 'SERVICE_IDP_CAPTCHA_TIMEOUT_MS', CAPTCHA_VERIFY_TIMEOUT_MS, 100, 30_000),
  };
}

function clientRegistrationSetting(raw: string | undefined): ServiceConfig['clientRegistration'] {
  const value = raw?.trim() || 'off';
  if (value !== 'off' && value !== 'open' && value !== 'initial-token')
    throw new ConfigError(`SERVICE_IDP_CLIENT_REGISTRATION must be off, open or initial-token, not ${value}`);
  return value;
}

/** SERVICE_IDP_ORGANIZATION_CREATOR_ROLE: an organization role's name (default admin). */
function creatorRoleSetting(raw: string | undefined): string {
  const value = raw?.trim() || 'admin';
  if (!new RegExp(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,${ROLE_NAME_MAX_LENGTH - 1}}$`).test(value))
    throw new ConfigError(`SERVICE_IDP_ORGANIZATION_CREATOR_ROLE: "${value}" is not an organization role name (letters, digits, . _ : -)`);
  return value;
}

/** `on` or `off` (default off). */
function onOffSetting(env: NodeJS.ProcessEnv, name: string): boolean {
  const value = env[name]?.trim() || 'off';
  if (value !== 'on' && value !== 'off') throw new ConfigError(`${name} must be on or off, not ${value}`);
  return value === 'on';
}

function integerSetting(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  const value = raw ? Number(raw) : fallback;
  if (!Number.isInteger(value) || value < min || value > max) throw new ConfigError(`invalid ${name}: ${raw} (${min} to ${max})`);
  return value;
}

function smsConfig(env: NodeJS.ProcessEnv): SmsConfig {
  const transport = env.SMS_TRANSPORT ?? 'outbox';
  const need = (name: string) => {
    const value = env[name];
    if (!value) throw new ConfigError(`SMS_TRANSPORT=${transport} needs ${name}`);
    return value;
  };
  switch (transport) {
    case 'outbox':
      return { transport };
    case 'webhook': {
      const secret = need('SMS_WEBHOOK_SECRET');
      if (!smsWebhookKey(secret))
        throw new ConfigError(
          secret.startsWith('whsec_')
            ? `SMS_WEBHOOK_SECRET starts with whsec_ but is not the base64 of ${WEBHOOK_SECRET_MIN_LENGTH} bytes or more (a Standard Webhooks secret)`
            : `SMS_WEBHOOK_SECRET must be a whsec_ secret or at least ${WEBHOOK_SECRET_MIN_LENGTH} characters`,
        );
      return { transport, url: need('SMS_WEBHOOK_URL'), secret };
    }
    case 'twilio':
      return {
        transport,
        accountSid: need('TWILIO_ACCOUNT_SID'),
        authToken: need('TWILIO_AUTH_TOKEN'),
        from: need('TWILIO_FROM'),
        ...(env.TWILIO_BASE_URL ? { baseUrl: env.TWILIO_BASE_URL } : {}),
      };
    default:
      throw new ConfigError(`SMS_TRANSPORT must be outbox, webhook or twilio, not ${transport}`);
  }
}
