import type { AdminClientBranding, AdminSettings } from 'service-protocol';
import type { Branding, BrandingChange, SettingsChange } from '../branding/service.js';
import { checkName } from '../branding/validate.js';
import type { AddressChange, ClientService, NewClient, NewClientKeys, SendRulesChange } from '../clients/service.js';
import { ServiceError } from '../errors.js';
import type { EventLog } from '../events/service.js';
import type { Keyring } from '../keys/keyring.js';

export interface Operations {
  /**
   * Creates the client with every setting given (its branding too), all checked before anything
   * is stored: a refused value (400, exit 2) creates nothing.
   */
  createClient(input: NewClient, actor: string, brand?: BrandingChange): Promise<NewClientKeys>;
  setMfaPolicy(clientId: string, policy: string, actor: string): Promise<void>;
  setPasskeyMfa(clientId: string, value: string, actor: string): Promise<void>;
  setDpop(clientId: string, value: string, actor: string): Promise<void>;
  setPushedRequests(clientId: string, value: string, actor: string): Promise<void>;
  setThirdParty(clientId: string, value: string, actor: string): Promise<void>;
  setDeviceCodeGrant(clientId: string, value: string, actor: string): Promise<void>;
  setIdTokenAlg(clientId: string, alg: string, actor: string): Promise<void>;
  setPostLogoutRedirectUris(clientId: string, uris: string[], actor: string): Promise<void>;
  /** Every address given is checked before any is stored: a refused change (400) stores nothing. */
  setAddresses(clientId: string, change: AddressChange, actor: string): Promise<void>;
  /** The countries its SMS may go to and the mail domains its codes may go to; a refused list (400) stores nothing. */
  setSendRules(clientId: string, change: SendRulesChange, actor: string): Promise<void>;
  deleteClient(clientId: string, actor: string): Promise<void>;
  /** The confidential client's new secret key (shown once); the old one stops at once. */
  rotateClientSecret(clientId: string, actor: string): Promise<string>;
  rotateSigningKey(actor: string): Promise<string>;
  /** Checks every value first: a refused change (ERR_REQUEST_INVALID) stores nothing. */
  setBranding(clientId: string, change: BrandingChange, actor: string): Promise<AdminClientBranding>;
  updateSettings(change: SettingsChange, actor: string): Promise<AdminSettings>;
}

/**
 * The operator's changes to clients and signing keys, shared by the CLI and the admin API so
 * both check the same things and record the same events (`actor`: 'cli' or an admin key id).
 */
export function createOperations({
  clients,
  keyring,
  events,
  branding,
}: {
  clients: ClientService;
  keyring: Keyring;
  events: EventLog;
  branding: Branding;
}): Operations {
  /** The clients service refuses bad input with plain errors (the CLI prints them); here they are a 400. */
  const checked = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      if (error instanceof ServiceError || !(error instanceof Error)) throw error;
      throw new ServiceError(/^no client /.test(error.message) ? 'ERR_NOT_FOUND' : 'ERR_REQUEST_INVALID', `${error.message}.`);
    }
  };

  return {
    async createClient(input: NewClient, actor: string, brand?: BrandingChange): Promise<NewClientKeys> {
      // The client's name is its default display name (pages, mails): the display name's rules apply.
      const name = await checked(async () => checkName(input.name, 'the application name'));
      const branded = brand !== undefined && Object.values(brand).some((value) => value !== undefined);
      // The branding lives in its own table: checked first, so a refused value creates no client.
      if (branded) await checked(async () => branding.check(brand));
      const keys = await checked(() => clients.create({ ...input, name }));
      if (branded) await branding.update(keys.clientId, brand);
      await events.record({ type: 'client.created', clientId: keys.clientId, actor, detail: createdDetail(input, branded ? brand : {}) });
      return keys;
    },

    async setMfaPolicy(clientId: string, policy: string, actor: string): Promise<void> {
      await checked(() => clients.setMfaPolicy(clientId, policy));
      await events.record({ type: 'client.updated', clientId, actor, detail: { mfaPolicy: policy } });
    },

    async setPasskeyMfa(clientId: string, value: string, actor: string): Promise<void> {
      await checked(() => clients.setPasskeyMfa(clientId, value));
      await events.record({ type: 'client.updated', clientId, actor, detail: { passkeyMfa: value } });
    },

    async setDpop(clientId: string, value: string, actor: string): Promise<void> {
      await checked(() => clients.setDpop(clientId, value));
      await events.record({ type: 'client.updated', clientId, actor, detail: { dpop: value } });
    },

    async setPushedRequests(clientId: string, value: string, actor: string): Promise<void> {
      await checked(() => clients.setPushedRequests(clientId, value));
      await events.record({ type: 'client.updated', clientId, actor, detail: { par: value } });
    },

    async setThirdParty(clientId: string, value: string, actor: string): Promise<void> {
      await checked(() => clients.setThirdParty(clientId, value));
      await events.record({ type: 'client.updated', clientId, actor, detail: { thirdParty: value } });
    },

    async setDeviceCodeGrant(clientId: string, value: string, actor: string): Promise<void> {
      await checked(() => clients.setDeviceCodeGrant(clientId, value));
      await events.record({ type: 'client.updated', clientId, actor, detail: { deviceGrant: value } });
    },

    async setIdTokenAlg(clientId: string, alg: string, actor: string): Promise<void> {
      await checked(() => clients.setIdTokenAlg(clientId, alg));
      await events.record({ type: 'client.updated', clientId, actor, detail: { idTokenAlg: alg } });
    },

    async setPostLogoutRedirectUris(clientId: string, uris: string[], actor: string): Promise<void> {
      await checked(() => clients.setPostLogoutRedirectUris(clientId, uris));
      await events.record({ type: 'client.updated', clientId, actor, detail: { postLogoutRedirectUris: uris.join(' ') } });
    },

    async setAddresses(clientId: string, change: AddressChange, actor: string): Promise<void> {
      await checked(() => clients.setAddresses(clientId, change));
      const detail: Record<string, string> = {};
      if (change.origins) detail.origins = change.origins.join(' ');
      if (change.redirectUris) detail.redirectUris = change.redirectUris.join(' ');
      if (change.postLogoutRedirectUris) detail.postLogoutRedirectUris = change.postLogoutRedirectUris.join(' ');
      for (const [name, value] of Object.entries(change.logout ?? {})) detail[name] = String(value ?? 'none');
      await events.record({ type: 'client.updated', clientId, actor, detail });
    },

    async setSendRules(clientId: string, change: SendRulesChange, actor: string): Promise<void> {
      await checked(() => clients.setSendRules(clientId, change));
      const detail: Record<string, string> = {};
      for (const [name, value] of Object.entries(change)) detail[name] = value === null ? 'default' : value.join(' ') || 'none';
      await events.record({ type: 'client.updated', clientId, actor, detail });
    },

    async deleteClient(clientId: string, actor: string): Promise<void> {
      await checked(() => clients.delete(clientId));
      await events.record({ type: 'client.deleted', clientId, actor });
    },

    async rotateClientSecret(clientId: string, actor: string): Promise<string> {
      const secretKey = await checked(() => clients.rotateSecret(clientId));
      await events.record({ type: 'client.updated', clientId, actor, detail: { secretKey: 'rotated' } });
      return secretKey;
    },

    async rotateSigningKey(actor: string): Promise<string> {
      const kid = await keyring.rotate();
      await events.record({ type: 'signing_key.rotated', actor, detail: { kid } });
      return kid;
    },

    async setBranding(clientId: string, change: BrandingChange, actor: string): Promise<AdminClientBranding> {
      const shown = await checked(() => branding.update(clientId, change));
      // The fields changed, never their values (a logo's bytes have no place in the audit trail).
      const fields = Object.entries(change)
        .filter(([, value]) => value !== undefined)
        .map(([name]) => name);
      await events.record({ type: 'client.updated', clientId, actor, detail: { branding: fields.join(' ') } });
      return shown;
    },

    async updateSettings(change: SettingsChange, actor: string): Promise<AdminSettings> {
      const settings = await checked(() => branding.updateSettings(change));
      const detail = Object.fromEntries(
        Object.keys(change)
          .filter((name) => change[name as keyof SettingsChange] !== undefined)
          .map((name) => [name, settings[name as keyof AdminSettings] ?? '']),
      );
      await events.record({ type: 'settings.updated', actor, detail });
      return settings;
    },
  };
}

/** What `client.created` records of the settings given at creation (as `client.updated` would name them), never a value of the branding. */
function createdDetail(input: NewClient, brand: BrandingChange): Record<string, string> {
  const detail: Record<string, string> = {};
  if (input.mfaPolicy) detail.mfaPolicy = input.mfaPolicy;
  if (input.passkeySatisfiesMfa !== undefined) detail.passkeyMfa = input.passkeySatisfiesMfa ? 'yes' : 'no';
  if (input.dpopBoundAccessTokens !== undefined) detail.dpop = input.dpopBoundAccessTokens ? 'required' : 'optional';
  if (input.requirePushedAuthorizationRequests !== undefined)
    detail.par = input.requirePushedAuthorizationRequests ? 'required' : 'optional';
  if (input.thirdParty !== undefined) detail.thirdParty = input.thirdParty ? 'yes' : 'no';
  if (input.deviceCodeGrant !== undefined) detail.deviceGrant = input.deviceCodeGrant ? 'yes' : 'no';
  if (input.idTokenSignedResponseAlg) detail.idTokenAlg = input.idTokenSignedResponseAlg;
  if (input.machine) detail.type = 'machine';
  const fields = Object.entries(brand)
    .filter(([, value]) => value !== undefined)
    .map(([name]) => name);
  if (fields.length) detail.branding = fields.join(' ');
  return detail;
}
