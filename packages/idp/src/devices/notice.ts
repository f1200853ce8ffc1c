import { Paths } from 'service-protocol';
import type { AccountStore } from '../accounts/store.js';
import type { ClientService } from '../clients/service.js';
import { randomToken, type SecretHasher, safeEqual } from '../crypto/secrets.js';
import { DEVICE_NOTICE_LINK_TTL_SECONDS } from '../defaults.js';
import type { EventLog } from '../events/service.js';
import type { Mailer } from '../mail/mailer.js';
import type { MailTemplates } from '../mail/templates.js';
import type { PendingDevice } from './pending.js';
import type { DeviceRow, DeviceStore } from './store.js';
import { defaultDeviceName } from './user-agent.js';

export interface DeviceNoticeDeps {
  store: DeviceStore;
  accounts: AccountStore;
  clients: ClientService;
  mailer: Mailer;
  templates: MailTemplates;
  hash: SecretHasher;
  events: EventLog;
  issuer: string;
  now: () => number;
}

export type NoticeLinkCheck =
  | { ok: true; device: DeviceRow; clientName: string; spentId: string; expiresAt: number }
  | { ok: false; reason: 'invalid' | 'expired' };

/** "2026-11-23 10:21 UTC": unambiguous in any locale. */
const utc = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/**
 * The new-device mail and its "this wasn't me" link. The link is `deviceId.expiry.nonce.mac`,
 * the MAC (HMAC under the server secret) binding the device, its user and the expiry, so it
 * cannot be pointed at another device or made to live longer. It is single use: the nonce is
 * spent (an atomic insert) by the revocation. Opening it changes nothing (mail scanners open
 * links); only the page's POST button revokes, and nothing here ever signs anyone in.
 */
export function createDeviceNotices(deps: DeviceNoticeDeps) {
  const { store, hash, now } = deps;
  const mac = (userId: string, deviceId: string, expiry: string, nonce: string) =>
    hash('device-notice', `${userId}.${deviceId}.${expiry}.${nonce}`);

  return {
    /** Mails the user about a device just registered. A lost notice must not undo the sign-in. */
    async newDevice(device: { id: string; userId: string; clientId: string; createdAt: number } & PendingDevice): Promise<void> {
      try {
        const [user, client] = await Promise.all([deps.accounts.findById(device.userId), deps.clients.findById(device.clientId)]);
        if (!user || !client) return;
        const expiry = (now() + DEVICE_NOTICE_LINK_TTL_SECONDS * 1000).toString(36);
        const nonce = randomToken('', 16);
        const token = `${device.id}.${expiry}.${nonce}.${mac(user.id, device.id, expiry, nonce)}`;
        await deps.mailer.send(
          deps.templates.render('new-device', user.email, {
            client: client.name,
            device: defaultDeviceName(device.browser, device.os),
            time: utc(device.createdAt),
            place: device.place ? ` (approximately: ${device.place})` : '',
            link: `${deps.issuer}${Paths.deviceNotice}?t=${encodeURIComponent(token)}`,
          }),
        );
      } catch {
        // The device is registered and the user signed in; the notice is best effort (docs/security.md).
      }
    },

    /** Checks a link's signature and expiry; the device may already be revoked. */
    async check(token: string): Promise<NoticeLinkCheck> {
      const [deviceId, expiry, nonce, tag, extra] = token.split('.');
      if (!deviceId || !expiry || !nonce || !tag || extra !== undefined || token.length > 200) return { ok: false, reason: 'invalid' };
      const device = await store.find(deviceId);
      if (!device || !safeEqual(tag, mac(device.userId, deviceId, expiry, nonce))) return { ok: false, reason: 'invalid' };
      const expiresAt = Number.parseInt(expiry, 36);
      if (!Number.isSafeInteger(expiresAt) || expiresAt <= now()) return { ok: false, reason: 'expired' };
      const client = await deps.clients.findById(device.clientId);
      return { ok: true, device, clientName: client?.name ?? device.clientId, spentId: hash('device-notice-spent', nonce), expiresAt };
    },

    /** Spends the link and revokes its device: 'revoked', or why not. */
    async revoke(token: string): Promise<'revoked' | 'used' | 'invalid' | 'expired'> {
      const checked = await this.check(token);
      if (!checked.ok) return checked.reason;
      if (!(await store.spendNoticeLink(checked.spentId, checked.expiresAt, now()))) return 'used';
      if (await store.revokeById(checked.device.id, now()))
        await deps.events.record({
          type: 'device.revoked',
          userId: checked.device.userId,
          clientId: checked.device.clientId,
          deviceId: checked.device.id,
          detail: { via: 'new_device_notice' },
        });
      return 'revoked';
    },
  };
}

export type DeviceNotices = ReturnType<typeof createDeviceNotices>;
