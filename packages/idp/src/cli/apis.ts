import type { AdminApi } from 'service-protocol';
import { type Command, UsageError, type Values } from './command.js';
import { cursor, table } from './format.js';
import type { Data } from './open.js';

/** The APIs, roles and assignments (apis/service.ts), wired as context.ts wires them, with the audit log (and its webhooks). */
export async function apiService(data: Data) {
  const [{ createApis }, { createApiStore }, { eventLog }] = await Promise.all([
    import('../apis/service.js'),
    import('../apis/store.js'),
    import('./open.js'),
  ]);
  const { events } = await eventLog(data);
  return createApis({ store: createApiStore(data.db), events, now: data.now });
}

/** A comma-separated flag as a list (an empty value: none). */
export const listOf = (raw: string) =>
  raw
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

const shown = (api: AdminApi) =>
  `${api.identifier} (${api.name}, ${api.id}): ${api.permissions.length > 0 ? api.permissions.join(', ') : 'no permissions'}${
    api.resourceServerClientId ? `; introspected by ${api.resourceServerClientId}` : ''
  }`;

/** --roles-in-token yes|no as the boolean it sets; another value is a bad command line. */
function rolesInTokenOf(raw: string | undefined): boolean | undefined {
  if (raw === undefined) return undefined;
  if (raw !== 'yes' && raw !== 'no') throw new UsageError('--roles-in-token is yes or no');
  return raw === 'yes';
}

/** --introspection-client: a client id, or "" (on update) for none. */
const introspectionClientOf = (raw: string | undefined) => (raw === undefined ? undefined : raw === '' ? null : raw);

const print = (api: AdminApi, values: Values, done: string) => (values.json ? `${JSON.stringify(api)}\n` : `API ${done}: ${shown(api)}.\n`);

const create: Command = {
  name: 'apis create',
  usage: `  service-idp apis create --identifier URI --name NAME [--permissions P,P] [--introspection-client ID] [--roles-in-token yes|no] [--json]
      Register an API: URI (an absolute https URI or a urn, fixed once made) is the audience
      of its access tokens; --permissions the scope tokens it defines (read:notes,write:notes);
      --introspection-client the confidential client its resource server authenticates as,
      which may then introspect the API's tokens (RFC 7662). --roles-in-token yes: its access
      tokens also name the user's roles that grant any of its permissions (a roles claim).
`,
  flags: ['identifier', 'name', 'permissions', 'introspection-client', 'roles-in-token', 'json'],
  async run({ values, config }, io) {
    const { identifier, name } = values;
    if (!identifier || !name)
      throw new UsageError('usage: service-idp apis create --identifier URI --name NAME [--permissions P,P] [--introspection-client ID]');
    const { withData } = await import('./open.js');
    const permissions = listOf(values.permissions ?? '');
    const resourceServerClientId = introspectionClientOf(values['introspection-client']) ?? null;
    const rolesInToken = rolesInTokenOf(values['roles-in-token']) ?? false;
    const api = await withData(config, async (data) =>
      (await apiService(data)).createApi({ identifier, name, permissions, resourceServerClientId, rolesInToken }, 'cli'),
    );
    io.out(print(api, values, 'created'));
    return 0;
  },
};

const list: Command = {
  name: 'apis list',
  usage: `  service-idp apis list [--limit 50] [--cursor CURSOR] [--json]
      The APIs with their permissions, oldest first; a full page ends with the --cursor of the next one.
`,
  flags: ['limit', 'cursor', 'json'],
  paged: true,
  async run({ values, limit, config }, io) {
    const { withData } = await import('./open.js');
    const page = await withData(config, async (data) => (await apiService(data)).pageApis({ ...cursor(values.cursor), limit }));
    if (values.json)
      io.out(`${JSON.stringify({ apis: page.items, nextCursor: page.nextCursor })}\n`); // GET /admin/v1/apis's shape
    else if (page.items.length === 0) io.out('No APIs yet: service-idp apis create --identifier URI --name NAME --permissions P,P\n');
    else
      io.out(
        `${table(
          ['API ID', 'IDENTIFIER', 'NAME', 'PERMISSIONS'],
          page.items.map((api) => [api.id, api.identifier, api.name, api.permissions.join(',') || '-']),
        )}\n${page.nextCursor ? `More: --cursor ${page.nextCursor}\n` : ''}`,
      );
    return 0;
  },
};

const update: Command = {
  name: 'apis update',
  usage: `  service-idp apis update ID|IDENTIFIER [--name NAME] [--permissions P,P] [--introspection-client ID] [--roles-in-token yes|no] [--json]
      Rename an API, or replace its permissions (the identifier never changes): a permission
      left out is taken from every role that granted it. --introspection-client "" removes
      its resource server's client.
`,
  flags: ['name', 'permissions', 'introspection-client', 'roles-in-token', 'json'],
  async run({ operands: [key], values, config }, io) {
    const resourceServerClientId = introspectionClientOf(values['introspection-client']);
    const rolesInToken = rolesInTokenOf(values['roles-in-token']);
    if (
      !key ||
      (values.name === undefined && values.permissions === undefined && resourceServerClientId === undefined && rolesInToken === undefined)
    )
      throw new UsageError('usage: service-idp apis update ID|IDENTIFIER [--name NAME] [--permissions P,P] [--introspection-client ID]');
    const change = {
      ...(values.name !== undefined ? { name: values.name } : {}),
      ...(values.permissions !== undefined ? { permissions: listOf(values.permissions) } : {}),
      ...(resourceServerClientId !== undefined ? { resourceServerClientId } : {}),
      ...(rolesInToken !== undefined ? { rolesInToken } : {}),
    };
    const { withData } = await import('./open.js');
    const api = await withData(config, async (data) => (await apiService(data)).updateApi(key, change, 'cli'));
    io.out(print(api, values, 'updated'));
    return 0;
  },
};

const remove: Command = {
  name: 'apis delete',
  usage: `  service-idp apis delete ID|IDENTIFIER
      Remove an API: its permissions leave every role, so no token carries them again.
`,
  flags: [],
  async run({ operands: [key], config }, io) {
    if (!key) throw new UsageError('usage: service-idp apis delete ID|IDENTIFIER');
    const { withData } = await import('./open.js');
    await withData(config, async (data) => (await apiService(data)).deleteApi(key, 'cli'));
    io.out(`API ${key} deleted; its permissions left every role.\n`);
    return 0;
  },
};

export const apis: Command[] = [create, list, update, remove];
