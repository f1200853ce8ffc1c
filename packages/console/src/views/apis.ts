import type { AdminApi, AdminApiList } from 'service-protocol';
import { api, query } from '../api.js';
import { confirmAction, field, h, PAGE_SIZE, pagedTable, replace, statusLine } from '../dom.js';
import { M } from '../messages.js';
import { canAct, type ViewContext } from './context.js';

/** A textarea's lines, trimmed, empty ones dropped: the permissions as the API takes them (it checks each). */
const lines = (area: HTMLTextAreaElement) =>
  area.value
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);

/** An API's permissions as text, or a dash-like note when it defines none. */
export const permissionsText = (permissions: string[]) => (permissions.length === 0 ? M.apis.noPermissions : permissions.join(', '));

/** APIs (docs/authorization.md): the list, a registration form, an API's edit form (name and permissions) and delete. */
export async function apisView(context: ViewContext): Promise<void> {
  const { root } = context;
  const line = statusLine();
  const editing = context.param ? await api<AdminApi>('GET', `/apis/${encodeURIComponent(context.param)}`) : undefined;
  const load = async (cursor: string | undefined) => {
    const page = await api<AdminApiList>('GET', `/apis${query({ limit: PAGE_SIZE, cursor })}`);
    return { items: page.apis, nextCursor: page.nextCursor };
  };
  const row = (item: AdminApi) => [
    h('a', { href: `#/apis/${encodeURIComponent(item.id)}` }, item.name),
    h('code', {}, item.identifier),
    document.createTextNode(permissionsText(item.permissions)),
    canAct(context)
      ? h(
          'button',
          {
            type: 'button',
            class: 'danger',
            onclick: async () => {
              if (!(await confirmAction(M.apis.confirmDelete(item.name)))) return;
              try {
                await api('DELETE', `/apis/${encodeURIComponent(item.id)}`);
                location.hash = '#/apis';
                context.refresh();
              } catch (error) {
                line.say(M.failed((error as Error).message), true);
              }
            },
          },
          M.apis.delete,
        )
      : null,
  ];
  const first = await load(undefined);
  replace(
    root,
    h('h1', {}, M.apis.heading),
    line.element,
    first.items.length === 0
      ? h('p', {}, M.apis.noneYet)
      : await pagedTable(
          M.apis.heading,
          [M.apis.colName, M.apis.colIdentifier, M.apis.colPermissions, ''],
          async (cursor) => (cursor ? load(cursor) : first),
          row,
          (message) => line.say(M.failed(message), true),
        ),
    editing && canAct(context) ? editForm(editing, line, context) : null,
    canAct(context) ? createForm(line, context) : null,
  );
}

function createForm(line: ReturnType<typeof statusLine>, context: ViewContext): HTMLElement {
  const identifier = h('input', { type: 'text', name: 'identifier', required: true, autocomplete: 'off', spellcheck: 'false' });
  const name = h('input', { type: 'text', name: 'name', required: true });
  const permissions = h('textarea', { name: 'permissions', rows: '3', spellcheck: 'false' });
  return h(
    'form',
    {
      onsubmit: async (event: Event) => {
        event.preventDefault();
        try {
          await api<AdminApi>('POST', '/apis', { identifier: identifier.value.trim(), name: name.value, permissions: lines(permissions) });
          context.refresh();
        } catch (error) {
          line.say(M.failed((error as Error).message), true);
        }
      },
    },
    h('h2', {}, M.apis.create),
    field(M.apis.identifier, identifier),
    field(M.apis.name, name),
    field(M.apis.permissions, permissions),
    h('button', { type: 'submit' }, M.apis.create),
  );
}

/** The name and the whole list of permissions, sent at once: a permission taken off leaves every role that granted it. */
function editForm(item: AdminApi, line: ReturnType<typeof statusLine>, context: ViewContext): HTMLElement {
  const name = h('input', { type: 'text', name: 'name', required: true, value: item.name });
  const permissions = h('textarea', { name: 'permissions', rows: '3', spellcheck: 'false' });
  permissions.value = item.permissions.join('\n');
  const rolesInToken = h('input', { type: 'checkbox', name: 'rolesInToken', checked: item.rolesInToken });
  const introspector = h('input', {
    type: 'text',
    name: 'resourceServerClientId',
    value: item.resourceServerClientId ?? '',
    autocomplete: 'off',
    spellcheck: 'false',
  });
  return h(
    'form',
    {
      onsubmit: async (event: Event) => {
        event.preventDefault();
        try {
          await api('PATCH', `/apis/${encodeURIComponent(item.id)}`, {
            name: name.value,
            permissions: lines(permissions),
            rolesInToken: rolesInToken.checked,
            resourceServerClientId: introspector.value.trim() || null,
          });
          line.say(M.done);
          context.refresh();
        } catch (error) {
          line.say(M.failed((error as Error).message), true);
        }
      },
    },
    h('h2', {}, M.apis.editing(item.name)),
    h('p', {}, h('code', {}, item.identifier), ' ', M.apis.identifierFixed),
    field(M.apis.name, name),
    field(M.apis.permissions, permissions),
    field(M.apis.rolesInToken, rolesInToken),
    field(M.apis.resourceServerClientId, introspector),
    h('button', { type: 'submit' }, M.save),
  );
}
