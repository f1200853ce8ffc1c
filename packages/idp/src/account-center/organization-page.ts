import type { AdminOrganization, AdminOrganizationRole } from 'service-protocol';
import { escapeHtml } from '../http/page.js';
import type { MessageKey } from '../i18n/messages/en.js';
import type { ManagedOrganization } from '../organizations/self-service.js';
import type { HeldMembership } from '../organizations/store.js';
import { accountForm, type FormContext, hidden, textOf } from './factor-page.js';

const ACCOUNT = '/account';
const orgPath = (id: string) => `organizations/${encodeURIComponent(id)}`;

/** One checkbox per role of the template (the ones `held` checked); a role that manages organizations says so. */
function roleChoices(c: FormContext, roles: AdminOrganizationRole[], held: readonly string[]) {
  const t = textOf(c);
  return roles
    .map(
      (role) =>
        `<label class="check"><input type="checkbox" name="roles" value="${escapeHtml(role.name)}"${held.includes(role.name) ? ' checked' : ''}>` +
        `${role.managesOrganization ? t('page.account.org.managing', { role: role.name }) : escapeHtml(role.name)}</label>`,
    )
    .join('');
}

/**
 * The account page's section of the user's organizations: each with their roles there, Manage
 * (an organization they manage) and Leave (a confirmation page first); and, when the operator
 * offers it, the form that creates one.
 */
export function organizationsSectionHtml(c: FormContext, memberships: HeldMembership[], creationOffered: boolean): string {
  if (memberships.length === 0 && !creationOffered) return '';
  const t = textOf(c);
  const items = memberships
    .map(({ organization, roles, manages }) => {
      const values = { organization: organization.name };
      return (
        `<li data-organization="${escapeHtml(organization.id)}"><strong>${escapeHtml(organization.name)}</strong>` +
        `<br><small>${t('page.account.orgs.roles', { roles: roles.join(', ') || c.locales.text(c.locale, 'page.account.orgs.noRole') })}</small>` +
        (manages ? `<p><a href="${ACCOUNT}/${orgPath(organization.id)}">${t('page.account.orgs.manage', values)}</a></p>` : '') +
        `<p><a href="${ACCOUNT}/${orgPath(organization.id)}/leave">${t('page.account.orgs.leave', values)}</a></p></li>`
      );
    })
    .join('');
  const create = creationOffered
    ? `<h3 id="h-org-create">${t('page.account.orgs.create')}</h3>` +
      accountForm(
        c,
        'organizations',
        t('page.account.orgs.createButton'),
        `<label for="org-name">${t('page.account.orgs.nameLabel')}</label><input id="org-name" name="name" type="text" maxlength="100" required autocomplete="organization">`,
      )
    : '';
  return (
    `<section aria-labelledby="h-orgs"><h2 id="h-orgs">${t('page.account.orgs')}</h2>` +
    (items ? `<ul>${items}</ul>` : `<p>${t('page.account.orgs.none')}</p>`) +
    `${create}</section>`
  );
}

/** Asks before leaving: what is lost, then the POST (or back to the account). */
export function leavePageHtml(c: FormContext, organization: AdminOrganization): string {
  const t = textOf(c);
  const values = { organization: organization.name };
  return (
    `<h1>${t('page.account.orgs.leaveTitle', values)}</h1><p>${t('page.account.orgs.leaveBody', values)}</p>` +
    accountForm(c, `${orgPath(organization.id)}/leave`, t('page.account.orgs.leaveConfirm', values), '', 'danger') +
    `<p><a href="${ACCOUNT}">${t('page.account.orgs.cancel')}</a></p>`
  );
}

/**
 * An organization's page for its admin: members with their roles (change, remove), the
 * invitations (resend, revoke a pending one) and the form that invites an address with roles.
 */
export function organizationPageHtml(input: FormContext & { managed: ManagedOrganization; userId: string; done?: string }): string {
  const { managed, userId } = input;
  const c: FormContext = input;
  const t = textOf(c);
  const base = orgPath(managed.organization.id);
  const members = managed.members
    .map((member, i) => {
      const email = { email: member.email };
      return (
        `<li data-member="${escapeHtml(member.userId)}"><strong>${escapeHtml(member.email)}</strong>` +
        (member.userId === userId ? ` · <em>${t('page.account.org.you')}</em>` : '') +
        `<form method="post" action="${ACCOUNT}/${base}/members/roles">${hidden('csrf', c.csrf)}${hidden('member', member.userId)}` +
        `<fieldset id="roles-${i}"><legend>${t('page.account.org.rolesOf', email)}</legend>${roleChoices(c, managed.roles, member.roles)}</fieldset>` +
        `<button type="submit" class="secondary">${t('page.account.org.saveRoles', email)}</button></form>` +
        accountForm(c, `${base}/members/remove`, t('page.account.org.remove', email), hidden('member', member.userId), 'danger') +
        '</li>'
      );
    })
    .join('');
  const invitations = managed.invitations
    .map((invitation) => {
      const email = { email: invitation.email };
      const pending = invitation.state === 'pending' || invitation.state === 'expired';
      return (
        `<li data-invitation="${escapeHtml(invitation.id)}">` +
        t('page.account.org.invitation', {
          email: invitation.email,
          roles: invitation.roles.join(', ') || c.locales.text(c.locale, 'page.account.orgs.noRole'),
          state: c.locales.text(c.locale, `page.account.org.state.${invitation.state}` as MessageKey),
        }) +
        (pending
          ? accountForm(c, `${base}/invitations/resend`, t('page.account.org.resend', email), hidden('invitation', invitation.id))
          : '') +
        (invitation.state === 'pending'
          ? accountForm(c, `${base}/invitations/revoke`, t('page.account.org.revoke', email), hidden('invitation', invitation.id))
          : '') +
        '</li>'
      );
    })
    .join('');
  const invite =
    `<form method="post" action="${ACCOUNT}/${base}/invitations">${hidden('csrf', c.csrf)}` +
    `<label for="invite-email">${t('page.account.org.emailLabel')}</label>` +
    '<input id="invite-email" name="email" type="email" autocomplete="off" maxlength="320" required>' +
    `<fieldset><legend>${t('page.account.org.inviteRoles')}</legend>${roleChoices(c, managed.roles, [])}</fieldset>` +
    `<button type="submit">${t('page.account.org.inviteButton')}</button></form>`;
  return (
    `<h1>${t('page.account.org.heading', { organization: managed.organization.name })}</h1>` +
    (input.done ? `<p role="status">${t(`page.account.org.done.${input.done}` as MessageKey)}</p>` : '') +
    `<section aria-labelledby="h-members"><h2 id="h-members">${t('page.account.org.members')}</h2><ul>${members}</ul></section>` +
    `<section aria-labelledby="h-invite"><h2 id="h-invite">${t('page.account.org.invite')}</h2>${invite}</section>` +
    `<section aria-labelledby="h-invitations"><h2 id="h-invitations">${t('page.account.org.invitations')}</h2>` +
    (invitations ? `<ul>${invitations}</ul>` : `<p>${t('page.account.org.noInvitations')}</p>`) +
    '</section>' +
    `<p><a href="${ACCOUNT}">${t('page.account.back')}</a></p>`
  );
}
