import type {
  AdminApi,
  AdminEventPage,
  AdminRecoveryCodes,
  AdminRole,
  AdminUser,
  AdminUserDetail,
  AdminUserExport,
  AdminUserPage,
  AdminUserRoles,
} from 'service-protocol';
import { api, query } from '../api.js';
import { confirmAction, field, h, replace, shownOnce, statusLine, table, text, time } from '../dom.js';
import { M } from '../messages.js';
import { canAct, type ViewContext } from './context.js';
import { eventTable } from './events.js';
import { everyApi, everyRole, grantsByApi } from './roles.js';

const status = (user: AdminUser) => (user.disabledAt === null ? M.users.active : M.users.disabled);

/** Users: search by address or id, pages by cursor; a user's detail with its actions. */
export async function usersView(context: ViewContext): Promise<void> {
  if (context.param) return userDetail(context, context.param);
  const { root } = context;
  const email = h('input', { type: 'search', name: 'email', autocomplete: 'off' });
  const id = h('input', { type: 'search', name: 'id', autocomplete: 'off' });
  const createdFrom = h('input', { type: 'date', name: 'createdFrom' });
  const createdUntil = h('input', { type: 'date', name: 'createdUntil' });
  /** A day's start in UTC (epoch ms), `days` later; undefined for an empty field (the API checks the range). */
  const dayStart = (input: HTMLInputElement, days = 0) =>
    input.value ? Date.parse(`${input.value}T00:00:00Z`) + days * 86_400_000 : undefined;
  const results = h('div', {});
  const line = statusLine();
  let cursor: string | null = null;
  const rows: Node[][] = [];
  const draw = () => {
    replace(
      results,
      rows.length === 0
        ? h('p', {}, M.users.noneFound)
        : table(M.users.heading, [M.users.colEmail, M.users.colId, M.users.colCreated, M.users.colStatus], rows),
      cursor ? h('button', { type: 'button', onclick: () => load(false) }, M.more) : null,
    );
  };
  const row = (user: AdminUser): Node[] => [
    h('a', { href: `#/users/${encodeURIComponent(user.id)}` }, user.email),
    h('code', {}, user.id),
    document.createTextNode(time(user.createdAt)),
    document.createTextNode(status(user)),
  ];
  const load = async (fresh: boolean) => {
    try {
      if (fresh) {
        rows.length = 0;
        cursor = null;
      }
      if (id.value.trim()) {
        rows.push(row(await api<AdminUserDetail>('GET', `/users/${encodeURIComponent(id.value.trim())}`)));
      } else {
        const page = await api<AdminUserPage>(
          'GET',
          `/users${query({
            email: email.value.trim(),
            createdSince: dayStart(createdFrom),
            // Until a day, that day included: before the next one starts.
            createdBefore: dayStart(createdUntil, 1),
            cursor: cursor ?? undefined,
            limit: 25,
          })}`,
        );
        rows.push(...page.users.map(row));
        cursor = page.nextCursor;
      }
      line.say('');
    } catch (error) {
      line.say(M.failed((error as Error).message), true);
    }
    draw();
  };
  replace(
    root,
    h('h1', {}, M.users.heading),
    h(
      'form',
      {
        role: 'search',
        onsubmit: (event: Event) => {
          event.preventDefault();
          void load(true);
        },
      },
      field(M.users.email, email),
      field(M.users.id, id),
      field(M.users.createdFrom, createdFrom),
      field(M.users.createdUntil, createdUntil),
      h('button', { type: 'submit' }, M.users.search),
    ),
    line.element,
    results,
  );
  await load(true);
}

/** How the user page's actions run: a failure said on its status line; else `after`, or the page drawn again. */
type Act = (run: () => Promise<unknown>, after?: (result: unknown) => void) => () => Promise<void>;
/** `Act` once the operator confirms `question`. */
type Ask = (question: string, ...action: Parameters<Act>) => () => Promise<void>;

/** A user's page by section: who they are, the operator's actions, their devices, the apps they signed in to, their recent events. */
async function userDetail(context: ViewContext, userId: string): Promise<void> {
  const { root } = context;
  const line = statusLine();
  let user: AdminUserDetail;
  try {
    user = await api<AdminUserDetail>('GET', `/users/${encodeURIComponent(userId)}`);
  } catch (error) {
    replace(root, h('p', { role: 'alert' }, M.failed((error as Error).message)));
    return;
  }
  const [events, held, apis, roles] = await Promise.all([
    api<AdminEventPage>('GET', `/events${query({ user: user.id, limit: 20 })}`),
    api<AdminUserRoles>('GET', `/users/${encodeURIComponent(user.id)}/roles`),
    everyApi(),
    // Only an admin assigns: a viewer's page needs no list to choose from.
    canAct(context) ? everyRole() : Promise.resolve([]),
  ]);
  const act: Act = (run, after) => async () => {
    try {
      const result = await run();
      if (after) after(result);
      else context.refresh();
    } catch (error) {
      line.say(M.failed((error as Error).message), true);
    }
  };
  const ask: Ask = (question, run, after) => async () => {
    if (await confirmAction(question)) await act(run, after)();
  };
  // What an action shows (new recovery codes, the export) goes below the buttons.
  const output = h('div', {});
  replace(
    root,
    ...userHeader(user),
    canAct(context) ? userActions(user, act, ask, output) : null,
    h('p', { class: 'actions' }, exportButton(user, act, output)),
    line.element,
    output,
    ...userDevices(user, canAct(context), ask),
    ...userApps(user),
    ...userRoles(user, { held: held.roles, roles, apis }, canAct(context), act, ask),
    h('h2', {}, M.users.recent),
    eventTable(events.events),
  );
}

/** Who the user is: the way back to the list, the address, and id, creation, status and second factor. */
function userHeader(user: AdminUserDetail): HTMLElement[] {
  return [
    h('p', {}, h('a', { href: '#/users' }, M.users.back)),
    h('h1', {}, M.users.detail(user.email)),
    h(
      'dl',
      {},
      h('dt', {}, M.users.colId),
      h('dd', {}, h('code', {}, user.id)),
      h('dt', {}, M.users.colCreated),
      h('dd', {}, time(user.createdAt)),
      h('dt', {}, M.users.colStatus),
      h('dd', { 'data-status': status(user) }, status(user)),
      h('dt', {}, M.users.mfa),
      h('dd', {}, user.mfa ? `${user.mfa.method}${user.mfa.phone ? ` (${user.mfa.phone})` : ''}` : M.users.noMfa),
      user.recoveryCodes ? h('dd', {}, M.users.recoveryLeft(user.recoveryCodes.remaining, user.recoveryCodes.total)) : null,
    ),
  ];
}

/**
 * An admin's actions on the user: disable or enable, new recovery codes and an MFA reset (with a
 * second factor), and the deletion, confirmed by typing the address; all but enabling ask first.
 */
function userActions(user: AdminUserDetail, act: Act, ask: Ask, output: HTMLElement) {
  return h(
    'p',
    { class: 'actions' },
    user.disabledAt === null
      ? h(
          'button',
          { type: 'button', onclick: ask(M.users.confirmDisable(user.email), () => api('POST', `/users/${user.id}/disable`)) },
          M.users.disable,
        )
      : h('button', { type: 'button', onclick: act(() => api('POST', `/users/${user.id}/enable`)) }, M.users.enable),
    user.mfa
      ? h(
          'button',
          {
            type: 'button',
            onclick: ask(
              M.users.confirmRegenerate,
              () => api<AdminRecoveryCodes>('POST', `/users/${user.id}/recovery-codes`),
              (result) => replace(output, shownOnce(M.users.newCodes, (result as AdminRecoveryCodes).recoveryCodes.join('\n'))),
            ),
          },
          M.users.regenerate,
        )
      : null,
    user.mfa
      ? h(
          'button',
          { type: 'button', onclick: ask(M.users.confirmResetMfa(user.email), () => api('POST', `/users/${user.id}/mfa/reset`)) },
          M.users.resetMfa,
        )
      : null,
    h(
      'button',
      {
        type: 'button',
        class: 'danger',
        onclick: async () => {
          if (await confirmAction(M.users.confirmDelete(user.email), { label: M.users.typeToConfirm, expected: user.email }))
            await act(
              () => api('DELETE', `/users/${user.id}`),
              () => {
                location.hash = '#/users';
              },
            )();
        },
      },
      M.users.delete,
    ),
  );
}

/** The user's data as the API exports it, shown in `output` (any operator may read it). */
function exportButton(user: AdminUserDetail, act: Act, output: HTMLElement) {
  return h(
    'button',
    {
      type: 'button',
      onclick: act(
        () => api<AdminUserExport>('GET', `/users/${user.id}/export`),
        (result) => replace(output, h('pre', { 'aria-label': M.users.exportLabel, tabindex: '0' }, JSON.stringify(result, null, 2))),
      ),
    },
    M.users.exportData,
  );
}

/** The user's browsers and passkeys; an admin may revoke one still in use. */
function userDevices(user: AdminUserDetail, admin: boolean, ask: Ask) {
  const rows = user.devices.map((device) => [
    document.createTextNode(device.kind),
    document.createTextNode(text(device.name)),
    document.createTextNode(`${text(device.browser)} / ${text(device.os)}`),
    h('code', {}, device.clientId),
    document.createTextNode(time(device.lastUsedAt)),
    document.createTextNode(time(device.removedAt)),
    admin && device.removedAt === null
      ? h(
          'button',
          {
            type: 'button',
            onclick: ask(M.users.confirmRevoke(device.name ?? device.id), () => api('POST', `/devices/${device.id}/revoke`)),
          },
          M.users.revoke,
        )
      : null,
  ]);
  return [
    h('h2', {}, M.users.devices),
    table(
      M.users.devices,
      [M.users.colKind, M.users.colName, M.users.colBrowser, M.users.colApp, M.users.colLastUsed, M.users.colRemoved, ''],
      rows,
    ),
  ];
}

/**
 * The roles the user holds, each with its permissions by API; an admin takes one away (after a
 * confirmation) or assigns one of the roles the user does not hold yet.
 */
function userRoles(
  user: AdminUserDetail,
  { held, roles, apis }: { held: AdminRole[]; roles: AdminRole[]; apis: AdminApi[] },
  admin: boolean,
  act: Act,
  ask: Ask,
): Array<HTMLElement | null> {
  const path = (role: AdminRole) => `/users/${encodeURIComponent(user.id)}/roles/${encodeURIComponent(role.id)}`;
  const rows = held.map((role) => [
    document.createTextNode(role.name),
    grantsByApi(role.permissions, apis),
    admin
      ? h(
          'button',
          { type: 'button', onclick: ask(M.users.confirmRemoveRole(role.name, user.email), () => api('DELETE', path(role))) },
          M.users.removeRole,
        )
      : null,
  ]);
  const holds = new Set(held.map((role) => role.id));
  const assignable = roles.filter((role) => !holds.has(role.id));
  const choice = h('select', { name: 'role' }, ...assignable.map((role) => h('option', { value: role.id }, role.name)));
  const assign = h(
    'form',
    {
      onsubmit: (event: Event) => {
        event.preventDefault();
        void act(() => api('POST', `/users/${encodeURIComponent(user.id)}/roles`, { role: choice.value }))();
      },
    },
    h('h3', {}, M.users.assignRole),
    field(M.users.role, choice),
    h('button', { type: 'submit' }, M.users.assign),
  );
  return [
    h('h2', {}, M.users.roles),
    held.length === 0 ? h('p', {}, M.users.noRoles) : table(M.users.roles, [M.users.colRole, M.users.colPermissions, ''], rows),
    admin && roles.length === 0 ? h('p', {}, M.users.noRolesToAssign) : null,
    admin && assignable.length > 0 ? assign : null,
  ];
}

/** The applications the user signed in to, each with when first. */
function userApps(user: AdminUserDetail): HTMLElement[] {
  return [
    h('h2', {}, M.users.apps),
    h(
      'ul',
      {},
      ...user.clientSignIns.map((s) => h('li', {}, text(s.clientName), ' ', h('code', {}, s.clientId), ' ', time(s.firstSignedInAt))),
    ),
  ];
}
