import type { AdminGrant, AdminRole } from 'service-protocol';
import { apiService, listOf } from './apis.js';
import { type Command, UsageError, type Values } from './command.js';
import { cursor, table } from './format.js';

/**
 * --grant IDENTIFIER=P,P: one API's permissions a role grants. The last `=` separates them: a
 * permission holds no `=` or `,` (apis/service.ts), and an identifier may.
 */
export function grantsOf(raw: readonly string[]): AdminGrant[] {
  return raw.flatMap((grant) => {
    const at = grant.lastIndexOf('=');
    const api = grant.slice(0, Math.max(at, 0));
    const permissions = listOf(grant.slice(at + 1));
    if (at <= 0 || permissions.length === 0) throw new UsageError(`--grant is IDENTIFIER=PERMISSION[,PERMISSION…], not "${grant}"`);
    return permissions.map((permission) => ({ api, permission }));
  });
}

/** A role's grants as --grant writes them: `https://api.example.com=read:notes,write:notes`, one per API. */
export function grantsText(role: AdminRole): string[] {
  const byApi = new Map<string, string[]>();
  for (const { api, permission } of role.permissions) byApi.set(api, [...(byApi.get(api) ?? []), permission]);
  return [...byApi].map(([api, permissions]) => `${api}=${permissions.join(',')}`);
}

const print = (role: AdminRole, values: Values, done: string) =>
  values.json
    ? `${JSON.stringify(role)}\n`
    : `Role ${role.name} (${role.id}) ${done}: ${role.permissions.length > 0 ? grantsText(role).join(' ') : 'no permissions'}.\n`;

const GRANT_USAGE = `      --grant IDENTIFIER=P,P (repeatable, one per API) names permissions of registered APIs
      (service-idp apis list): --grant https://api.example.com=read:notes,write:notes.`;

const create: Command = {
  name: 'roles create',
  usage: `  service-idp roles create NAME [--grant IDENTIFIER=P,P]... [--json]
      Make a role: a named set of permissions of one or more APIs.
${GRANT_USAGE}
`,
  flags: ['grant', 'json'],
  async run({ operands: [name], values, config }, io) {
    if (!name) throw new UsageError('usage: service-idp roles create NAME [--grant IDENTIFIER=P,P]...');
    const permissions = grantsOf(values.grant ?? []);
    const { withData } = await import('./open.js');
    const role = await withData(config, async (data) => (await apiService(data)).createRole({ name, permissions }, 'cli'));
    io.out(print(role, values, 'created'));
    return 0;
  },
};

const list: Command = {
  name: 'roles list',
  usage: `  service-idp roles list [--limit 50] [--cursor CURSOR] [--json]
      The roles with the permissions they grant, oldest first; a full page ends with the --cursor of the next one.
`,
  flags: ['limit', 'cursor', 'json'],
  paged: true,
  async run({ values, limit, config }, io) {
    const { withData } = await import('./open.js');
    const page = await withData(config, async (data) => (await apiService(data)).pageRoles({ ...cursor(values.cursor), limit }));
    if (values.json)
      io.out(`${JSON.stringify({ roles: page.items, nextCursor: page.nextCursor })}\n`); // GET /admin/v1/roles's shape
    else if (page.items.length === 0) io.out('No roles yet: service-idp roles create NAME --grant IDENTIFIER=P,P\n');
    else
      io.out(
        `${table(
          ['ROLE ID', 'NAME', 'PERMISSIONS'],
          page.items.map((role) => [role.id, role.name, grantsText(role).join(' ') || '-']),
        )}\n${page.nextCursor ? `More: --cursor ${page.nextCursor}\n` : ''}`,
      );
    return 0;
  },
};

const update: Command = {
  name: 'roles update',
  usage: `  service-idp roles update NAME|ID [--name NEW_NAME] [--grant IDENTIFIER=P,P]... [--json]
      Rename a role, or replace the permissions it grants with the --grant ones.
`,
  flags: ['name', 'grant', 'json'],
  async run({ operands: [key], values, config }, io) {
    if (!key || (values.name === undefined && values.grant === undefined))
      throw new UsageError('usage: service-idp roles update NAME|ID [--name NEW_NAME] [--grant IDENTIFIER=P,P]...');
    const change = {
      ...(values.name !== undefined ? { name: values.name } : {}),
      ...(values.grant !== undefined ? { permissions: grantsOf(values.grant) } : {}),
    };
    const { withData } = await import('./open.js');
    const role = await withData(config, async (data) => (await apiService(data)).updateRole(key, change, 'cli'));
    io.out(print(role, values, 'updated'));
    return 0;
  },
};

const remove: Command = {
  name: 'roles delete',
  usage: `  service-idp roles delete NAME|ID
      Remove a role: every user holding it loses it.
`,
  flags: [],
  async run({ operands: [key], config }, io) {
    if (!key) throw new UsageError('usage: service-idp roles delete NAME|ID');
    const { withData } = await import('./open.js');
    await withData(config, async (data) => (await apiService(data)).deleteRole(key, 'cli'));
    io.out(`Role ${key} deleted; no user holds it any more.\n`);
    return 0;
  },
};

/** A `users roles` command: the user (ID or address, resolved by the users service) and the role, named before anything opens. */
function onUserRole(name: 'add' | 'remove', usage: string): Command {
  return {
    name: `users roles ${name}`,
    usage,
    flags: [],
    async run({ operands: [subject, role], config }, io) {
      if (!subject || !role) throw new UsageError(`usage: service-idp users roles ${name} ID|EMAIL ROLE`);
      const { withContext } = await import('./open.js');
      await withContext(config, async (ctx) => {
        const user = await ctx.users.find(subject);
        if (name === 'add') {
          const given = await ctx.apis.assignRole(user.id, role, 'cli');
          io.out(`${user.email} holds the role ${given.name}.\n`);
        } else {
          await ctx.apis.unassignRole(user.id, role, 'cli');
          io.out(`${user.email} no longer holds the role ${role}.\n`);
        }
      });
      return 0;
    },
  };
}

const addUserRole = onUserRole(
  'add',
  `  service-idp users roles add ID|EMAIL ROLE
  service-idp users roles remove ID|EMAIL ROLE
      Give a user a role (by name or id), or take it away; their next tokens carry what it grants.
`,
);
const removeUserRole = onUserRole('remove', '');

const listUserRoles: Command = {
  name: 'users roles list',
  usage: `  service-idp users roles list ID|EMAIL [--json]
      The roles a user holds, with the permissions each grants.
`,
  flags: ['json'],
  async run({ operands: [subject], values, config }, io) {
    if (!subject) throw new UsageError('usage: service-idp users roles list ID|EMAIL');
    const { withContext } = await import('./open.js');
    const roles = await withContext(config, async (ctx) => ctx.apis.rolesOfUser((await ctx.users.find(subject)).id));
    if (values.json)
      io.out(`${JSON.stringify({ roles })}\n`); // GET /admin/v1/users/{id}/roles's shape
    else if (roles.length === 0) io.out(`No roles: service-idp users roles add ${subject} ROLE\n`);
    else
      io.out(
        `${table(
          ['ROLE ID', 'NAME', 'PERMISSIONS'],
          roles.map((role) => [role.id, role.name, grantsText(role).join(' ') || '-']),
        )}\n`,
      );
    return 0;
  },
};

export const roles: Command[] = [create, list, update, remove];
export const userRoles: Command[] = [addUserRole, removeUserRole, listUserRoles];
