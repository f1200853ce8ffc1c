import type {
  AdminConnection,
  AdminConnectionList,
  AdminOrganization,
  AdminOrganizationDomain,
  AdminOrganizationDomainList,
  AdminOrganizationInvitation,
  AdminOrganizationInvitationList,
  AdminOrganizationList,
  AdminOrganizationMember,
  AdminOrganizationMemberList,
  AdminOrganizationRole,
  AdminUserPage,
} from 'service-protocol';
import { api, query } from '../api.js';
import { confirmAction, field, h, PAGE_SIZE, pagedTable, replace, statusLine, table, text, time } from '../dom.js';
import { M } from '../messages.js';
import { canAct, type ViewContext } from './context.js';
import { everyOrganizationRole } from './roles.js';

type Line = ReturnType<typeof statusLine>;
/** Runs a change; then the page is drawn again with `said` on its status line, or the status line says why it failed. */
type Act = (change: () => Promise<unknown>, said?: string) => Promise<void>;

/** What the last change said, shown on the status line of the page drawn next. */
let flash: string | undefined;

/** Organizations (docs/organizations.md): the list by pages and a form to make one; #/orgs/ID is one organization's page. */
export async function organizationsView(context: ViewContext): Promise<void> {
  // What the last change said is shown once, on whichever page comes next.
  const said = flash;
  flash = undefined;
  if (context.param) return organizationPage(context, context.param, said);
  const { root } = context;
  const line = statusLine();
  if (said) line.say(said);
  const load = async (cursor: string | undefined) => {
    const page = await api<AdminOrganizationList>('GET', `/organizations${query({ limit: PAGE_SIZE, cursor })}`);
    return { items: page.organizations, nextCursor: page.nextCursor };
  };
  const row = (organization: AdminOrganization) => [
    h('a', { href: `#/orgs/${encodeURIComponent(organization.id)}` }, organization.name),
    h('code', {}, organization.id),
    document.createTextNode(text(organization.externalId)),
    document.createTextNode(organization.mfaRequired ? M.orgs.required : M.none),
  ];
  const first = await load(undefined);
  replace(
    root,
    h('h1', {}, M.orgs.heading),
    line.element,
    first.items.length === 0
      ? h('p', {}, M.orgs.noneYet)
      : await pagedTable(
          M.orgs.heading,
          [M.orgs.colName, M.orgs.colId, M.orgs.colExternalId, M.orgs.colMfa],
          async (cursor) => (cursor ? load(cursor) : first),
          row,
          (message) => line.say(M.failed(message), true),
        ),
    canAct(context) ? settingsForm(line, context) : null,
  );
}

/** Makes an organization (then opens its page), or with `organization` changes its name, external id and MFA requirement. */
function settingsForm(line: Line, context: ViewContext, organization?: AdminOrganization): HTMLElement {
  const name = h('input', { type: 'text', name: 'name', required: true, autocomplete: 'off', value: organization?.name });
  const externalId = h('input', { type: 'text', name: 'externalId', autocomplete: 'off', value: organization?.externalId ?? undefined });
  const mfaRequired = h('input', { type: 'checkbox', name: 'mfaRequired', checked: organization?.mfaRequired ?? false });
  return h(
    'form',
    {
      onsubmit: async (event: Event) => {
        event.preventDefault();
        const body = { name: name.value.trim(), externalId: externalId.value.trim() || null, mfaRequired: mfaRequired.checked };
        try {
          flash = M.done;
          if (organization) {
            await api('PATCH', `/organizations/${encodeURIComponent(organization.id)}`, body);
            context.refresh();
          } else {
            const made = await api<AdminOrganization>('POST', '/organizations', body);
            // The new hash draws its page.
            location.hash = `#/orgs/${encodeURIComponent(made.id)}`;
          }
        } catch (error) {
          flash = undefined;
          line.say(M.failed((error as Error).message), true);
        }
      },
    },
    h('h2', {}, organization ? M.orgs.settings : M.orgs.create),
    field(M.orgs.name, name),
    field(M.orgs.externalId, externalId),
    h('p', {}, h('label', {}, mfaRequired, ' ', M.orgs.mfaRequired)),
    h('button', { type: 'submit' }, organization ? M.save : M.orgs.create),
  );
}

/**
 * One organization's page: who it is, its members, its pending invitations, its domains and its
 * settings. An admin operator acts on each; a viewer reads.
 */
async function organizationPage(context: ViewContext, id: string, said: string | undefined): Promise<void> {
  const { root } = context;
  const line = statusLine();
  if (said) line.say(said);
  const base = `/organizations/${encodeURIComponent(id)}`;
  const [organization, members, invitations, domains, roles, connections] = await Promise.all([
    api<AdminOrganization>('GET', base),
    api<AdminOrganizationMemberList>('GET', `${base}/members`),
    api<AdminOrganizationInvitationList>('GET', `${base}/invitations`),
    api<AdminOrganizationDomainList>('GET', `${base}/domains`),
    everyOrganizationRole(),
    api<AdminConnectionList>('GET', '/connections'),
  ]);
  const act: Act = async (change, message = M.done) => {
    try {
      await change();
      flash = message;
      context.refresh();
    } catch (error) {
      line.say(M.failed((error as Error).message), true);
    }
  };
  const admin = canAct(context);
  replace(
    root,
    h('p', {}, h('a', { href: '#/orgs' }, M.orgs.back)),
    h('h1', {}, M.orgs.detail(organization.name)),
    h(
      'dl',
      {},
      h('dt', {}, M.orgs.colId),
      h('dd', {}, h('code', {}, organization.id)),
      h('dt', {}, M.orgs.colExternalId),
      h('dd', {}, text(organization.externalId)),
      h('dt', {}, M.orgs.colMfa),
      h('dd', {}, organization.mfaRequired ? M.orgs.required : M.none),
      h('dt', {}, M.orgs.created),
      h('dd', {}, time(organization.createdAt)),
    ),
    line.element,
    ...memberSection(organization, members.members, roles, admin, base, line, act),
    ...invitationSection(invitations.invitations, roles, admin, base, act),
    ...domainSection(domains.domains, connections.connections, roles, admin, base, act),
    admin ? settingsForm(line, context, organization) : null,
    admin
      ? h(
          'p',
          { class: 'actions' },
          h(
            'button',
            {
              type: 'button',
              class: 'danger',
              onclick: async () => {
                const typed = { label: M.orgs.typeToConfirm, expected: organization.name };
                if (!(await confirmAction(M.orgs.confirmDelete(organization.name), typed))) return;
                try {
                  await api('DELETE', base);
                  flash = M.done;
                  // The new hash draws the list.
                  location.hash = '#/orgs';
                } catch (error) {
                  line.say(M.failed((error as Error).message), true);
                }
              },
            },
            M.orgs.delete,
          ),
        )
      : null,
  );
}

/**
 * The organization roles as checkboxes in a fieldset (`legend`), those in `held` ticked;
 * `chosen()` reads the names ticked. The API takes role names.
 */
function rolePicker(roles: AdminOrganizationRole[], legend: string, held: string[] = []) {
  const boxes = roles.map((role) => h('input', { type: 'checkbox', name: 'role', value: role.name, checked: held.includes(role.name) }));
  return {
    element: h(
      'fieldset',
      {},
      h('legend', {}, legend),
      roles.length === 0
        ? h('p', {}, M.orgs.noRolesYet)
        : h('ul', { class: 'choices' }, ...boxes.map((box) => h('li', {}, h('label', {}, box, ' ', box.value)))),
    ),
    chosen: () => boxes.filter((box) => box.checked).map((box) => box.value),
  };
}

const rolesText = (roles: string[]) => (roles.length === 0 ? M.orgs.noRoles : roles.join(', '));

/** The members with their organization roles; an admin changes a member's roles, removes one, adds a user by address or id. */
function memberSection(
  organization: AdminOrganization,
  members: AdminOrganizationMember[],
  roles: AdminOrganizationRole[],
  admin: boolean,
  base: string,
  line: Line,
  act: Act,
): Array<HTMLElement | null> {
  const path = (member: AdminOrganizationMember) => `${base}/members/${encodeURIComponent(member.userId)}`;
  const rows = members.map((member) => [
    h('a', { href: `#/users/${encodeURIComponent(member.userId)}` }, member.email),
    document.createTextNode(rolesText(member.roles)),
    h('span', {}, time(member.createdAt), h('br', {}), member.addedBy),
    admin
      ? h(
          'button',
          {
            type: 'button',
            class: 'danger',
            'aria-label': M.orgs.removeMember(member.email),
            onclick: async () => {
              if (await confirmAction(M.orgs.confirmRemove(member.email, organization.name))) await act(() => api('DELETE', path(member)));
            },
          },
          M.orgs.remove,
        )
      : null,
  ]);
  return [
    h('h2', {}, M.orgs.members),
    members.length === 0
      ? h('p', {}, M.orgs.noMembers)
      : table(M.orgs.members, [M.orgs.colMember, M.orgs.colRoles, M.orgs.colAdded, ...(admin ? [''] : [])], rows),
    admin && members.length > 0 ? memberRolesForm(members, roles, path, act) : null,
    admin ? addMemberForm(roles, base, line, act) : null,
  ];
}

/** Changes one member's organization roles: the member chosen, their roles ticked, the whole set sent (PUT). */
function memberRolesForm(
  members: AdminOrganizationMember[],
  roles: AdminOrganizationRole[],
  path: (member: AdminOrganizationMember) => string,
  act: Act,
): HTMLElement {
  const choice = h('select', { name: 'member' }, ...members.map((member, index) => h('option', { value: String(index) }, member.email)));
  const picker = rolePicker(roles, M.orgs.rolesLegend);
  const chosen = () => members[Number(choice.value)] ?? members[0];
  const tick = () => {
    const held = chosen()?.roles ?? [];
    for (const box of picker.element.querySelectorAll('input')) box.checked = held.includes(box.value);
  };
  choice.addEventListener('change', tick);
  tick();
  return h(
    'form',
    {
      onsubmit: (event: Event) => {
        event.preventDefault();
        const member = chosen();
        if (member) void act(() => api('PUT', `${path(member)}/roles`, { roles: picker.chosen() }));
      },
    },
    h('h3', {}, M.orgs.changeRoles),
    field(M.orgs.colMember, choice),
    picker.element,
    h('button', { type: 'submit' }, M.orgs.saveRoles),
  );
}

/** Adds a member by user id, or by address (an existing user's, matched whole), with the organization roles ticked. */
function addMemberForm(roles: AdminOrganizationRole[], base: string, line: Line, act: Act): HTMLElement {
  const who = h('input', { type: 'text', name: 'member', required: true, autocomplete: 'off', spellcheck: 'false' });
  const picker = rolePicker(roles, M.orgs.rolesLegend);
  /** The user's id: the value itself when it is one, else the user whose address it is (the search matches beginnings). */
  const userIdOf = async (value: string): Promise<string | undefined> => {
    if (value.startsWith('usr_')) return value;
    const page = await api<AdminUserPage>('GET', `/users${query({ email: value, limit: PAGE_SIZE })}`);
    return page.users.find((user) => user.email.toLowerCase() === value.toLowerCase())?.id;
  };
  return h(
    'form',
    {
      onsubmit: async (event: Event) => {
        event.preventDefault();
        const value = who.value.trim();
        let userId: string | undefined;
        try {
          userId = await userIdOf(value);
        } catch (error) {
          line.say(M.failed((error as Error).message), true);
          return;
        }
        if (!userId) {
          line.say(M.failed(M.orgs.noSuchUser(value)), true);
          return;
        }
        await act(() => api('POST', `${base}/members`, { userId, roles: picker.chosen() }));
      },
    },
    h('h3', {}, M.orgs.addMember),
    field(M.orgs.member, who),
    picker.element,
    h('button', { type: 'submit' }, M.orgs.add),
  );
}

/** The invitations with their state; an admin resends or revokes one not accepted yet, and invites an address. */
function invitationSection(
  invitations: AdminOrganizationInvitation[],
  roles: AdminOrganizationRole[],
  admin: boolean,
  base: string,
  act: Act,
): Array<HTMLElement | null> {
  const path = (invitation: AdminOrganizationInvitation) => `${base}/invitations/${encodeURIComponent(invitation.id)}`;
  const open = (invitation: AdminOrganizationInvitation) => invitation.state === 'pending' || invitation.state === 'expired';
  const rows = invitations.map((invitation) => [
    document.createTextNode(invitation.email),
    document.createTextNode(rolesText(invitation.roles)),
    h('span', { 'data-state': invitation.state }, M.orgs.state[invitation.state] ?? invitation.state),
    document.createTextNode(time(invitation.expiresAt)),
    document.createTextNode(invitation.invitedBy),
    admin && open(invitation)
      ? h(
          'span',
          { class: 'actions' },
          h(
            'button',
            {
              type: 'button',
              'aria-label': M.orgs.resendTo(invitation.email),
              onclick: () => act(() => api('POST', `${path(invitation)}/resend`), M.orgs.resent(invitation.email)),
            },
            M.orgs.resend,
          ),
          h(
            'button',
            {
              type: 'button',
              class: 'danger',
              'aria-label': M.orgs.revokeFor(invitation.email),
              onclick: async () => {
                if (await confirmAction(M.orgs.confirmRevoke(invitation.email))) await act(() => api('DELETE', path(invitation)));
              },
            },
            M.orgs.revoke,
          ),
        )
      : null,
  ]);
  const email = h('input', { type: 'email', name: 'email', required: true, autocomplete: 'off', spellcheck: 'false' });
  const picker = rolePicker(roles, M.orgs.rolesLegend);
  return [
    h('h2', {}, M.orgs.invitations),
    invitations.length === 0
      ? h('p', {}, M.orgs.noInvitations)
      : table(
          M.orgs.invitations,
          [M.orgs.colEmail, M.orgs.colRoles, M.orgs.colState, M.orgs.colExpires, M.orgs.colInvitedBy, ...(admin ? [''] : [])],
          rows,
        ),
    admin
      ? h(
          'form',
          {
            onsubmit: (event: Event) => {
              event.preventDefault();
              const address = email.value.trim();
              void act(() => api('POST', `${base}/invitations`, { email: address, roles: picker.chosen() }), M.orgs.sent(address));
            },
          },
          h('h3', {}, M.orgs.invite),
          field(M.orgs.inviteEmail, email),
          picker.element,
          h('button', { type: 'submit' }, M.orgs.send),
        )
      : null,
  ];
}

/**
 * The organization's domain claims, one block each: pending ones show the TXT record to publish
 * and an admin verifies them or vouches; verified ones show where their addresses sign in and an
 * admin routes them to a connection (and allows mailed codes beside it). An admin claims and removes.
 */
function domainSection(
  domains: AdminOrganizationDomain[],
  connections: AdminConnection[],
  roles: AdminOrganizationRole[],
  admin: boolean,
  base: string,
  act: Act,
): Array<HTMLElement | null> {
  const path = (claim: AdminOrganizationDomain) => `${base}/domains/${encodeURIComponent(claim.domain)}`;
  const names = new Map(connections.map((connection) => [connection.id, connection.name]));
  const block = (claim: AdminOrganizationDomain) =>
    h(
      'section',
      { class: 'domain', 'aria-label': claim.domain },
      h('h3', {}, claim.domain),
      claimFacts(claim, names),
      admin && claim.verified ? routingForm(claim, connections, roles, path(claim), act) : null,
      admin
        ? h(
            'p',
            { class: 'actions' },
            claim.verified
              ? null
              : h(
                  'button',
                  {
                    type: 'button',
                    'aria-label': M.orgs.verifyDomain(claim.domain),
                    onclick: () => act(() => api('POST', `${path(claim)}/verify`)),
                  },
                  M.orgs.verify,
                ),
            claim.verified
              ? null
              : h(
                  'button',
                  {
                    type: 'button',
                    'aria-label': M.orgs.vouchFor(claim.domain),
                    onclick: async () => {
                      if (await confirmAction(M.orgs.confirmVouch(claim.domain))) await act(() => api('POST', `${path(claim)}/vouch`));
                    },
                  },
                  M.orgs.vouch,
                ),
            h(
              'button',
              {
                type: 'button',
                class: 'danger',
                'aria-label': M.orgs.removeDomain(claim.domain),
                onclick: async () => {
                  if (await confirmAction(M.orgs.confirmRemoveDomain(claim.domain))) await act(() => api('DELETE', path(claim)));
                },
              },
              M.orgs.remove,
            ),
          )
        : null,
    );
  const domain = h('input', { type: 'text', name: 'domain', required: true, autocomplete: 'off', spellcheck: 'false' });
  return [
    h('h2', {}, M.orgs.domains),
    domains.length === 0 ? h('p', {}, M.orgs.noDomains) : null,
    ...domains.map(block),
    admin
      ? h(
          'form',
          {
            onsubmit: (event: Event) => {
              event.preventDefault();
              void act(() => api('POST', `${base}/domains`, { domain: domain.value.trim() }));
            },
          },
          h('h3', {}, M.orgs.addDomain),
          field(M.orgs.domain, domain),
          h('button', { type: 'submit' }, M.orgs.claim),
        )
      : null,
  ];
}

/** What a domain claim says: its state, the TXT record still to publish, where its addresses sign in, and who joins. */
function claimFacts(claim: AdminOrganizationDomain, names: Map<string, string>): HTMLElement {
  return h(
    'dl',
    {},
    h('dt', {}, M.orgs.colState),
    h(
      'dd',
      { 'data-state': claim.verified ? 'verified' : 'pending' },
      claim.verified ? M.orgs.verifiedBy(claim.verifiedBy ?? M.none, time(claim.verifiedAt)) : M.orgs.pending,
    ),
    ...(claim.verified
      ? []
      : [
          h('dt', {}, M.orgs.record),
          h(
            'dd',
            {},
            h(
              'dl',
              { class: 'record' },
              h('dt', {}, M.orgs.recordName),
              h('dd', {}, h('code', {}, claim.record.name)),
              h('dt', {}, M.orgs.recordValue),
              h('dd', {}, h('code', {}, claim.record.value)),
            ),
          ),
        ]),
    h('dt', {}, M.orgs.routing),
    h(
      'dd',
      {},
      claim.connectionId
        ? `${M.orgs.routedTo(names.get(claim.connectionId) ?? claim.connectionId)}${claim.allowEmailCode ? `; ${M.orgs.emailCodeAllowed}` : ''}`
        : claim.verified
          ? M.orgs.notRouted
          : M.orgs.routeNeedsVerified,
    ),
    h('dt', {}, M.orgs.joining),
    h('dd', {}, claim.joinRole ? M.orgs.joinsAs(claim.joinRole) : M.orgs.noJoining),
  );
}

/**
 * Where a verified domain's addresses sign in: a connection (or none), whether mailed codes still
 * work beside it, and the role new users at the domain join with (none; never a role that manages
 * the organization, which the service refuses).
 */
function routingForm(
  claim: AdminOrganizationDomain,
  connections: AdminConnection[],
  roles: AdminOrganizationRole[],
  path: string,
  act: Act,
): HTMLElement {
  const connection = h(
    'select',
    { name: 'connection' },
    h('option', { value: '', selected: claim.connectionId === null }, M.orgs.noConnection),
    ...connections.map((item) => h('option', { value: item.id, selected: item.id === claim.connectionId }, `${item.name} (${item.id})`)),
  );
  const allowEmailCode = h('input', { type: 'checkbox', name: 'allowEmailCode', checked: claim.allowEmailCode });
  const joinRole = h(
    'select',
    { name: 'joinRole' },
    h('option', { value: '', selected: claim.joinRole === null }, M.orgs.noJoining),
    ...roles
      .filter((role) => !role.managesOrganization)
      .map((role) => h('option', { value: role.name, selected: role.name === claim.joinRole }, role.name)),
  );
  return h(
    'form',
    {
      onsubmit: (event: Event) => {
        event.preventDefault();
        void act(() =>
          api('PATCH', path, {
            connectionId: connection.value || null,
            allowEmailCode: allowEmailCode.checked,
            joinRole: joinRole.value || null,
          }),
        );
      },
    },
    field(M.orgs.connection(claim.domain), connection),
    h('p', {}, h('label', {}, allowEmailCode, ' ', M.orgs.allowEmailCode(claim.domain))),
    field(M.orgs.joinRole(claim.domain), joinRole),
    h('button', { type: 'submit', 'aria-label': M.orgs.saveRoutingFor(claim.domain) }, M.orgs.saveRouting),
  );
}
