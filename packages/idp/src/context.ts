import { join } from 'node:path';
import { createAccountStore } from './accounts/store.js';
import { createClientService } from './clients/service.js';
import { createClientStore } from './clients/store.js';
import { createCodeService } from './codes/service.js';
import { createCodeStore } from './codes/store.js';
import type { ServiceConfig } from './config.js';
import { createSealer } from './crypto/seal.js';
import { createSecretHasher } from './crypto/secrets.js';
import { loadServerSecret } from './crypto/server-secret.js';
import { createDeviceStore } from './devices/store.js';
import { createKeyring } from './keys/keyring.js';
import { createKeyStore } from './keys/store.js';
import { createLoginService } from './login/service.js';
import { createMailboxStore } from './mail/mailbox-store.js';
import { createMailboxMailer, createSmtpMailer, type Mailer } from './mail/mailer.js';
import { createRegistrationService } from './registration/service.js';
import { createRegistrationStore } from './registration/store.js';
import { type Db, openSqlite } from './storage/database.js';
import { migrate } from './storage/migrations.js';
import { startSweeper } from './storage/sweeper.js';
import { createThrottle } from './throttle/service.js';
import { createThrottleStore } from './throttle/store.js';
import { createTokenService } from './token/service.js';

export interface ContextOptions {
  /** Overrides the SQLite file in the data folder (tests pass ':memory:'). */
  db?: Db;
  /** Overrides the mail transport (tests pass one that records). */
  mailer?: Mailer;
  now?: () => number;
}

/** Wires storage, crypto and flows together: the composition root shared by the CLI and the HTTP app. */
export async function openContext(config: ServiceConfig, options: ContextOptions = {}) {
  const now = options.now ?? Date.now;
  const serverSecret = loadServerSecret(config.dataDir);
  const databasePath = join(config.dataDir, 'service.db');
  const db = options.db ?? openSqlite(databasePath);
  await migrate(db);
  const hash = createSecretHasher(serverSecret);

  const mailbox = createMailboxStore(db);
  const mailer =
    options.mailer ??
    (config.smtpUrl
      ? createSmtpMailer(config.smtpUrl, config.mailFrom)
      : createMailboxMailer(mailbox, now, `development mailbox (service-idp mail, ${config.issuer}/dev/mail)`));
  const clients = createClientService({ store: createClientStore(db), hash, now });
  const accounts = createAccountStore(db);
  const devices = createDeviceStore(db);
  const codeStore = createCodeStore(db);
  const codes = createCodeService({ store: codeStore, hash, now });
  const throttleStore = createThrottleStore(db);
  const throttle = createThrottle({ store: throttleStore, now });
  const registrationStore = createRegistrationStore(db);
  const keyring = createKeyring({ store: createKeyStore(db), sealer: createSealer(serverSecret, 'signing-key'), now });
  const registration = createRegistrationService({
    store: registrationStore,
    accounts,
    devices,
    codes,
    throttle,
    mailer,
    hash,
    now,
  });
  const login = createLoginService({ accounts, devices, codes, registration, hash, now });
  const tokens = createTokenService({ issuer: config.issuer, clients, codes, accounts, keyring, serverSecret, now });

  return {
    config,
    db,
    databasePath,
    mailer,
    mailbox,
    clients,
    accounts,
    devices,
    keyring,
    registration,
    login,
    tokens,
    /** Deletes expired rows; each store sweeps its own table. */
    async sweepExpired(at: number) {
      await registrationStore.deleteExpired(at);
      await codeStore.deleteExpired(at);
      await devices.deleteExpiredChallenges(at);
      await throttleStore.deleteExpired(at);
    },
    /** Sweeps in the background; returns the stop function. */
    startSweeper(onError: (error: unknown) => void) {
      return startSweeper((at) => this.sweepExpired(at), now, onError);
    },
    async close() {
      mailer.close();
      await db.destroy();
    },
  };
}

export type ServiceContext = Awaited<ReturnType<typeof openContext>>;
