/** Shared set-up of the organization tests: a service with an API, organization roles and a relying party; members. */
import { NOTES } from '../support/api-helpers.js';
import { startTestService, type TestService } from '../support/helpers.js';
import { relyingParty } from '../support/oidc-token-helpers.js';

export const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1] as string, 'base64url').toString());

/** A service with the Notes API, organization roles `editor` (read and write) and `viewer` (read), and a relying party. */
export async function startWithOrganizations() {
  const service = await startTestService();
  await service.ctx.apis.createApi({ identifier: NOTES, name: 'Notes', permissions: ['read:notes', 'write:notes'] }, 'test');
  await service.ctx.organizations.createRole(
    {
      name: 'editor',
      permissions: [
        { api: NOTES, permission: 'read:notes' },
        { api: NOTES, permission: 'write:notes' },
      ],
    },
    'test',
  );
  await service.ctx.organizations.createRole({ name: 'viewer', permissions: [{ api: NOTES, permission: 'read:notes' }] }, 'test');
  return { service, rp: await relyingParty(service) };
}

/** A user who is `role` in a new organization of `name`: the user's id and the organization's. */
export async function memberOf(service: TestService, email: string, name: string, roles: string[]) {
  const user = await service.ctx.enabledUsers.findOrCreate(email, Date.now());
  const org = await service.ctx.organizations.create({ name }, 'test');
  await service.ctx.organizations.addMember(org.id, user?.id as string, roles, 'test');
  return { userId: user?.id as string, orgId: org.id };
}
