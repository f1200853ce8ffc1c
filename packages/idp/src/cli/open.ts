import type { ServiceConfig } from '../config.js';
import type { ServiceContext } from '../context.js';

/**
 * What a data command opens. The operator commands that only read or change one kind of record
 * (clients, keys, admin keys, webhooks, the development mailboxes) open the database and build
 * the stores and services they use, wired as context.ts wires them; the ones that run flows
 * (users, devices, events, delegation keys) open the whole context. Either way the server
 * secret is loaded (made on first use) and migrations are applied first, as `start` does.
 */
export async function openData(config: ServiceConfig) {
  const [{ loadServerSecret }, { createSecretHasher }, { describeDatabase, openDatabase }, { migrate }] = await Promise.all([
    import('../crypto/server-secret.js'),
    import('../crypto/secrets.js'),
    import('../storage/database.js'),
    import('../storage/migrations.js'),
  ]);
  const serverSecret = loadServerSecret(config.dataDir);
  const db = openDatabase(config, { checkpointWorker: false });
  let applied: string[];
  try {
    applied = await migrate(db);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return {
    config,
    db,
    /** The migrations this opening applied, in order (none on a database already up to date). */
    applied,
    serverSecret,
    hash: createSecretHasher(serverSecret),
    now: Date.now,
    /** The SQLite path or the PostgreSQL URL (password hidden), for messages. */
    database: describeDatabase(config),
    close: () => db.destroy(),
  };
}

export type Data = Awaited<ReturnType<typeof openData>>;

/** Runs `use` on the opened database and closes it, also when `use` fails. */
export async function withData<T>(config: ServiceConfig, use: (data: Data) => Promise<T>): Promise<T> {
  const data = await openData(config);
  try {
    return await use(data);
  } finally {
    await data.close();
  }
}

/** Runs `use` on the whole service context (context.ts) and closes it. */
export async function withContext<T>(config: ServiceConfig, use: (ctx: ServiceContext) => Promise<T>): Promise<T> {
  const { openContext } = await import('../context.js');
  const ctx = await openContext(config);
  try {
    return await use(ctx);
  } finally {
    await ctx.close();
  }
}

/** The client service alone (reads; a change goes through operations, which records it). */
export async function clientService({ db, hash, now }: Data) {
  const [{ createClientService }, { createClientStore }] = await Promise.all([
    import('../clients/service.js'),
    import('../clients/store.js'),
  ]);
  return createClientService({ store: createClientStore(db), hash, now });
}

/** The audit log, its events fanned out to webhook endpoints' outboxes (context.ts). */
export async function eventLog({ db, now }: Data) {
  const [{ createWebhookEndpointStore }, { createWebhookOutboxStore }, { createWebhookFanOut }, { createEventStore }, { createEventLog }] =
    await Promise.all([
      import('../webhooks/store.js'),
      import('../webhooks/outbox-store.js'),
      import('../webhooks/fan-out.js'),
      import('../events/store.js'),
      import('../events/service.js'),
    ]);
  const endpoints = createWebhookEndpointStore(db);
  const outbox = createWebhookOutboxStore(db);
  const fanOut = createWebhookFanOut({ endpoints, outbox });
  await fanOut.reload();
  return { endpoints, outbox, fanOut, events: createEventLog({ store: createEventStore(db, fanOut), now }) };
}

/** The branding of applications and the product name (branding/), wired as context.ts wires it. */
export async function brandingService(data: Data) {
  const [{ createBranding }, { createBrandingStore }, clients] = await Promise.all([
    import('../branding/service.js'),
    import('../branding/store.js'),
    clientService(data),
  ]);
  const issuer = data.config.issuer;
  const issuerName = new URL(issuer).hostname.replace(/^\[|\]$/g, '').replaceAll(':', '.');
  return createBranding({ store: createBrandingStore(data.db), clients, issuer, defaultProductName: issuerName, now: data.now });
}

/** The signing keys (keys/keyring.ts), wired as context.ts wires them. */
export async function signingKeys(data: Data) {
  const [{ createKeyring }, { createKeyStore }, { createSealer }] = await Promise.all([
    import('../keys/keyring.js'),
    import('../keys/store.js'),
    import('../crypto/seal.js'),
  ]);
  return createKeyring({
    store: createKeyStore(data.db),
    sealer: createSealer(data.serverSecret, 'signing-key'),
    now: data.now,
    cacheSeconds: data.config.keyCacheSeconds,
  });
}

/** Client changes, branding and key rotation (admin/operations.ts), each recorded in the audit log. */
export async function operations(data: Data) {
  const [{ createOperations }, keyring, clients, { events }, branding] = await Promise.all([
    import('../admin/operations.js'),
    signingKeys(data),
    clientService(data),
    eventLog(data),
    brandingService(data),
  ]);
  return createOperations({ clients, keyring, events, branding });
}
