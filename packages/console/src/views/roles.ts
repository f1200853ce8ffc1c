import type { AdminApi, AdminApiList, AdminGrant, AdminRole, AdminRoleList } from 'service-protocol';
import { api, query } from '../api.js';
import { confirmAction, field, h, PAGE_SIZE, pagedTable, replace, statusLine } from '../dom.js';
import { M } from '../messages.js';
import { canAct, type ViewContext } from './context.js';

/** The admin API's largest page (PAGE_SIZE_MAX), which is also how many APIs and roles a service keeps: usually one call. */
const WHOLE = 1000;

/** Every registered API (to choose a role's permissions among, and to name them). */
export async function everyApi(): Promise<AdminApi[]> {
  const all: AdminApi[] = [];
  let cursor: string | undefined;
  do {
    const page = await api<AdminApiList>('GET', `/apis${query({ limit: WHOLE, cursor })}`);
    all.push(...page.apis);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return all;
}

/** Every role (to choose one to assign). */
export async function everyRole(): Promise<AdminRole[]> {
  const all: AdminRole[] = [];
  let cursor: string | undefined;
  do {
    const page = await api<AdminRoleList>('GET', `/roles${query({ limit: WHOLE, cursor })}`);
    all.push(...page.roles);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return all;
}

/** A role's permissions grouped by API (the API's name where known, its identifier otherwise), one line each. */
export function grantsByApi(grants: AdminGrant[], apis: AdminApi[]): HTMLElement {
  if (grants.length === 0) return h('span', {}, M.roles.noPermissions);
  const byApi = new Map<string, string[]>();
  for (const grant of grants) byApi.set(grant.api, [...(byApi.get(grant.api) ?? []), grant.permission]);
  const names = new Map(apis.map((item) => [item.identifier, item.name]));
  return h(
    'ul',
    { class: 'grants' },
    ...[...byApi].map(([identifier, permissions]) =>
      h('li', {}, h('span', { title: identifier }, names.get(identifier) ?? identifier), ': ', permissions.join(', ')),
    ),
  );
}

/**
 * The permissions a role may grant: a group of checkboxes per registered API (a role grants only
 * what its APIs define), those in `chosen` checked. `grants()` reads the choice.
 */
function grantPicker(apis: AdminApi[], chosen: AdminGrant[] = []): { element: HTMLElement; grants(): AdminGrant[] } {
  const held = new Set(chosen.map((grant) => `${grant.api} ${grant.permission}`));
  const boxes: Array<{ box: HTMLInputElement; grant: AdminGrant }> = [];
  const groups = apis.map((item) =>
    h(
      'fieldset',
      {},
      h('legend', {}, M.roles.apiPermissions(item.name, item.identifier)),
      item.permissions.length === 0
        ? h('p', {}, M.roles.noPermissions)
        : h(
            'ul',
            { class: 'choices' },
            ...item.permissions.map((permission) => {
              const box = h('input', {
                type: 'checkbox',
                name: 'grant',
                value: permission,
                checked: held.has(`${item.identifier} ${permission}`),
              });
              boxes.push({ box, grant: { api: item.identifier, permission } });
              return h('li', {}, h('label', {}, box, ' ', permission));
            }),
          ),
    ),
  );
  return {
    element: h(
      'fieldset',
      { class: 'grants' },
      h('legend', {}, M.roles.grants),
      ...(apis.length === 0 ? [h('p', {}, M.roles.noApis)] : groups),
    ),
    grants: () => boxes.filter(({ box }) => box.checked).map(({ grant }) => grant),
  };
}

/** Roles (docs/authorization.md): the list with their permissions by API, a form to make one, a role's edit form, delete. */
export async function rolesView(context: ViewContext): Promise<void> {
  const { root } = context;
  const line = statusLine();
  const [apis, editing] = await Promise.all([
    everyApi(),
    context.param ? api<AdminRole>('GET', `/roles/${encodeURIComponent(context.param)}`) : undefined,
  ]);
  const load = async (cursor: string | undefined) => {
    const page = await api<AdminRoleList>('GET', `/roles${query({ limit: PAGE_SIZE, cursor })}`);
    return { items: page.roles, nextCursor: page.nextCursor };
  };
  const row = (role: AdminRole) => [
    h('a', { href: `#/roles/${encodeURIComponent(role.id)}` }, role.name),
    grantsByApi(role.permissions, apis),
    canAct(context)
      ? h(
          'button',
          {
            type: 'button',
            class: 'danger',
            onclick: async () => {
              if (!(await confirmAction(M.roles.confirmDelete(role.name)))) return;
              try {
                await api('DELETE', `/roles/${encodeURIComponent(role.id)}`);
                location.hash = '#/roles';
                context.refresh();
              } catch (error) {
                line.say(M.failed((error as Error).message), true);
              }
            },
          },
          M.roles.delete,
        )
      : null,
  ];
  const first = await load(undefined);
  replace(
    root,
    h('h1', {}, M.roles.heading),
    line.element,
    first.items.length === 0
      ? h('p', {}, M.roles.noneYet)
      : await pagedTable(
          M.roles.heading,
          [M.roles.colName, M.roles.colPermissions, ''],
          async (cursor) => (cursor ? load(cursor) : first),
          row,
          (message) => line.say(M.failed(message), true),
        ),
    editing && canAct(context) ? roleForm(apis, line, context, editing) : null,
    canAct(context) ? roleForm(apis, line, context) : null,
  );
}

/** Makes a role, or with `editing` changes its name and the permissions it grants (the whole set sent at once). */
function roleForm(apis: AdminApi[], line: ReturnType<typeof statusLine>, context: ViewContext, editing?: AdminRole): HTMLElement {
  const name = h('input', { type: 'text', name: 'name', required: true, autocomplete: 'off', value: editing?.name });
  const picker = grantPicker(apis, editing?.permissions);
  return h(
    'form',
    {
      onsubmit: async (event: Event) => {
        event.preventDefault();
        try {
          if (editing)
            await api('PATCH', `/roles/${encodeURIComponent(editing.id)}`, { name: name.value.trim(), permissions: picker.grants() });
          else await api('POST', '/roles', { name: name.value.trim(), permissions: picker.grants() });
          line.say(M.done);
          context.refresh();
        } catch (error) {
          line.say(M.failed((error as Error).message), true);
        }
      },
    },
    h('h2', {}, editing ? M.roles.editing(editing.name) : M.roles.create),
    field(M.roles.name, name),
    picker.element,
    h('button', { type: 'submit' }, editing ? M.save : M.roles.create),
  );
}
