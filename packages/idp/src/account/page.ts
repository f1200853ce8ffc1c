import type { AuditEvent } from '../events/store.js';
import { escapeHtml } from '../http/page.js';
import type { Locales, MessageKey, Values } from '../i18n/locales.js';
import { deviceName } from '../mail/templates.js';
import type { UserHoldings } from '../users/store.js';
import { FIRST_PARTY_CLIENTS } from './service.js';

/** The activity the page lists: what the user did or what happened to their sign-in. */
const SHOWN_EVENTS = /^(login|device|passkey|mfa|recovery|account|user)\./;

/** "2026-11-23 10:21 UTC": unambiguous in every language. */
const utcMinute = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/**
 * The account page's HTML (no script: every action is a form carrying the session's CSRF token,
 * posted to this origin). Every visible string comes from the catalogues (page.account.*).
 */
export function accountPageHtml(input: {
  locales: Locales;
  locale: string;
  email: string;
  deviceId: string;
  csrf: string;
  holdings: UserHoldings;
  events: AuditEvent[];
  notice?: MessageKey;
}): string {
  const { locales, locale, holdings, csrf } = input;
  const t = (key: MessageKey, values?: Values) => escapeHtml(locales.text(locale, key, values));
  const bold = (key: MessageKey, values: Values) => locales.html(locale, key, values, { b: ['<strong>', '</strong>'] });
  const form = (action: string, button: string, fields = '', cls = 'secondary') =>
    `<form method="post" action="/account/${action}"><input type="hidden" name="csrf" value="${escapeHtml(csrf)}">${fields}` +
    `<button type="submit" class="${cls}">${button}</button></form>`;
  const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;

  const live = holdings.devices.filter((d) => d.removedAt === null);
  const device = (d: (typeof live)[number]) => {
    const name =
      d.name ?? (d.browser || d.os ? deviceName(locales, locale, d.browser, d.os) : locales.text(locale, 'page.account.unknown'));
    const current = d.id === input.deviceId;
    return (
      `<li data-device="${escapeHtml(d.id)}"><strong>${escapeHtml(name)}</strong> · ${t(d.kind === 'passkey' ? 'page.account.passkey' : 'page.account.browser')}` +
      (current ? ` · <em>${t('page.account.thisDevice')}</em>` : '') +
      `<br><small>${t('page.account.created', { time: utcMinute(d.createdAt) })}` +
      (d.lastUsedAt ? ` · ${t('page.account.lastUsed', { time: utcMinute(d.lastUsedAt) })}` : '') +
      '</small>' +
      (current ? '' : form('devices/revoke', t('page.account.revoke'), hidden('device', d.id))) +
      '</li>'
    );
  };
  const liveIds = new Set(live.map((d) => d.id));
  const activity = input.events
    .filter((e) => SHOWN_EVENTS.test(e.type))
    .slice(0, 20)
    .map(
      (e) =>
        `<li><code>${escapeHtml(e.type)}</code> · ${escapeHtml(utcMinute(e.at))}` +
        (e.userAgent ? ` · <small>${escapeHtml(e.userAgent.slice(0, 120))}</small>` : '') +
        (e.deviceId && e.deviceId !== input.deviceId && liveIds.has(e.deviceId)
          ? form('devices/revoke', t('page.account.notMe'), hidden('device', e.deviceId))
          : '') +
        '</li>',
    )
    .join('');
  const method = holdings.mfa ? locales.text(locale, `hosted.method.${holdings.mfa.method}` as MessageKey) : '';

  return (
    `<h1>${t('page.account.title')}</h1><p>${bold('page.account.signedInAs', { email: input.email })}</p>` +
    (input.notice ? `<p role="alert">${t(input.notice)} <a href="/account/signin?fresh=1">${t('page.account.signInAgain')}</a></p>` : '') +
    `<section aria-labelledby="h-devices"><h2 id="h-devices">${t('page.account.devices')}</h2><ul>${live.map(device).join('')}</ul>` +
    `${form('devices/revoke-others', t('page.account.revokeOthers'))}</section>` +
    `<section aria-labelledby="h-mfa"><h2 id="h-mfa">${t('page.account.mfa')}</h2><p>${holdings.mfa ? t('page.account.mfaInForce', { method }) : t('page.account.mfaNone')}</p>` +
    (holdings.recoveryCodes ? `<p>${t('page.account.recoveryLeft', { remaining: holdings.recoveryCodes.remaining })}</p>` : '') +
    '</section>' +
    `<section aria-labelledby="h-apps"><h2 id="h-apps">${t('page.account.apps')}</h2><ul>` +
    holdings.clientSignIns
      .filter((a) => !FIRST_PARTY_CLIENTS.has(a.clientId))
      .map(
        (a) =>
          `<li data-app="${escapeHtml(a.clientId)}"><strong>${escapeHtml(a.clientName ?? a.clientId)}</strong> · ${t('page.account.appSince', { time: utcMinute(a.firstSignedInAt) })}` +
          `${form('apps/signout', t('page.account.appSignOut'), hidden('client', a.clientId))}</li>`,
      )
      .join('') +
    '</ul></section>' +
    `<section aria-labelledby="h-activity"><h2 id="h-activity">${t('page.account.activity')}</h2><ul>${activity}</ul></section>` +
    `<section aria-labelledby="h-data"><h2 id="h-data">${t('page.account.data')}</h2>${form('export', t('page.account.export'))}</section>` +
    `<section aria-labelledby="h-delete"><h2 id="h-delete">${t('page.account.delete')}</h2>` +
    form(
      'delete',
      t('page.account.deleteButton'),
      `<label for="confirm-email">${t('page.account.deleteLabel')}</label><input id="confirm-email" name="confirm" type="email" autocomplete="off" required>`,
      'danger',
    ) +
    `</section>${form('signout', t('page.account.signOut'))}`
  );
}
