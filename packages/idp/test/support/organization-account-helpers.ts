/** Shared set-up of the account center's organization tests (account-center/organization-routes.ts). */
import type { TestService } from './helpers.js';

export interface Session {
  session: string;
  csrfToken: string;
}

/** A form the organization pages post (repeated fields such as `roles` as pairs), with `headers` to attack it. */
export function orgPost(
  service: TestService,
  who: Session,
  path: string,
  fields: [string, string][] = [],
  headers: Record<string, string | undefined> = {},
  /** null: no token at all. */
  csrf: string | null = who.csrfToken,
) {
  const sent: Record<string, string> = {
    cookie: `service_account=${who.session}`,
    origin: service.url,
    'sec-fetch-site': 'same-origin',
    'content-type': 'application/x-www-form-urlencoded',
  };
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) delete sent[name];
    else sent[name] = value;
  }
  const body = new URLSearchParams(csrf === null ? fields : [['csrf', csrf], ...fields]);
  return fetch(`${service.url}/account/organizations${path}`, { method: 'POST', headers: sent, body, redirect: 'manual' });
}

/** A page of the organizations (GET), as the signed-in browser asks for it. */
export const orgGet = (service: TestService, who: Session, path: string) =>
  fetch(`${service.url}/account/organizations${path}`, { headers: { cookie: `service_account=${who.session}` }, redirect: 'manual' });

/** The roles `admin` (manages organizations) and `member` (does not): the template self-service organizations use. */
export async function organizationRoles(service: TestService) {
  const roles = await service.ctx.organizations.roles();
  if (!roles.some((r) => r.name === 'admin'))
    await service.ctx.organizations.createRole({ name: 'admin', managesOrganization: true }, 'test');
  if (!roles.some((r) => r.name === 'member')) await service.ctx.organizations.createRole({ name: 'member' }, 'test');
}
