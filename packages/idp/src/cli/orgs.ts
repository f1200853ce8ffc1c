import type { AdminOrganization, AdminOrganizationMember, AdminOrganizationRole } from 'service-protocol';
import { listOf } from './apis.js';
import { type Command, UsageError, type Values } from './command.js';
import { cursor, table } from './format.js';
import { grantsOf, grantsText } from './roles.js';

const yesNo = (raw: string | undefined, flag: string): boolean | undefined => {
  if (raw === undefined) return undefined;
  if (raw === 'yes' || raw === 'no') return raw === 'yes';
  throw new UsageError(`--${flag} is yes or no, not "${raw}"`);
};
const printOrganization = (org: AdminOrganization, values: Values, done: string) =>
  values.json ? `${JSON.stringify(org)}\n` : `Organization ${org.name} (${org.id}) ${done}.\n`;
const printMember = (member: AdminOrganizationMember, values: Values, done: string) =>
  values.json
    ? `${JSON.stringify(member)}\n`
    : `${member.email} ${done} ${member.organizationId}${member.roles.length > 0 ? ` as ${member.roles.join(', ')}` : ''}.\n`;
const printRole = (role: AdminOrganizationRole, values: Values, done: string) =>
  values.json
    ? `${JSON.stringify(role)}\n`
    : `Organization role ${role.name} (${role.id}) ${done}: ${role.permissions.length > 0 ? grantsText({ ...role }).join(' ') : 'no permissions'}` +
      `${role.managesOrganization ? '; its members manage their organization' : ''}.\n`;

type Ctx = import('../context.js').ServiceContext;
async function withService<T>(config: Parameters<Command['run']>[0]['config'], use: (ctx: Ctx) => Promise<T>): Promise<T> {
  const { withContext } = await import('./open.js');
  return withContext(config, use);
}

const create: Command = {
  name: 'orgs create',
  usage: `  service-idp orgs create --name NAME [--external-id ID] [--mfa-required yes|no] [--json]
      Make an organization (a customer company whose people sign in).
`,
  flags: ['name', 'external-id', 'mfa-required', 'json'],
  async run({ values, config }, io) {
    if (!values.name) throw new UsageError('usage: service-idp orgs create --name NAME');
    const mfaRequired = yesNo(values['mfa-required'], 'mfa-required');
    const org = await withService(config, (ctx) =>
      ctx.organizations.create(
        { name: values.name as string, externalId: values['external-id'] ?? null, ...(mfaRequired !== undefined ? { mfaRequired } : {}) },
        'cli',
      ),
    );
    io.out(printOrganization(org, values, 'created'));
    return 0;
  },
};

const list: Command = {
  name: 'orgs list',
  usage: `  service-idp orgs list [--limit 50] [--cursor CURSOR] [--json]
      The organizations, oldest first.
`,
  flags: ['limit', 'cursor', 'json'],
  paged: true,
  async run({ values, limit, config }, io) {
    const page = await withService(config, (ctx) => ctx.organizations.page({ ...cursor(values.cursor), limit }));
    if (values.json) io.out(`${JSON.stringify({ organizations: page.items, nextCursor: page.nextCursor })}\n`);
    else if (page.items.length === 0) io.out('No organizations yet: service-idp orgs create --name NAME\n');
    else
      io.out(
        `${table(
          ['ORGANIZATION ID', 'NAME', 'MFA'],
          page.items.map((org) => [org.id, org.name, org.mfaRequired ? 'required' : '-']),
        )}\n${page.nextCursor ? `More: --cursor ${page.nextCursor}\n` : ''}`,
      );
    return 0;
  },
};

const update: Command = {
  name: 'orgs update',
  usage: `  service-idp orgs update ORG_ID [--name NAME] [--external-id ID] [--mfa-required yes|no] [--json]
      Rename an organization, or change its external id or whether its members need a second factor.
`,
  flags: ['name', 'external-id', 'mfa-required', 'json'],
  async run({ operands: [id], values, config }, io) {
    const mfaRequired = yesNo(values['mfa-required'], 'mfa-required');
    if (!id || (values.name === undefined && values['external-id'] === undefined && mfaRequired === undefined))
      throw new UsageError('usage: service-idp orgs update ORG_ID [--name NAME] [--external-id ID] [--mfa-required yes|no]');
    const org = await withService(config, (ctx) =>
      ctx.organizations.update(
        id,
        {
          ...(values.name !== undefined ? { name: values.name } : {}),
          ...(values['external-id'] !== undefined ? { externalId: values['external-id'] } : {}),
          ...(mfaRequired !== undefined ? { mfaRequired } : {}),
        },
        'cli',
      ),
    );
    io.out(printOrganization(org, values, 'updated'));
    return 0;
  },
};

const remove: Command = {
  name: 'orgs delete',
  usage: `  service-idp orgs delete ORG_ID
      Delete an organization with its members' memberships, their roles and its domains.
`,
  flags: [],
  async run({ operands: [id], config }, io) {
    if (!id) throw new UsageError('usage: service-idp orgs delete ORG_ID');
    await withService(config, (ctx) => ctx.organizations.delete(id, 'cli'));
    io.out(`Organization ${id} deleted.\n`);
    return 0;
  },
};

const addMember: Command = {
  name: 'orgs members add',
  usage: `  service-idp orgs members add ORG_ID USER_ID|EMAIL [--role ROLE[,ROLE]] [--external-id ID] [--json]
      Add a user to an organization, with organization roles (service-idp orgs roles list).
`,
  flags: ['role', 'external-id', 'json'],
  async run({ operands: [org, subject], values, config }, io) {
    if (!org || !subject) throw new UsageError('usage: service-idp orgs members add ORG_ID USER_ID|EMAIL [--role ROLE]');
    const roles = values.role ? listOf(values.role) : [];
    const member = await withService(config, async (ctx) =>
      ctx.organizations.addMember(org, (await ctx.users.find(subject)).id, roles, 'cli', values['external-id']),
    );
    io.out(printMember(member, values, 'joined'));
    return 0;
  },
};

const memberRoles: Command = {
  name: 'orgs members roles',
  usage: `  service-idp orgs members roles ORG_ID USER_ID|EMAIL --role ROLE[,ROLE]|none [--json]
      Replace a member's organization roles.
`,
  flags: ['role', 'json'],
  async run({ operands: [org, subject], values, config }, io) {
    if (!org || !subject || values.role === undefined)
      throw new UsageError('usage: service-idp orgs members roles ORG_ID USER_ID|EMAIL --role ROLE[,ROLE]|none');
    const roles = values.role === 'none' ? [] : listOf(values.role);
    const member = await withService(config, async (ctx) =>
      ctx.organizations.setMemberRoles(org, (await ctx.users.find(subject)).id, roles, 'cli'),
    );
    io.out(printMember(member, values, 'now holds their roles in'));
    return 0;
  },
};

const removeMember: Command = {
  name: 'orgs members remove',
  usage: `  service-idp orgs members remove ORG_ID USER_ID|EMAIL
      Take a user out of an organization: their next tokens for it are refused.
`,
  flags: [],
  async run({ operands: [org, subject], config }, io) {
    if (!org || !subject) throw new UsageError('usage: service-idp orgs members remove ORG_ID USER_ID|EMAIL');
    await withService(config, async (ctx) => ctx.organizations.removeMember(org, (await ctx.users.find(subject)).id, 'cli'));
    io.out(`${subject} removed from ${org}.\n`);
    return 0;
  },
};

const listMembers: Command = {
  name: 'orgs members list',
  usage: `  service-idp orgs members list ORG_ID [--json]
      An organization's members and their organization roles.
`,
  flags: ['json'],
  async run({ operands: [org], values, config }, io) {
    if (!org) throw new UsageError('usage: service-idp orgs members list ORG_ID');
    const members = await withService(config, (ctx) => ctx.organizations.members(org));
    if (values.json) io.out(`${JSON.stringify({ members })}\n`);
    else if (members.length === 0) io.out(`No members yet: service-idp orgs members add ${org} EMAIL --role ROLE\n`);
    else
      io.out(
        `${table(
          ['USER ID', 'EMAIL', 'ROLES'],
          members.map((m) => [m.userId, m.email, m.roles.join(',') || '-']),
        )}\n`,
      );
    return 0;
  },
};

const GRANT_USAGE = `      --grant IDENTIFIER=P,P (repeatable, one per API) names permissions of registered APIs.`;
const MANAGES_USAGE = `      --manages-organization yes: a member holding it is that organization's admin (members, invitations)
      in the account center; only there, and in no other organization.`;

const createRole: Command = {
  name: 'orgs roles create',
  usage: `  service-idp orgs roles create NAME [--grant IDENTIFIER=P,P]... [--manages-organization yes|no] [--json]
      Make an organization role: every organization has it; a member holds it in one organization.
${GRANT_USAGE}
${MANAGES_USAGE}
`,
  flags: ['grant', 'manages-organization', 'json'],
  async run({ operands: [name], values, config }, io) {
    if (!name) throw new UsageError('usage: service-idp orgs roles create NAME [--grant IDENTIFIER=P,P]...');
    const permissions = grantsOf(values.grant ?? []);
    const managesOrganization = yesNo(values['manages-organization'], 'manages-organization') === true;
    const role = await withService(config, (ctx) => ctx.organizations.createRole({ name, permissions, managesOrganization }, 'cli'));
    io.out(printRole(role, values, 'created'));
    return 0;
  },
};

const updateRole: Command = {
  name: 'orgs roles update',
  usage: `  service-idp orgs roles update NAME|ID [--name NEW_NAME] [--grant IDENTIFIER=P,P]... [--manages-organization yes|no] [--json]
      Rename an organization role, replace what it grants (the --grant ones), or make it manage organizations.
${MANAGES_USAGE}
`,
  flags: ['name', 'grant', 'manages-organization', 'json'],
  async run({ operands: [key], values, config }, io) {
    const managesOrganization = yesNo(values['manages-organization'], 'manages-organization');
    if (!key || (values.name === undefined && values.grant === undefined && managesOrganization === undefined))
      throw new UsageError(
        'usage: service-idp orgs roles update NAME|ID [--name NEW_NAME] [--grant IDENTIFIER=P,P]... [--manages-organization yes|no]',
      );
    const change = {
      ...(values.name !== undefined ? { name: values.name } : {}),
      ...(values.grant !== undefined ? { permissions: grantsOf(values.grant) } : {}),
      ...(managesOrganization !== undefined ? { managesOrganization } : {}),
    };
    const role = await withService(config, (ctx) => ctx.organizations.updateRole(key, change, 'cli'));
    io.out(printRole(role, values, 'updated'));
    return 0;
  },
};

const listRoles: Command = {
  name: 'orgs roles list',
  usage: `  service-idp orgs roles list [--json]
      The organization roles and what each grants.
`,
  flags: ['json'],
  async run({ values, config }, io) {
    const roles = await withService(config, (ctx) => ctx.organizations.roles());
    if (values.json) io.out(`${JSON.stringify({ roles })}\n`);
    else if (roles.length === 0) io.out('No organization roles yet: service-idp orgs roles create NAME --grant IDENTIFIER=P,P\n');
    else
      io.out(
        `${table(
          ['ROLE ID', 'NAME', 'PERMISSIONS', 'MANAGES'],
          roles.map((r) => [r.id, r.name, grantsText({ ...r }).join(' ') || '-', r.managesOrganization ? 'yes' : 'no']),
        )}\n`,
      );
    return 0;
  },
};

const deleteRole: Command = {
  name: 'orgs roles delete',
  usage: `  service-idp orgs roles delete NAME|ID
      Delete an organization role: every member holding it, in every organization, loses it.
`,
  flags: [],
  async run({ operands: [key], config }, io) {
    if (!key) throw new UsageError('usage: service-idp orgs roles delete NAME|ID');
    await withService(config, (ctx) => ctx.organizations.deleteRole(key, 'cli'));
    io.out(`Organization role ${key} deleted.\n`);
    return 0;
  },
};

const invite: Command = {
  name: 'orgs invitations send',
  usage: `  service-idp orgs invitations send ORG_ID EMAIL [--role ROLE[,ROLE]] [--json]
      Mail an address a single-use link (72 hours) to join the organization with organization roles.
`,
  flags: ['role', 'json'],
  async run({ operands: [org, email], values, config }, io) {
    if (!org || !email) throw new UsageError('usage: service-idp orgs invitations send ORG_ID EMAIL [--role ROLE]');
    const made = await withService(config, (ctx) => ctx.invitations.invite(org, email, values.role ? listOf(values.role) : [], 'cli'));
    io.out(values.json ? `${JSON.stringify(made)}\n` : `Invitation ${made.id} mailed to ${made.email}.\n`);
    return 0;
  },
};

const listInvitations: Command = {
  name: 'orgs invitations list',
  usage: `  service-idp orgs invitations list ORG_ID [--json]
      An organization's invitations: pending, accepted, expired or revoked.
`,
  flags: ['json'],
  async run({ operands: [org], values, config }, io) {
    if (!org) throw new UsageError('usage: service-idp orgs invitations list ORG_ID');
    const invitations = await withService(config, (ctx) => ctx.invitations.list(org));
    if (values.json) io.out(`${JSON.stringify({ invitations })}\n`);
    else if (invitations.length === 0) io.out(`No invitations: service-idp orgs invitations send ${org} EMAIL\n`);
    else
      io.out(
        `${table(
          ['INVITATION ID', 'EMAIL', 'ROLES', 'STATE'],
          invitations.map((i) => [i.id, i.email, i.roles.join(',') || '-', i.state]),
        )}\n`,
      );
    return 0;
  },
};

const onInvitation = (word: 'resend' | 'revoke', what: string): Command => ({
  name: `orgs invitations ${word}`,
  usage: `  service-idp orgs invitations ${word} ORG_ID INVITATION_ID
      ${what}
`,
  flags: [],
  async run({ operands: [org, id], config }, io) {
    if (!org || !id) throw new UsageError(`usage: service-idp orgs invitations ${word} ORG_ID INVITATION_ID`);
    await withService(config, async (ctx) => {
      if (word === 'resend') await ctx.invitations.resend(org, id, 'cli');
      else await ctx.invitations.revoke(org, id, 'cli');
    });
    io.out(`Invitation ${id} ${word === 'resend' ? 'mailed again (the old link stops working)' : 'revoked'}.\n`);
    return 0;
  },
});

/** `service-idp orgs`: organizations, their members and organization roles (docs/organizations.md). */
export const orgs: readonly Command[] = [
  invite,
  listInvitations,
  onInvitation('resend', 'Mail a new link for a pending invitation; the old one stops working.'),
  onInvitation('revoke', 'Revoke a pending invitation: its link stops working.'),

  create,
  list,
  update,
  remove,
  addMember,
  memberRoles,
  removeMember,
  listMembers,
  createRole,
  updateRole,
  listRoles,
  deleteRole,
];
