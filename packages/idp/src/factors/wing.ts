import type { MfaMethod } from 'service-protocol';
import type { CodeService } from '../authorization-codes/service.js';
import type { ClientService } from '../clients/service.js';
import { defineWing } from '../composition/wing.js';
import type { Sealer } from '../crypto/seal.js';
import type { SecretHasher } from '../crypto/secrets.js';
import type { DeviceNotices } from '../devices/notice.js';
import { createDeviceService, type SessionEnder } from '../devices/service.js';
import type { DeviceStore } from '../devices/store.js';
import type { EventLog } from '../events/service.js';
import type { Mailer } from '../mail/mailer.js';
import type { MailTemplates } from '../mail/templates.js';
import type { DomainRouting } from '../organization-domains/service.js';
import type { OtpService } from '../otp/service.js';
import { createSignInFinisher } from '../sign-in/finish.js';
import { createMfaStep, type MfaStep } from '../sign-in/mfa-step.js';
import { createMfaStore } from '../sign-in/mfa-store.js';
import { createSignInPipeline, type SignInPipeline } from '../sign-in/pipeline.js';
import type { SpentTokenStore } from '../spent-tokens/store.js';
import type { Db } from '../storage/schema.js';
import type { Throttle } from '../throttle/service.js';
import type { EnabledUserStore } from '../users/enabled-store.js';
import { createDeviceProver } from './device-key/prover.js';
import { createDeviceKeySignIn } from './device-key/sign-in.js';
import { createDeviceKeySignInStore } from './device-key/sign-in-store.js';
import { createNewDeviceSignIn } from './email-code/new-device.js';
import { createNewDeviceStore } from './email-code/new-device-store.js';
import { mfaFactorsOf } from './index.js';
import type { FactorModule } from './module.js';
import { createPasskeyCeremony } from './passkey/ceremony.js';
import { createPasskeyFallback, type PasskeyFallback } from './passkey/fallback.js';
import { createPasskeyMfa } from './passkey/mfa.js';
import { createPasskeyService } from './passkey/service.js';
import { createPasskeyStore, type PasskeyStore } from './passkey/store.js';
import { createRecoveryCodes } from './recovery-code/service.js';
import { createRecoveryCodeStore } from './recovery-code/store.js';
import { createSignInStart } from './start.js';

const DAY_MS = 24 * 60 * 60 * 1000;

interface MfaNeeds {
  db: Db;
  now: () => number;
  hash: SecretHasher;
  sealerFor: (purpose: string) => Sealer;
  factors: readonly FactorModule[];
  issuerName: string;
  config: { mfaRememberDays: number };
  enabledUsers: EnabledUserStore;
  devices: DeviceStore;
  notices: DeviceNotices;
  codes: CodeService;
  otp: OtpService;
  events: EventLog;
  mailer: Mailer;
  templates: MailTemplates;
}

/**
 * The sign-in's second half (sign-in/): how every sign-in finishes (a new device registered and
 * its user told), the MFA step over every factor's MFA half (the registry's), recovery codes,
 * the pipeline between them, and the fallback to email when a passkey-MFA user's last passkey goes.
 */
export const mfaWing = defineWing('mfa', (deps: MfaNeeds) => {
  const { db, now, hash, events, enabledUsers, mailer, templates, issuerName, factors } = deps;
  const finish = createSignInFinisher({
    ...{ devices: deps.devices, codes: deps.codes, events, now },
    onNewDevice: async (device, client) => {
      await events.record({ type: 'device.registered', userId: device.userId, clientId: device.clientId, deviceId: device.id });
      await deps.notices.newDevice(device, client);
    },
  });
  const mfaStore = createMfaStore(db);
  const recoveryCodes = createRecoveryCodes({ store: createRecoveryCodeStore(db), enabledUsers, hash, events, mailer, templates, now });
  const mfaFactors = mfaFactorsOf(factors, { otp: deps.otp, sealer: deps.sealerFor('totp-secret'), methods: mfaStore, now, issuerName });
  const mfa = createMfaStep({
    ...{ store: mfaStore, enabledUsers, finish, otp: deps.otp, hash, events, mailer, templates, factors: mfaFactors, recoveryCodes, now },
    rememberMs: deps.config.mfaRememberDays * DAY_MS,
    issuerName,
  });
  const passkeyStore = createPasskeyStore(db);
  const fallback = createPasskeyFallback({
    store: mfaStore,
    passkeys: passkeyStore,
    enabledUsers,
    events,
    mailer,
    templates,
    now,
    issuerName,
  });
  return {
    services: { finish, mfaStore, recoveryCodes, mfa, pipeline: createSignInPipeline({ mfa, finish }), passkeyStore, fallback },
    async sweep(at: number) {
      for (const factor of factors) await factor.sweep?.(db, at);
      await mfaStore.deleteExpired(at);
    },
  };
});

interface FirstFactorNeeds {
  db: Db;
  clients: ClientService;
  now: () => number;
  hash: SecretHasher;
  idleMs: number;
  config: { passkeyRpId?: string | undefined };
  mfaMethods: MfaMethod[];
  enabledUsers: EnabledUserStore;
  devices: DeviceStore;
  spentTokens: SpentTokenStore;
  sessions: SessionEnder;
  codes: CodeService;
  otp: OtpService;
  throttle: Throttle;
  events: EventLog;
  mfa: MfaStep;
  pipeline: SignInPipeline;
  passkeyStore: PasskeyStore;
  fallback: PasskeyFallback;
  domainRouting: DomainRouting;
}

/**
 * The first factors (docs/architecture.md, "The sign-in pipeline"): a remembered device's key,
 * the emailed code of a new device, and passkeys, and the way in that picks between the first
 * two (factors/start.ts); with the device service over the remembered
 * devices and passkeys a user holds (list, rename, revoke).
 */
export const firstFactorsWing = defineWing('first-factors', (deps: FirstFactorNeeds) => {
  const { db, now, hash, idleMs, enabledUsers, devices, events, mfa, pipeline, passkeyStore, fallback } = deps;
  const spent = deps.spentTokens;
  const prover = createDeviceProver({ devices, spent, enabledUsers, hash, now, idleMs });
  const deviceService = createDeviceService({
    ...{ store: devices, prover, events, now, idleMs, passkeys: passkeyStore, sessions: deps.sessions },
    // A passkey-MFA user's last passkey gone: email MFA, and the user is told (factors/passkey/fallback.ts).
    onPasskeyRevoked: (userId, client) => fallback.revoked(userId, client),
  });
  const ceremony = createPasskeyCeremony({ store: passkeyStore, spent, events, hash, now, rpId: deps.config.passkeyRpId });
  const passkeys = createPasskeyService({
    ...{ ceremony, store: passkeyStore, devices: deviceService, enabledUsers, mfa, pipeline, events, throttle: deps.throttle, now },
  });
  const newDeviceStore = createNewDeviceStore(db);
  const newDeviceSignIn = createNewDeviceSignIn({
    ...{ store: newDeviceStore, enabledUsers, mfa, mfaMethods: deps.mfaMethods, pipeline, otp: deps.otp, hash, now },
  });
  const deviceKey = createDeviceKeySignIn({
    ...{ prover, mfa, store: createDeviceKeySignInStore(db, spent), codes: deps.codes, events, now },
  });
  const passkeyMfa = createPasskeyMfa({ ceremony, store: passkeyStore, mfa, events });
  // The way in (POST /v1/authenticate): a remembered device's key, or the emailed code.
  const signInStart = createSignInStart({ deviceKey, emailCode: newDeviceSignIn, clients: deps.clients, routing: deps.domainRouting });
  return { services: { prover, deviceService, passkeyCeremony: ceremony, passkeys, passkeyMfa, newDeviceSignIn, deviceKey, signInStart } };
});
