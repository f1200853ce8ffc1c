import { Paths } from 'service-protocol';
import type { ClientService } from '../clients/service.js';
import { appOf, type ClientRecord } from '../clients/store.js';
import type { SecretHasher } from '../crypto/secrets.js';
import { createSignedTokens } from '../crypto/signed-token.js';
import { DEVICE_NOTICE_LINK_TTL_SECONDS } from '../defaults.js';
import type { EventLog } from '../events/service.js';
import type { Mailer } from '../mail/mailer.js';
import { type MailTemplates, mailTime } from '../mail/templates.js';
import type { SpentTokenStore } from '../spent-tokens/store.js';
import type { EnabledUserStore } from '../users/enabled-store.js';
import type { PendingDevice } from './pending.js';
import type { SessionEnder } from './service.js';
import type { DeviceRow, DeviceStore } from './store.js';
import { defaultDeviceName } from './user-agent.js';

export interface DeviceNoticeDeps {
  store: DeviceStore;
  spent: SpentTokenStore;
  enabledUsers: EnabledUserStore;
  clients: ClientService;
  mailer: Mailer;
  templates: MailTemplates;
  hash: SecretHasher;
  events: EventLog;
  issuer: string;
  now: () => number;
  /** Ends the sessions the revoked device held and tells their apps (oidc/). */
  sessions?: Pick<SessionEnder, 'endUnbound'>;
}

export type NoticeLinkCheck =
  | { ok: true; device: DeviceRow; clientName: string; spentId: string; expiresAt: number }
  | { ok: false; reason: 'invalid' | 'expired' };

/** "2026-11-23 10:21 UTC": unambiguous in any locale. */

export interface DeviceNotices {
  /**
   * Mails the user about a device just registered, naming the application signed in to
   * (`client`'s app: the requesting application, not the built-in hosted client whose device
   * key it is). A lost notice must not undo the sign-in.
   */
  newDevice(
    device: {
      id: string;
      userId: string;
      clientId: string;
      createdAt: number;
    } & PendingDevice,
    client?: Pick<ClientRecord, 'id' | 'name' | 'app'>,
  ): Promise<void>;
  /** Checks a link's signature and expiry; the device may already be revoked. */
  check(token: string): Promise<NoticeLinkCheck>;
  /** Spends the link and revokes its device: 'revoked', or why not. */
  revoke(token: string): Promise<'revoked' | 'used' | 'invalid' | 'expired'>;
}

/**
 * The new-device mail and its "this wasn't me" link. The link's token is a signed token
 * (crypto/signed-token.ts) `deviceId.expiry.nonce.mac`, the MAC binding the device, its user
 * and the expiry, so it cannot be pointed at another device or made to live longer. It is
 * single use: the revocation spends it (spent-tokens/, purpose `device-notice`, an atomic
 * insert). Opening it changes nothing (mail scanners open links); only the page's POST button
 * revokes, and nothing here ever signs anyone in.
 *
 * Links live DEVICE_NOTICE_LINK_TTL_SECONDS (7 days) in mailboxes, longer than an upgrade
 * takes: those mailed before the signed-token codec, whose MAC was
 * `hash('device-notice', userId.deviceId.expiry.nonce)`, are accepted as well (legacyMac). New
 * links are issued under the codec's rule only, so the legacy rule may go once every link
 * mailed before that release has expired.
 */
export function createDeviceNotices(deps: DeviceNoticeDeps): DeviceNotices {
  const { store, hash, now } = deps;
  // visible: [deviceId]; bound: [userId].
  const links = createSignedTokens(hash, {
    purpose: 'device-notice',
    visibleFields: 1,
    maxLength: 200,
    legacyMac: ({ visible, bound }, expiry, nonce) => hash('device-notice', `${bound[0]}.${visible[0]}.${expiry}.${nonce}`),
  });

  return {
    async newDevice(
      device: { id: string; userId: string; clientId: string; createdAt: number } & PendingDevice,
      signedInTo?: Pick<ClientRecord, 'id' | 'name' | 'app'>,
    ): Promise<void> {
      try {
        const [user, client] = await Promise.all([
          deps.enabledUsers.findById(device.userId),
          signedInTo ? appOf(signedInTo) : deps.clients.findById(device.clientId),
        ]);
        if (!user || !client) return;
        const token = links.issue({ visible: [device.id], bound: [user.id] }, now() + DEVICE_NOTICE_LINK_TTL_SECONDS * 1000);
        await deps.mailer.send(
          deps.templates.render('new-device', user.email, {
            client: client.name,
            device: defaultDeviceName(device.browser, device.os),
            browser: device.browser ?? '',
            os: device.os ?? '',
            time: mailTime(device.createdAt),
            place: device.place ?? '',
            link: `${deps.issuer}${Paths.deviceNotice}?t=${encodeURIComponent(token)}`,
          }),
        );
      } catch {
        // The device is registered and the user signed in; the notice is best effort (docs/security.md).
      }
    },

    async check(token: string): Promise<NoticeLinkCheck> {
      const [deviceId] = links.visibleOf(token) ?? [];
      const device = deviceId ? await store.find(deviceId) : undefined;
      if (!device) return { ok: false, reason: 'invalid' };
      const checked = links.check(token, [device.userId], now());
      if (!checked.ok) return checked;
      const client = await deps.clients.findById(device.clientId);
      return {
        ok: true,
        device,
        clientName: client?.name ?? device.clientId,
        spentId: hash('device-notice-spent', checked.nonce),
        expiresAt: checked.expiresAt,
      };
    },

    async revoke(token: string): Promise<'revoked' | 'used' | 'invalid' | 'expired'> {
      const checked = await this.check(token);
      if (!checked.ok) return checked.reason;
      if (!(await deps.spent.spend({ purpose: 'device-notice', idHash: checked.spentId, expiresAt: checked.expiresAt }, now())))
        return 'used';
      if (await store.revokeById(checked.device.id, now()))
        await deps.events.record({
          type: 'device.revoked',
          userId: checked.device.userId,
          clientId: checked.device.clientId,
          deviceId: checked.device.id,
          detail: { via: 'new_device_notice' },
        });
      await deps.sessions?.endUnbound(checked.device.userId);
      return 'revoked';
    },
  };
}
