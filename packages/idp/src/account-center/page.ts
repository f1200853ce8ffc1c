import type { MfaMethod } from 'service-protocol';
import { describeUserAgent } from '../devices/user-agent.js';
import { escapeHtml } from '../http/page.js';
import type { Locales, Values } from '../i18n/locales.js';
import type { MessageKey } from '../i18n/messages/en.js';
import { deviceName } from '../mail/templates.js';
import type { HeldMembership } from '../organizations/store.js';
import type { UserHoldings } from '../users/store.js';
import { ACTIVITY_SHOWN, type ActivityEntry, FIRST_PARTY_APP_NAMES } from './activity.js';
import { ACCOUNT_PASSKEY_SCRIPT, accountForm, changeFactorForm, type FormContext } from './factor-page.js';
import { organizationsSectionHtml } from './organization-page.js';
import { type AccountConsent, FIRST_PARTY_CLIENTS } from './service.js';

/** "2026-11-23 10:21 UTC": unambiguous in every language. */
const utcMinute = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/**
 * "Add a passkey": hidden until the script (which needs WebAuthn) shows it, so that without
 * JavaScript the button is absent. Its texts ride on data-* in the page's language.
 */
function addPasskey(locales: Locales, locale: string, csrf: string): string {
  const t = (key: MessageKey) => escapeHtml(locales.text(locale, key));
  return (
    `<div id="add-passkey" hidden data-csrf="${escapeHtml(csrf)}" data-working="${t('page.account.passkeyWorking')}" ` +
    `data-added="${t('page.account.passkeyAdded')}" data-failed="${t('page.account.passkeyFailed')}" data-again="${t('page.account.recent')}">` +
    `<button type="button" class="secondary">${t('page.account.addPasskey')}</button><p role="status" aria-live="polite"></p></div>`
  );
}

/** The section of the third-party applications given access (none: no section), each with what it was granted in the consent page's words (page.consent.*) and Revoke. */
function consentsHtml(c: FormContext, consents: AccountConsent[]): string {
  const { locales, locale } = c;
  const t = (key: MessageKey, values?: Values) => escapeHtml(locales.text(locale, key, values));
  if (consents.length === 0) return '';
  const items = consents
    .map(
      (consent) =>
        `<li data-consent="${escapeHtml(consent.clientId)}"><strong>${escapeHtml(consent.clientName ?? locales.text(locale, 'page.account.app.removed'))}</strong>` +
        (consent.nameUnverified ? ` <small class="unverified">(${t('page.consent.unverified')})</small>` : '') +
        ` · ${t('page.account.consentSince', { time: utcMinute(consent.createdAt) })}` +
        (consent.lastUsedAt === null ? '' : ` · ${t('page.account.consentLastUsed', { time: utcMinute(consent.lastUsedAt) })}`) +
        '<ul>' +
        [
          ...(consent.scope.includes('email') ? [t('page.consent.email')] : []),
          ...(consent.scope.includes('offline_access') ? [t('page.consent.offline')] : []),
          ...consent.permissions.map((p) => t('page.consent.permission', { api: p.apiName, permission: p.permission })),
        ]
          .map((line) => `<li>${line}</li>`)
          .join('') +
        `</ul>${accountForm(c, 'consents/revoke', t('page.account.consentRevoke'), `<input type="hidden" name="client" value="${escapeHtml(consent.clientId)}">`, 'secondary')}</li>`,
    )
    .join('');
  return `<section aria-labelledby="h-consents"><h2 id="h-consents">${t('page.account.consents')}</h2><ul>${items}</ul></section>`;
}

/** The user's organizations, and whether they may create one (organizations/self-service.ts). */
type OrganizationsSection = { memberships: HeldMembership[]; creationOffered: boolean };

/**
 * The account page's HTML (every action is a form carrying the session's CSRF token, posted to
 * this origin; the one script only adds "Add a passkey"). Every visible string comes from the catalogues (page.account.*).
 */
export function accountPageHtml(input: {
  locales: Locales;
  locale: string;
  email: string;
  deviceId: string;
  csrf: string;
  holdings: UserHoldings;
  /** The recent events the page shows (account-center/activity.ts), newest first. */
  activity: ActivityEntry[];
  /** The methods a user may enroll in or change to here (account-center/factors.ts). */
  methods: MfaMethod[];
  /** The linked upstream identities (account-center/service.ts `identities`). */
  identities?: {
    connectionId: string;
    connectionName: string;
    subject: string;
    email: string | null;
    name: string | null;
    linkedAt: number;
    lastUsedAt: number | null;
  }[];
  /** The third-party applications the user gave access (account-center/service.ts `consents`). */
  consents?: AccountConsent[];
  organizations?: OrganizationsSection;
  notice?: MessageKey;
}): string {
  const { locales, locale, holdings, csrf } = input;
  const t = (key: MessageKey, values?: Values) => escapeHtml(locales.text(locale, key, values));
  const bold = (key: MessageKey, values: Values) => locales.html(locale, key, values, { b: ['<strong>', '</strong>'] });
  const c: FormContext = { locales, locale, csrf };
  const form = (action: string, button: string, fields = '', cls = 'secondary') => accountForm(c, action, button, fields, cls);
  /** "Chrome 131 on Linux": the browser and OS ua-parser-js reads (devices/user-agent.ts), never the raw header. */
  const seenWith = (browser: string | null, os: string | null) => (browser || os ? deviceName(locales, locale, browser, os) : '');
  const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;

  const live = holdings.devices.filter((d) => d.removedAt === null);
  const device = (d: (typeof live)[number]) => {
    const seen = seenWith(d.browser, d.os);
    const name = d.name ?? (seen || locales.text(locale, 'page.account.unknown'));
    const current = d.id === input.deviceId;
    const id = escapeHtml(d.id);
    return (
      `<li data-device="${id}"><strong>${escapeHtml(name)}</strong> · ${t(d.kind === 'passkey' ? 'page.account.passkey' : 'page.account.browser')}` +
      (current ? ` · <em>${t('page.account.thisDevice')}</em>` : '') +
      (d.name && seen ? `<br><small data-seen>${escapeHtml(seen)}</small>` : '') +
      `<br><small>${t('page.account.created', { time: utcMinute(d.createdAt) })}` +
      (d.lastUsedAt ? ` · ${t('page.account.lastUsed', { time: utcMinute(d.lastUsedAt) })}` : '') +
      '</small>' +
      form(
        'devices/rename',
        t('page.account.rename'),
        `${hidden('device', d.id)}<label for="name-${id}">${t('page.account.renameLabel')}</label>` +
          `<input id="name-${id}" name="name" type="text" maxlength="64" required value="${escapeHtml(name)}">`,
      ) +
      (current ? '' : form('devices/revoke', t('page.account.revoke'), hidden('device', d.id))) +
      '</li>'
    );
  };
  const liveIds = new Set(live.map((d) => d.id));
  /** The application an event names, in the page's language: the service's own by message, a removed one as such. */
  const appName = (entry: ActivityEntry) => {
    const own = entry.appId === null ? undefined : FIRST_PARTY_APP_NAMES[entry.appId];
    return own ? locales.text(locale, own) : (entry.appName ?? locales.text(locale, 'page.account.app.removed'));
  };
  const activity = input.activity
    .map((entry) => ({ entry, e: entry.event, ua: describeUserAgent(entry.event.userAgent ?? undefined) }))
    .map(
      ({ entry, e, ua }) =>
        `<li data-event="${escapeHtml(e.type)}">${t(ACTIVITY_SHOWN[e.type], { app: appName(entry), connection: entry.connectionName ?? '' })}` +
        ` · ${escapeHtml(utcMinute(e.at))}` +
        (ua.browser || ua.os ? ` · <small data-seen>${escapeHtml(seenWith(ua.browser, ua.os))}</small>` : '') +
        (e.deviceId && e.deviceId !== input.deviceId && liveIds.has(e.deviceId)
          ? form('devices/revoke', t('page.account.notMe'), hidden('device', e.deviceId))
          : '') +
        '</li>',
    )
    .join('');
  const identities = (input.identities ?? [])
    .map(
      (i) =>
        `<li data-identity="${escapeHtml(i.connectionId)}"><strong>${escapeHtml(i.connectionName)}</strong>` +
        [i.email, i.name].map((v) => (v ? ` · ${escapeHtml(v)}` : '')).join('') +
        `<br><small>${t('page.account.identityLinked', { time: utcMinute(i.linkedAt) })}` +
        (i.lastUsedAt ? ` · ${t('page.account.lastUsed', { time: utcMinute(i.lastUsedAt) })}` : '') +
        `</small>${form('identities/unlink', t('page.account.unlink'), hidden('connection', i.connectionId) + hidden('subject', i.subject))}</li>`,
    )
    .join('');
  const method = holdings.mfa ? locales.text(locale, `hosted.method.${holdings.mfa.method}` as MessageKey) : '';

  return (
    `<h1>${t('page.account.title')}</h1><p>${bold('page.account.signedInAs', { email: input.email })}</p>` +
    (input.notice ? `<p role="alert">${t(input.notice)} <a href="/account/signin?fresh=1">${t('page.account.signInAgain')}</a></p>` : '') +
    `<section aria-labelledby="h-devices"><h2 id="h-devices">${t('page.account.devices')}</h2><ul>${live.map(device).join('')}</ul>` +
    addPasskey(input.locales, locale, csrf) +
    `${form('devices/revoke-others', t('page.account.revokeOthers'))}</section>` +
    `<section aria-labelledby="h-mfa"><h2 id="h-mfa">${t('page.account.mfa')}</h2><p>${holdings.mfa ? t('page.account.mfaInForce', { method }) : t('page.account.mfaNone')}</p>` +
    (input.methods.length ? changeFactorForm(c, input.methods, holdings.mfa?.method ?? null) : '') +
    '</section>' +
    (holdings.mfa
      ? `<section aria-labelledby="h-codes"><h2 id="h-codes">${t('page.account.codes')}</h2>` +
        (holdings.recoveryCodes ? `<p>${t('page.account.recoveryLeft', { remaining: holdings.recoveryCodes.remaining })}</p>` : '') +
        `${form('proof', t('page.account.codesNew'), hidden('action', 'recovery-codes'))}</section>`
      : '') +
    (identities
      ? `<section aria-labelledby="h-identities"><h2 id="h-identities">${t('page.account.identities')}</h2>` +
        `<p>${t('page.account.unlinkNote')}</p><ul>${identities}</ul></section>`
      : '') +
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
    consentsHtml(c, input.consents ?? []) +
    organizationsSectionHtml(c, input.organizations?.memberships ?? [], input.organizations?.creationOffered ?? false) +
    `<section aria-labelledby="h-activity"><h2 id="h-activity">${t('page.account.activity')}</h2><ul>${activity}</ul></section>` +
    `<section aria-labelledby="h-data"><h2 id="h-data">${t('page.account.data')}</h2>${form('proof', t('page.account.export'), hidden('action', 'export'))}</section>` +
    `<section aria-labelledby="h-delete"><h2 id="h-delete">${t('page.account.delete')}</h2>` +
    form(
      'proof',
      t('page.account.deleteButton'),
      `${hidden('action', 'delete')}<label for="confirm-email">${t('page.account.deleteLabel')}</label><input id="confirm-email" name="confirm" type="email" autocomplete="off" required>`,
      'danger',
    ) +
    `</section>${form('signout', t('page.account.signOut'))}` +
    `<script src="${ACCOUNT_PASSKEY_SCRIPT}"></script>`
  );
}
