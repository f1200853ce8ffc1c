import type {
  AdminApi,
  AdminApiList,
  AdminGrant,
  AdminOrganizationRole,
  AdminOrganizationRoleList,
  AdminRole,
  AdminRoleList,
} from 'service-protocol';
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

/** The words of one kind of role's page: the roles (M.roles) or the organization roles (M.orgRoles). */
type RoleWords = {
  readonly [K in keyof typeof M.roles]: (typeof M.roles)[K] extends (...args: infer A) => string ? (...args: A) => string : string;
};

/** Where one kind of role lives in the admin API, and its page's name in the console's hash. */
interface RoleKind {
  /** The admin API's collection: /roles, or /organization-roles (whose roles have the same shape). */
  path: '/roles' | '/organization-roles';
  view: string;
  words: RoleWords;
  /** A page of the roles (the organization roles come whole, in one page). */
  list(cursor: string | undefined): Promise<{ items: AdminRole[]; nextCursor: string | null }>;
  one(id: string): Promise<AdminRole>;
  /** Organization roles: a role may make its holders their organization's admins (managesOrganization). */
  managesOrganization?: true;
}

/** Whether a role of a kind that can manage its organization does (an organization role's flag). */
const manages = (role: AdminRole) => (role as Partial<AdminOrganizationRole>).managesOrganization === true;

/**
 * A page of roles of one kind: the list with their permissions by API, a form to make one, a
 * role's edit form (#/VIEW/ID), delete after a confirmation.
 */
function roleView(kind: RoleKind) {
  const { path, view, words } = kind;
  return async (context: ViewContext): Promise<void> => {
    const { root } = context;
    const line = statusLine();
    const [apis, editing] = await Promise.all([everyApi(), context.param ? kind.one(context.param) : undefined]);
    const row = (role: AdminRole) => [
      kind.managesOrganization && manages(role)
        ? h('span', {}, h('a', { href: `#/${view}/${encodeURIComponent(role.id)}` }, role.name), ` (${M.orgRoleAdmin.badge})`)
        : h('a', { href: `#/${view}/${encodeURIComponent(role.id)}` }, role.name),
      grantsByApi(role.permissions, apis),
      canAct(context)
        ? h(
            'button',
            {
              type: 'button',
              class: 'danger',
              onclick: async () => {
                if (!(await confirmAction(words.confirmDelete(role.name)))) return;
                try {
                  await api('DELETE', `${path}/${encodeURIComponent(role.id)}`);
                  location.hash = `#/${view}`;
                  context.refresh();
                } catch (error) {
                  line.say(M.failed((error as Error).message), true);
                }
              },
            },
            words.delete,
          )
        : null,
    ];
    const first = await kind.list(undefined);
    const form = (role?: AdminRole) =>
      roleForm({
        path,
        words,
        apis,
        line,
        context,
        ...(kind.managesOrganization ? { managesOrganization: true } : {}),
        ...(role ? { editing: role } : {}),
      });
    replace(
      root,
      h('h1', {}, words.heading),
      line.element,
      first.items.length === 0
        ? h('p', {}, words.noneYet)
        : await pagedTable(
            words.heading,
            [words.colName, words.colPermissions, ''],
            async (cursor) => (cursor ? kind.list(cursor) : first),
            row,
            (message) => line.say(M.failed(message), true),
          ),
      editing && canAct(context) ? form(editing) : null,
      canAct(context) ? form() : null,
    );
  };
}

/** Roles (docs/authorization.md): what users hold. */
export const rolesView = roleView({
  path: '/roles',
  view: 'roles',
  words: M.roles,
  list: async (cursor) => {
    const page = await api<AdminRoleList>('GET', `/roles${query({ limit: PAGE_SIZE, cursor })}`);
    return { items: page.roles, nextCursor: page.nextCursor };
  },
  one: (id) => api<AdminRole>('GET', `/roles/${encodeURIComponent(id)}`),
});

/** Every organization role: the admin API answers the whole template at once (a service keeps a handful). */
export async function everyOrganizationRole(): Promise<AdminOrganizationRole[]> {
  return (await api<AdminOrganizationRoleList>('GET', '/organization-roles')).roles;
}

/** Organization roles (docs/organizations.md): one template, the same in every organization, held by members per organization. */
export const organizationRolesView = roleView({
  path: '/organization-roles',
  view: 'orgRoles',
  words: M.orgRoles,
  list: async () => ({ items: await everyOrganizationRole(), nextCursor: null }),
  managesOrganization: true,
  one: async (id) => {
    const role = (await everyOrganizationRole()).find((item) => item.id === id);
    if (!role) throw new Error(M.orgRoles.notFound(id));
    return role;
  },
});

/** Makes a role, or with `editing` changes its name and the permissions it grants (the whole set sent at once). */
function roleForm({
  path,
  words,
  apis,
  line,
  context,
  editing,
  managesOrganization,
}: {
  path: string;
  words: RoleWords;
  apis: AdminApi[];
  line: ReturnType<typeof statusLine>;
  context: ViewContext;
  editing?: AdminRole;
  /** The form offers the organization role's "manages its organization". */
  managesOrganization?: true;
}): HTMLElement {
  const name = h('input', { type: 'text', name: 'name', required: true, autocomplete: 'off', value: editing?.name });
  const picker = grantPicker(apis, editing?.permissions);
  const admin = managesOrganization
    ? h('input', { type: 'checkbox', name: 'managesOrganization', checked: editing ? manages(editing) : false })
    : undefined;
  const body = () => ({ name: name.value.trim(), permissions: picker.grants(), ...(admin ? { managesOrganization: admin.checked } : {}) });
  return h(
    'form',
    {
      onsubmit: async (event: Event) => {
        event.preventDefault();
        try {
          if (editing) await api('PATCH', `${path}/${encodeURIComponent(editing.id)}`, body());
          else await api('POST', path, body());
          line.say(M.done);
          context.refresh();
        } catch (error) {
          line.say(M.failed((error as Error).message), true);
        }
      },
    },
    h('h2', {}, editing ? words.editing(editing.name) : words.create),
    field(words.name, name),
    admin ? h('p', {}, h('label', {}, admin, ' ', M.orgRoleAdmin.manages)) : null,
    picker.element,
    h('button', { type: 'submit' }, editing ? M.save : words.create),
  );
}
