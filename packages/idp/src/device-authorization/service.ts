import { randomInt } from 'node:crypto';
import { type DeviceAuthorizationResponse, Paths } from 'service-protocol';
import type { ClientService } from '../clients/service.js';
import type { ClientRecord } from '../clients/store.js';
import { randomToken, type SecretHasher } from '../crypto/secrets.js';
import {
  DEVICE_AUTHORIZATIONS_PER_IP,
  DEVICE_CODE_TTL_SECONDS,
  DEVICE_POLL_INTERVAL_SECONDS,
  DEVICE_SLOW_DOWN_SECONDS,
  DEVICE_USER_CODE_ATTEMPTS,
} from '../defaults.js';
import { OAuthError } from '../errors.js';
import type { EventLog } from '../events/service.js';
import type { FindApi } from '../oidc/authorize-request.js';
import { askedBy, type ConsentItem } from '../oidc/consent.js';
import type { ConsentStore } from '../oidc/consent-store.js';
import type { Throttle } from '../throttle/service.js';
import type { ConsumedDeviceAuthorization, DeviceAuthorizationStore, DeviceSignIn, PendingDeviceAuthorization } from './store.js';

/** RFC 8628 6.1: 20 consonants (no vowels, so no words; no letters mistaken for digits), 8 of them, shown as XXXX-XXXX. */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
const USER_CODE_LENGTH = 8;
const USER_CODE_PATTERN = new RegExp(`^[${USER_CODE_ALPHABET}]{${USER_CODE_LENGTH}}$`);

/** The OIDC values a device may ask for; `openid email` is always granted (what the consent page lists first). */
const OIDC_VALUES = ['openid', 'email', 'offline_access'];

/** A fresh user code, uniformly drawn (randomInt has no modulo bias). */
export function drawUserCode(): string {
  return Array.from({ length: USER_CODE_LENGTH }, () => USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)]).join('');
}

/** XXXX-XXXX, as the device shows it and the page repeats it. */
export const formatUserCode = (code: string) => `${code.slice(0, 4)}-${code.slice(4)}`;

/** What the user typed as a user code: case, dashes and spaces ignored; undefined when it cannot be one. */
export function normalizeUserCode(input: string): string | undefined {
  const code = input
    .slice(0, 40)
    .toUpperCase()
    .replace(/[\s\-\u2010-\u2015]/g, '');
  return USER_CODE_PATTERN.test(code) ? code : undefined;
}

/** A device authorization request at the endpoint (RFC 8628 3.1), its client already authenticated. */
export interface DeviceAuthorizationRequest {
  client: ClientRecord;
  scope: string | undefined;
  resource: string | readonly string[] | undefined;
  deviceName: string | undefined;
  ip: string;
}

/** What the confirmation page shows and what Allow records. */
export interface DeviceAuthorizationView {
  pending: PendingDeviceAuthorization;
  client: ClientRecord;
  items: ConsentItem[];
}

export interface DeviceAuthorizations {
  /** RFC 8628 3.1, 3.2: a new device code and user code for the client. */
  start(request: DeviceAuthorizationRequest): Promise<DeviceAuthorizationResponse>;
  /**
   * RFC 8628 3.4, 3.5: the device code of an authenticated client, consumed when approved (once),
   * or the OAuthError that says why not (authorization_pending, slow_down, access_denied,
   * expired_token; invalid_grant for an unknown, used or another client's code).
   */
  redeem(deviceCode: string, clientId: string): Promise<ConsumedDeviceAuthorization>;
  /**
   * The pending request a typed user code names, counted against the limits of each subject
   * (the address, the browser) before it is looked up, so a refused guess costs as much as a
   * wrong one; ERR_RATE_LIMITED past them.
   */
  lookup(typed: string, subjects: readonly string[]): Promise<{ idHash: string; userCode: string } | undefined>;
  /** What the confirmation page shows for a request still pending, or undefined. */
  view(idHash: string): Promise<DeviceAuthorizationView | undefined>;
  /** The user's answer (once); Allow records the consent of a third-party client. False when the request is no longer pending. */
  decide(idHash: string, signIn: DeviceSignIn, approve: boolean): Promise<boolean>;
  sweep(at: number): Promise<void>;
}

export function createDeviceAuthorizations(deps: {
  issuer: string;
  store: DeviceAuthorizationStore;
  clients: Pick<ClientService, 'findById'>;
  throttle: Throttle;
  events: EventLog;
  consents: Pick<ConsentStore, 'merge'>;
  findApi: FindApi;
  hash: SecretHasher;
  now: () => number;
}): DeviceAuthorizations {
  const { issuer, store, hash, now } = deps;
  const deviceCodeHash = (code: string) => hash('device-code', code);
  const userCodeHash = (code: string) => hash('device-user-code', code);

  /** RFC 6749 3.3 with RFC 8707: OIDC values, and permissions of the APIs named by `resource`; anything else is invalid_scope. */
  async function checkedScope(scope: string | undefined, resource: string | readonly string[] | undefined) {
    const resources = resource === undefined ? [] : [resource].flat();
    const permissions = new Set<string>();
    for (const identifier of resources) {
      const api = await deps.findApi(identifier);
      if (!api) throw new OAuthError('invalid_target', 'resource names no registered API.');
      for (const permission of api.permissions) permissions.add(permission);
    }
    const values = (scope ?? '').split(' ').filter((value) => value !== '');
    const unknown = values.filter((value) => !OIDC_VALUES.includes(value) && !permissions.has(value));
    if (unknown.length > 0) throw new OAuthError('invalid_scope', `Unknown scope value: ${unknown[0]?.slice(0, 100)}.`);
    return { scope: [...new Set(['openid', 'email', ...values])].join(' '), resources: [...new Set(resources)] };
  }

  return {
    async start({ client, scope, resource, deviceName, ip }) {
      if (!client.deviceCodeGrant) throw new OAuthError('unauthorized_client', 'This client may not use the device authorization grant.');
      await deps.throttle.consume(
        `device-authorization:ip:${ip}`,
        DEVICE_AUTHORIZATIONS_PER_IP,
        'Too many device authorization requests from this network. Try again later.',
      );
      const asked = await checkedScope(scope, resource);
      const at = now();
      const deviceCode = randomToken('dc_');
      const base = {
        idHash: deviceCodeHash(deviceCode),
        clientId: client.id,
        ...asked,
        deviceName: deviceName?.trim() || null,
        requesterIp: ip,
        createdAt: at,
        expiresAt: at + DEVICE_CODE_TTL_SECONDS * 1000,
        intervalSeconds: DEVICE_POLL_INTERVAL_SECONDS,
      };
      // A user code is unique among the rows (its hash is): a draw that meets a live one draws again.
      for (let attempt = 0; attempt < 5; attempt++) {
        const userCode = drawUserCode();
        if (await store.insert({ ...base, userCodeHash: userCodeHash(userCode) })) {
          const verificationUri = `${issuer}${Paths.deviceVerification}`;
          return {
            device_code: deviceCode,
            user_code: formatUserCode(userCode),
            verification_uri: verificationUri,
            verification_uri_complete: `${verificationUri}?${new URLSearchParams({ user_code: formatUserCode(userCode) })}`,
            expires_in: DEVICE_CODE_TTL_SECONDS,
            interval: DEVICE_POLL_INTERVAL_SECONDS,
          };
        }
      }
      throw new Error('no free user code after 5 draws');
    },

    async redeem(deviceCode, clientId) {
      const outcome = await store.poll(deviceCodeHash(deviceCode), clientId, now(), DEVICE_SLOW_DOWN_SECONDS);
      if ('consumed' in outcome) return outcome.consumed;
      switch (outcome.refused) {
        case 'authorization_pending':
          throw new OAuthError('authorization_pending', 'The user has not answered yet.');
        case 'slow_down':
          throw new OAuthError(
            'slow_down',
            `Polled faster than the interval: wait ${DEVICE_SLOW_DOWN_SECONDS} seconds more between requests.`,
          );
        case 'access_denied':
          throw new OAuthError('access_denied', 'The user denied the request.');
        case 'expired_token':
          throw new OAuthError('expired_token', 'The device code has expired: start again.');
        default:
          throw new OAuthError('invalid_grant', 'The device code is invalid, already used, or not this client’s.');
      }
    },

    async lookup(typed, subjects) {
      // Counted before the code is checked: every try costs, found or not.
      for (const subject of subjects)
        await deps.throttle.consume(subject, DEVICE_USER_CODE_ATTEMPTS, 'Too many codes tried. Try again later.');
      const userCode = normalizeUserCode(typed);
      if (!userCode) return undefined;
      const pending = await store.findPendingByUserCode(userCodeHash(userCode), now());
      return pending && { idHash: pending.idHash, userCode };
    },

    async view(idHash) {
      const pending = await store.findPending(idHash, now());
      const client = pending && (await deps.clients.findById(pending.clientId));
      if (!pending || !client) return undefined;
      const { items } = await askedBy(pending, deps.findApi);
      return { pending, client, items };
    },

    async decide(idHash, signIn, approve) {
      const view = await this.view(idHash);
      if (!view) return false;
      const at = now();
      const decided = await store.decide(idHash, at, approve ? { approve: true, signIn } : { approve: false, userId: signIn.userId });
      if (!decided) return false;
      const { grant } = await askedBy(view.pending, deps.findApi);
      // As the consent page's Allow: the account center lists (and revokes) what a third-party client was granted.
      if (approve && view.client.thirdParty) await deps.consents.merge(signIn.userId, view.client.id, grant, at);
      await deps.events.record({
        type: approve ? 'device.authorization_approved' : 'device.authorization_denied',
        userId: signIn.userId,
        clientId: view.client.id,
        ...(signIn.deviceId ? { deviceId: signIn.deviceId } : {}),
        detail: {
          scope: [...grant.scope, ...grant.permissions.map(([api, permission]) => `${api} ${permission}`)].join(' '),
          ...(view.pending.deviceName ? { deviceName: view.pending.deviceName } : {}),
        },
      });
      return true;
    },

    sweep: async (at) => {
      await store.deleteExpired(at);
    },
  };
}
