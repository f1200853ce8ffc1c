/** Shared set-up of the organization tests: a service with an API, organization roles and a relying party; members. */
import { NOTES } from '../support/api-helpers.js';
import { startTestService, type TestService, type TestServiceOptions } from '../support/helpers.js';
import type { CookieJar } from '../support/oidc-helpers.js';
import { relyingParty } from '../support/oidc-token-helpers.js';

export const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1] as string, 'base64url').toString());

/** A service with the Notes API, organization roles `editor` (read and write) and `viewer` (read), and a relying party. */
export async function startWithOrganizations(options: TestServiceOptions = {}) {
  const service = await startTestService(options);
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

/** The organization picker at `location` (/signin/organization?request=…) as this browser sees it: status, page, its form's token. */
export async function pickerPage(service: TestService, jar: CookieJar, location: string) {
  const response = await fetch(new URL(location, service.url), { headers: { cookie: jar.header() } });
  const html = await response.text();
  return {
    status: response.status,
    html,
    headers: response.headers,
    requestId: new URL(location, service.url).searchParams.get('request') ?? '',
    csrf: html.match(/name="csrf" value="([^"]+)"/)?.[1] ?? '',
  };
}

/** Posts the picker's form as the page does (our origin, this browser's cookies): the status and where it leads. */
export async function choose(
  service: TestService,
  jar: CookieJar,
  form: { request: string; csrf: string; organization: string },
  origin = service.url,
) {
  const response = await fetch(`${service.url}/signin/organization`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin, cookie: jar.header() },
    body: new URLSearchParams(form),
  });
  jar.store(response);
  return { status: response.status, location: response.headers.get('location'), body: await response.text() };
}
