import { sql } from 'kysely';
import type { MfaMethod } from 'service-protocol';
import { createAccountCenter } from './account/service.js';
import { createAccountStore } from './accounts/store.js';
import { createOperations } from './admin/operations.js';
import { createAdminKeys } from './admin/service.js';
import { createAdminKeyStore } from './admin/store.js';
import { createCodeService } from './authorization-codes/service.js';
import { createCodeStore } from './authorization-codes/store.js';
import { createAppMailer } from './branding/mailer.js';
import { createBranding } from './branding/service.js';
import { createBrandingStore } from './branding/store.js';
import { createClientService } from './clients/service.js';
import { createClientStore } from './clients/store.js';
import type { ServiceConfig } from './config.js';
import { openConsole } from './console/wiring.js';
import { createSealer } from './crypto/seal.js';
import { createSecretHasher } from './crypto/secrets.js';
import { deriveServerKey, loadServerSecret } from './crypto/server-secret.js';
import { WEBHOOK_RETRY_WINDOW_HOURS } from './defaults.js';
import { createDelegationService } from './delegation/service.js';
import { createDelegationStore } from './delegation/store.js';
import { createDeviceNotices } from './devices/notice.js';
import { createDeviceService, type SessionEnder } from './devices/service.js';
import { createDeviceStore } from './devices/store.js';
import { createDpopVerifier } from './dpop/proof.js';
import { createEventLog } from './events/service.js';
import { createEventStore } from './events/store.js';
import { createDeviceProver } from './factors/device-key/prover.js';
import { createDeviceKeySignIn } from './factors/device-key/sign-in.js';
import { createDeviceKeySignInStore } from './factors/device-key/sign-in-store.js';
import { createRegistrationService } from './factors/email-code/new-device.js';
import { createRegistrationStore } from './factors/email-code/new-device-store.js';
import {
  acrClassesOf,
  enrollableMethods,
  type FactorModule,
  factorList,
  factorMessagesOf,
  metricLabelsOf,
  mfaFactorsOf,
} from './factors/index.js';
import { createPasskeyCeremony } from './factors/passkey/ceremony.js';
import { createPasskeyFallback } from './factors/passkey/fallback.js';
import { createPasskeyMfa } from './factors/passkey/mfa.js';
import { createPasskeyService } from './factors/passkey/service.js';
import { createPasskeyStore } from './factors/passkey/store.js';
import { createRecoveryCodes } from './factors/recovery-code/service.js';
import { createRecoveryCodeStore } from './factors/recovery-code/store.js';
import { openUpstream } from './factors/upstream/wiring.js';
import { loadLocales } from './i18n/locales.js';
import { createLoginService } from './identify/service.js';
import { createKeyring, type SigningKeyGenerator } from './keys/keyring.js';
import { createKeyStore } from './keys/store.js';
import { createMailboxStore } from './mail/mailbox-store.js';
import { createMailboxMailer, createSmtpMailer, type Mailer } from './mail/mailer.js';
import { loadMailTemplates } from './mail/templates.js';
import { createServiceMetrics } from './metrics/service.js';
import { createLogoutDelivery } from './oidc/backchannel-logout.js';
import { createDbsc } from './oidc/dbsc.js';
import { hostedSignInFor } from './oidc/hosted-for.js';
import { createLogoutService } from './oidc/logout.js';
import { createPasskeyOffer } from './oidc/passkey-offer.js';
import { createPushedRequests } from './oidc/pushed-requests.js';
import { createRefreshTokenStore } from './oidc/refresh-store.js';
import { createRefreshTokens } from './oidc/refresh-tokens.js';
import { createOidcService } from './oidc/service.js';
import { createOidcStore } from './oidc/store.js';
import { createSendChallenges } from './otp/send-challenge.js';
import { createOtpService } from './otp/service.js';
import { createSignInFinisher } from './sign-in/finish.js';
import { createMfaStep } from './sign-in/mfa-step.js';
import { createMfaStore } from './sign-in/mfa-store.js';
import { createSignInPipeline } from './sign-in/pipeline.js';
import { smsTransport } from './sms/configured.js';
import { createSmsOutboxStore } from './sms/outbox-store.js';
import type { SmsTransport } from './sms/transport.js';
import { createSpentTokenStore } from './spent-tokens/store.js';
import { describeDatabase, openDatabase, poolUse } from './storage/database.js';
import { migrate } from './storage/migrations.js';
import type { Db } from './storage/schema.js';
import { startSweeper } from './storage/sweeper.js';
import { createThrottle } from './throttle/service.js';
import { createThrottleStore } from './throttle/store.js';
import { createTokenService } from './token/service.js';
import { createUserService } from './users/service.js';
import { createUserStore } from './users/store.js';
import type { HostResolver } from './webhooks/target.js';
import { openWebhooks } from './webhooks/wiring.js';
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
  /** Resolves webhook receivers' names (tests); default: the system resolver. */
  webhookResolve?: HostResolver;
  /** Reaches upstream identity providers (tests route Google's, Apple's, GitHub's and Microsoft's hosts to local servers). */
  upstreamFetch?: typeof fetch;
  /** Makes signing key pairs (tests hand out pre-generated first keys); default: a fresh pair each time. */
  generateSigningKey?: SigningKeyGenerator;
  /** Factors beside the registry's (factors/index.ts), mounted and listed as theirs are (docs/architecture.md, "How to add a factor"). */
  extraFactors?: readonly FactorModule[];
}

/** Wires storage, crypto and flows together: the composition root shared by the CLI and the HTTP app. */
export async function openContext(config: ServiceConfig, options: ContextOptions = {}) {
  const now = options.now ?? Date.now;
  const serverSecret = loadServerSecret(config.dataDir);
  const db = options.db ?? openDatabase(config);
  try {
    await migrate(db);
  } catch (error) {
    if (!options.db) await db.destroy();
    throw error;
  }
  const hash = createSecretHasher(serverSecret);
  const factors = factorList(options.extraFactors);

  const mailbox = createMailboxStore(db);
  const locales = loadLocales(config.localesDir, (line) => console.warn(`service-idp: ${line}`), factorMessagesOf(factors));
  const transport =
    options.mailer ??
    (config.smtpUrl
      ? createSmtpMailer(config.smtpUrl, config.mailFrom)
      : createMailboxMailer(mailbox, now, `development mailbox (service-idp mail${config.devInbox ? `, ${config.issuer}/dev/mail` : ''})`));
  // Every mail in its reader's language, as the request's application (`branding` and `accounts` are made below).
  const brandOf = (app: { id: string; name: string } | undefined) => branding.brandOf(app);
  const mailer = createAppMailer(transport, { locales, issuer: config.issuer, brandOf, savedLocale: (email) => accounts.localeOf(email) });
  // Development keeps loopback receivers (tests, the demo); production refuses internal ones unless told.
  const webhookWing = await openWebhooks(db, {
    sealer: createSealer(serverSecret, 'webhook-secret'),
    production: config.production,
    allowInternal: !config.production || config.webhookAllowInternal,
    timings: { requestTimeoutMs: config.webhookRequestTimeoutMs, leaseMs: config.webhookLeaseMs, ...options.webhookTimings },
    ...(options.webhookResolve ? { resolve: options.webhookResolve } : {}),
    now,
  });
  const { fanOut: webhookFanOut, outbox: webhookOutbox } = webhookWing;
  const eventStore = createEventStore(db, webhookFanOut);
  const events = createEventLog({ store: eventStore, now });
  const webhookWiring = webhookWing.withEvents(events);
  // Per-process counters and scrape-time gauges (docs/operations.md, "Metrics"); the app adds the HTTP ones.
  const metrics = createServiceMetrics({
    now,
    factors: metricLabelsOf(factors),
    webhookBacklog: () => webhookOutbox.backlog(),
    poolUse: () => poolUse(db),
  });
  events.onRecorded(metrics.eventRecorded);
  const clients = createClientService({ store: createClientStore(db), hash, now });
  // Shown in authenticator apps (a colon would break their label parsing: IPv6 hosts); the product name until the operator sets one.
  const issuerName = new URL(config.issuer).hostname.replace(/^\[|\]$/g, '').replaceAll(':', '.');
  const branding = createBranding({ store: createBrandingStore(db), clients, issuer: config.issuer, defaultProductName: issuerName, now });
  const accounts = createAccountStore(db, events);
  const devices = createDeviceStore(db);
  const spentTokens = createSpentTokenStore(db);
  const codeStore = createCodeStore(db);
  const codes = createCodeService({ store: codeStore, hash, now });
  const throttleStore = createThrottleStore(db);
  const throttle = createThrottle({ store: throttleStore, now, onRefused: metrics.throttled });
  const registrationStore = createRegistrationStore(db);
  const keyring = createKeyring({
    store: createKeyStore(db),
    sealer: createSealer(serverSecret, 'signing-key'),
    now,
    cacheSeconds: config.keyCacheSeconds,
    ...(options.generateSigningKey ? { generate: options.generateSigningKey } : {}),
  });
  const idleMs = config.deviceIdleDays * 24 * 60 * 60 * 1000;
  const templates = loadMailTemplates(config.mailTemplatesDir, locales);
  // Ending a session writes back-channel logout rows to the webhook outbox: this node's loop looks at once.
  const oidcStore = createOidcStore(db, { logoutEnqueued: () => webhookFanOut.enqueued() });
  const sessions: SessionEnder = {
    endPasskeySessions: async (userId) => (await oidcStore.endSessions({ userId, which: 'passkeys' }, now())).length,
    endUnbound: async (userId) => (await oidcStore.endSessions({ userId, which: 'unbound' }, now())).length,
    endAll: async (userId) => (await oidcStore.endSessions({ userId, which: 'all' }, now())).length,
  };
  const notices = createDeviceNotices({
    store: devices,
    spent: spentTokens,
    accounts,
    clients,
    mailer,
    templates,
    hash,
    events,
    issuer: config.issuer,
    now,
    sessions,
  });
  const finish = createSignInFinisher({
    devices,
    codes,
    events,
    now,
    onNewDevice: async (device, client) => {
      await events.record({ type: 'device.registered', userId: device.userId, clientId: device.clientId, deviceId: device.id });
      await notices.newDevice(device, client);
    },
  });
  const prover = createDeviceProver({ devices, spent: spentTokens, accounts, hash, now, idleMs });
  const passkeyStore = createPasskeyStore(db);
  const deviceService = createDeviceService({
    store: devices,
    prover,
    events,
    now,
    idleMs,
    passkeys: passkeyStore,
    // A passkey-MFA user's last passkey gone: email MFA, and the user is told (factors/passkey/fallback.ts).
    onPasskeyRevoked: (userId, client) => fallback.revoked(userId, client),
    sessions,
  });
  const smsOutbox = createSmsOutboxStore(db);
  const sms = options.sms ?? smsTransport(config, smsOutbox, now);
  const mfaStore = createMfaStore(db);
  const otp = createOtpService({
    accounts,
    throttle,
    mailer,
    templates,
    sms,
    hash,
    events,
    now,
    sendSpacingSeconds: config.sendSpacingSeconds,
    budgets: config.sendBudgets,
    challenges: createSendChallenges({ hmacKey: deriveServerKey(serverSecret, 'send-challenge'), hash, spent: spentTokens, now }),
    challengeThresholds: config.sendChallengeThresholds,
  });
  const recoveryCodes = createRecoveryCodes({ store: createRecoveryCodeStore(db), accounts, hash, events, mailer, templates, now });
  const mfa = createMfaStep({
    store: mfaStore,
    accounts,
    finish,
    otp,
    hash,
    events,
    mailer,
    templates,
    factors: mfaFactorsOf(factors, { otp, sealer: createSealer(serverSecret, 'totp-secret'), methods: mfaStore, now, issuerName }),
    recoveryCodes,
    now,
    rememberMs: config.mfaRememberDays * 24 * 60 * 60 * 1000,
    issuerName,
  });
  const fallback = createPasskeyFallback({ store: mfaStore, passkeys: passkeyStore, accounts, events, mailer, templates, now, issuerName });
  // The methods a user may choose (factors/index.ts; a plug-in's method is a string the wire's enumeration then holds).
  const mfaMethods = enrollableMethods(factors, config) as MfaMethod[];
  const passkeyCeremony = createPasskeyCeremony({ store: passkeyStore, spent: spentTokens, events, hash, now, rpId: config.passkeyRpId });
  const pipeline = createSignInPipeline({ mfa, finish });
  const passkeys = createPasskeyService({
    ceremony: passkeyCeremony,
    store: passkeyStore,
    devices: deviceService,
    accounts,
    mfa,
    pipeline,
    events,
    throttle,
    now,
  });
  const passkeyMfa = createPasskeyMfa({ ceremony: passkeyCeremony, store: passkeyStore, mfa, events });
  const registration = createRegistrationService({ store: registrationStore, accounts, mfa, mfaMethods, pipeline, otp, hash, now });
  const delegation = createDelegationService({
    store: createDelegationStore(db),
    spent: spentTokens,
    clients,
    accounts,
    mfa,
    mfaMethods,
    devices: deviceService,
    hash,
    sealer: createSealer(serverSecret, 'delegation-key'),
    events,
    issuer: config.issuer,
    now,
  });
  const deviceKey = createDeviceKeySignIn({ prover, mfa, store: createDeviceKeySignInStore(db, spentTokens), codes, events, now });
  const login = createLoginService({ deviceKey, emailCode: registration, clients });
  const refreshTokens = createRefreshTokens({ store: createRefreshTokenStore(db), codes, events, hash, now, deviceIdleMs: idleMs });
  const users = createUserService({
    store: createUserStore(
      db,
      eventStore,
      factors.flatMap((factor) => factor.tables),
    ),
    sessions,
    devices,
    passkeys: passkeyStore,
    events,
    hash,
    now,
    regenerateRecoveryCodes: (email, actor) => mfa.regenerateRecoveryCodesByOperator(email, actor),
    resetMfa: (email, actor) => mfa.resetByOperator(email, actor),
    onPasskeyRevoked: (userId, context) => fallback.revoked(userId, context),
    revokeRefreshTokens: (userId) => refreshTokens.revokeUser(userId),
    identitiesOf: (userId) => upstream.list(userId), // called once the context is built (upstream is made below)
  });
  const dbsc = createDbsc({ store: oidcStore, spent: spentTokens, hash, issuer: config.issuer, now });
  const dpop = createDpopVerifier({ issuer: config.issuer, spent: spentTokens, hash, now });
  const tokens = createTokenService({
    ...{ issuer: config.issuer, clients, codes, accounts, keyring, refreshTokens, serverSecret, now },
    acrClasses: acrClassesOf(factors),
  });
  const pushedRequests = createPushedRequests({ db, hash, now });
  const oidc = createOidcService({
    issuer: config.issuer,
    clients,
    pushed: pushedRequests,
    codes,
    store: oidcStore,
    devices,
    passkeys: passkeyStore,
    accounts,
    events,
    hash,
    now,
    deviceIdleMs: idleMs,
  });
  // The upstream first factor continues into the same flows as the others (factors/upstream/wiring.ts).
  const upstreamFlows = { clients, accounts, mfa, pipeline, otp, events, spent: spentTokens, throttle, hash, now };
  const { connections, upstream } = openUpstream(db, serverSecret, {
    ...upstreamFlows,
    devices,
    deviceIdleMs: idleMs,
    issuer: config.issuer,
    hostedFor: hostedSignInFor(oidc, clients),
    clientById: clients.findById,
    fetch: options.upstreamFetch,
  });
  const passkeyOffer = createPasskeyOffer({ oidc, passkeyService: passkeys, clients, mailer, templates, now });
  const logout = createLogoutService({ issuer: config.issuer, clients, keyring, oidc, events, hash });
  // The service's own first-party apps (built-in clients signing in through the hosted pages): the account center and the console.
  const firstParty = { issuer: config.issuer, clients, codes, accounts, devices, passkeys: passkeyStore, hash, deviceIdleMs: idleMs, now };
  const account = createAccountCenter({
    ...firstParty,
    ...{
      users,
      events,
      mfa,
      mfaMethods: enrollableMethods(factors, config, true) as MfaMethod[],
      recoveryCodes,
      deviceService,
      identities: upstream,
      connections,
    },
    ...{ passkeyService: passkeys, passkeyMfa, mailer, templates },
    revokeAppTokens: (userId, clientId) => refreshTokens.revokeUserClient(userId, clientId),
  });
  const operatorConsole = openConsole(db, { ...firstParty, events }, config.console?.url);

  return {
    config,
    db,
    /** The SQLite path or the PostgreSQL URL (password hidden), for messages. */
    database: options.db ? 'the database given by the caller' : describeDatabase(config),
    /** The service's factors (factors/index.ts, and the caller's extraFactors): the app mounts their routes. */
    factors,
    mailer,
    mailbox,
    locales,
    clients,
    accounts,
    devices,
    prover,
    spentTokens,
    deviceService,
    notices,
    keyring,
    registration,
    login,
    mfa,
    passkeys,
    passkeyMfa,
    delegation,
    sms,
    smsOutbox,
    tokens,
    dpop,
    dbsc,
    codes,
    refreshTokens,
    oidc,
    pushedRequests,
    passkeyOffer,
    logout,
    connections,
    upstream,
    events,
    metrics,
    users,
    adminKeys: createAdminKeys({ store: createAdminKeyStore(db), hash, events, now }),
    branding,
    operations: createOperations({ clients, keyring, events, branding }),
    /** The account center at /account (account/): every user's own devices, activity, export and deletion. */
    account,
    ...operatorConsole, // operators, and the console's sign-in and sessions (console/)
    webhooks: webhookWiring.webhooks,
    webhookOutbox,
    /** Starts this node's webhook delivery loop (back-channel logout tokens too); `stop()` it before closing. */
    startWebhookDelivery: (onError: (error: unknown) => void) =>
      webhookWiring.startDelivery(onError, createLogoutDelivery({ issuer: config.issuer, clients, keyring, now })),
    /** Deletes expired rows; each store sweeps its own table. */
    async sweepExpired(at: number) {
      for (const factor of factors) await factor.sweep?.(db, at);
      await codeStore.deleteExpired(at);
      await spentTokens.deleteExpired(at);
      await devices.expireIdle(at - idleMs, at, eventStore);
      await throttleStore.deleteExpired(at);
      await mfaStore.deleteExpired(at);
      await oidc.sweep(at);
      await pushedRequests.sweep(at);
      await operatorConsole.console.sweep(at);
      await refreshTokens.sweep(at);
      await eventStore.deleteOlderThan(at - config.eventRetentionDays * 24 * 60 * 60 * 1000);
      await webhookOutbox.sweep(at, WEBHOOK_RETRY_WINDOW_HOURS * 60 * 60 * 1000);
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
      metrics.close();
      mailer.close();
      await db.destroy();
    },
  };
}

export type ServiceContext = Awaited<ReturnType<typeof openContext>>;
