import { sql } from 'kysely';
import type { MfaMethod } from 'service-protocol';
import { accountCenterWing } from './account-center/wing.js';
import { adminWing, userAdminWing } from './admin/wing.js';
import { apisWing } from './apis/wing.js';
import { authorizationCodesWing } from './authorization-codes/wing.js';
import { brandingWing } from './branding/wing.js';
import { clientRegistrationWing } from './client-registration/wing.js';
import { clientsWing } from './clients/wing.js';
import { Composition } from './composition/wing.js';
import type { ServiceConfig } from './config.js';
import { consoleWing } from './console/wing.js';
import { createSealer } from './crypto/seal.js';
import { createSecretHasher } from './crypto/secrets.js';
import { loadServerSecret } from './crypto/server-secret.js';
import { delegationWing } from './delegation/wing.js';
import { deviceAuthorizationWing } from './device-authorization/wing.js';
import { devicesWing } from './devices/wing.js';
import { acrClassesOf, enrollableMethods, factorList, factorMessagesOf, metricLabelsOf } from './factors/index.js';
import type { FactorModule } from './factors/module.js';
import { upstreamWing } from './factors/upstream/wing.js';
import { firstFactorsWing, mfaWing } from './factors/wing.js';
import { loadLocales } from './i18n/locales.js';
import type { SigningKeyGenerator } from './keys/keyring.js';
import { keysWing } from './keys/wing.js';
import type { Mailer } from './mail/mailer.js';
import { mailWing } from './mail/wing.js';
import { metricsWing } from './metrics/wing.js';
import { firstPartyWing, oidcSessionsWing, oidcWing } from './oidc/wing.js';
import { organizationDomainsWing } from './organization-domains/wing.js';
import { organizationsWing } from './organizations/wing.js';
import { otpWing } from './otp/wing.js';
import type { SmsTransport } from './sms/transport.js';
import { smsWing } from './sms/wing.js';
import { spentTokensWing } from './spent-tokens/wing.js';
import { describeDatabase, openDatabase, poolUse } from './storage/database.js';
import { migrate } from './storage/migrations.js';
import type { Db } from './storage/schema.js';
import { startSweeper } from './storage/sweeper.js';
import { throttleWing } from './throttle/wing.js';
import { tokenWing } from './token/wing.js';
import { enabledUsersWing } from './users/wing.js';
import type { HostResolver } from './webhooks/target.js';
import { eventsWing } from './webhooks/wing.js';
import type { DeliveryTimings } from './webhooks/worker.js';

export interface ContextOptions {
  /** Overrides the configured database (tests pass SQLite ':memory:' or a scratch PostgreSQL schema). */
  db?: Db;
  /** Overrides the mail transport (tests pass one that records). */
  mailer?: Mailer;
  now?: () => number;
  /** Overrides the SMS transport (tests). */
  sms?: SmsTransport;
  /** Shorter webhook timings (tests), over the configured ones. */
  webhookTimings?: Partial<DeliveryTimings>;
  /** Resolves the names of the hosts the service calls: webhook receivers and client metadata documents (tests); default: the system resolver. */
  webhookResolve?: HostResolver;
  /** A shorter time limit for fetching a client metadata document (tests); default: defaults.ts. */
  clientMetadataTimeoutMs?: number;
  /** Reaches upstream identity providers (tests route Google's, Apple's, GitHub's and Microsoft's hosts to local servers). */
  upstreamFetch?: typeof fetch;
  /** Makes signing key pairs (tests hand out pre-generated first keys); default: a fresh pair each time. */
  generateSigningKey?: SigningKeyGenerator;
  /** Factors beside the registry's (factors/index.ts), mounted and listed as theirs are (docs/architecture.md, "How to add a factor"). */
  extraFactors?: readonly FactorModule[];
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** What every wing may read: the configuration, the database, the server secret's derivations, the factors and the languages. */
async function openFoundation(config: ServiceConfig, options: ContextOptions) {
  const now = options.now ?? Date.now;
  const serverSecret = loadServerSecret(config.dataDir);
  const db = options.db ?? openDatabase(config);
  try {
    await migrate(db);
  } catch (error) {
    if (!options.db) await db.destroy();
    throw error;
  }
  const factors = factorList(options.extraFactors);
  return {
    config,
    db,
    now,
    serverSecret,
    hash: createSecretHasher(serverSecret),
    sealerFor: (purpose: string) => createSealer(serverSecret, purpose),
    /** The service's factors (factors/index.ts, and the caller's extraFactors): the app mounts their routes. */
    factors,
    metricLabels: metricLabelsOf(factors),
    acrClasses: acrClassesOf(factors),
    // The methods a user may choose (factors/index.ts; a plug-in's method is a string the wire's enumeration then holds).
    mfaMethods: enrollableMethods(factors, config) as MfaMethod[],
    accountMfaMethods: enrollableMethods(factors, config, true) as MfaMethod[],
    locales: loadLocales(config.localesDir, (line) => console.warn(`service-idp: ${line}`), factorMessagesOf(factors)),
    idleMs: config.deviceIdleDays * DAY_MS,
    // Shown in authenticator apps (a colon would break their label parsing: IPv6 hosts); the product name until the operator sets one.
    issuerName: new URL(config.issuer).hostname.replace(/^\[|\]$/g, '').replaceAll(':', '.'),
    poolUse: () => poolUse(db),
    /** The SQLite path or the PostgreSQL URL (password hidden), for messages. */
    database: options.db ? 'the database given by the caller' : describeDatabase(config),
    /** The tests' replacements (mail and SMS transports, webhook timings, upstream hosts, signing keys). */
    overrides: options,
  };
}

/**
 * The composition root shared by the CLI and the HTTP app: the wings (docs/architecture.md,
 * "Wings"), each opened on what the ones before it made, in dependency order; the app mounts
 * their routes (app.ts) and the sweeper runs their sweeps.
 */
export async function openContext(config: ServiceConfig, options: ContextOptions = {}) {
  const foundation = await openFoundation(config, options);
  const { context, parts } = Composition.of(foundation)
    .with(eventsWing)
    .with(metricsWing)
    .with(clientsWing)
    .with(smsWing)
    .with(mailWing)
    .with(enabledUsersWing)
    .with(apisWing)
    .with(brandingWing)
    .with(spentTokensWing)
    .with(authorizationCodesWing)
    .with(throttleWing)
    .with(organizationsWing)
    .with(organizationDomainsWing)
    .with(clientRegistrationWing)
    .with(keysWing)
    .with(oidcSessionsWing)
    .with(devicesWing)
    .with(otpWing)
    .with(mfaWing)
    .with(firstFactorsWing)
    .with(delegationWing)
    .with(oidcWing)
    .with(deviceAuthorizationWing)
    .with(tokenWing)
    .with(upstreamWing)
    .with(userAdminWing)
    .with(firstPartyWing)
    .with(consoleWing)
    .with(adminWing)
    .with(accountCenterWing);
  for (const part of parts) await part.ready?.();
  const { db, now } = context;

  return {
    ...context,
    /** Every wing as opened, in order: the app mounts their routes. */
    wings: parts,
    /** Starts this node's outbox delivery loop (webhooks and back-channel logout tokens); `stop()` it before closing. */
    startWebhookDelivery: (onError: (error: unknown) => void) => context.startOutboxDelivery(onError, context.logoutDelivery),
    /** Deletes expired rows: every wing sweeps its own tables, in wing order. */
    async sweepExpired(at: number) {
      for (const part of parts) await part.sweep?.(at);
    },
    /** Sweeps in the background; returns the stop function. */
    startSweeper(onError: (error: unknown) => void) {
      return startSweeper((at) => this.sweepExpired(at), now, onError);
    },
    /** Readiness: true when the database answers a trivial query. */
    async databaseReady(): Promise<boolean> {
      try {
        await sql`select 1`.execute(db);
        return true;
      } catch {
        return false;
      }
    },
    async close() {
      for (const part of parts.toReversed()) part.close?.();
      await db.destroy();
    },
  };
}

export type ServiceContext = Awaited<ReturnType<typeof openContext>>;
