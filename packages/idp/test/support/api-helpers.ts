/** Registered APIs and roles for the access token tests (issue 37). */
import { startTestService, type TestService } from './helpers.js';
import { relyingParty } from './oidc-token-helpers.js';

export const NOTES = 'https://notes.example.com';
export const BILLING = 'urn:acme:billing';

/** A service with the Notes and Billing APIs, a `reader` role (read:notes) and a relying party. */
export async function startWithApis(now: () => number) {
  const service = await startTestService({ now });
  await service.ctx.apis.createApi({ identifier: NOTES, name: 'Notes', permissions: ['read:notes', 'write:notes'] }, 'test');
  await service.ctx.apis.createApi({ identifier: BILLING, name: 'Billing', permissions: ['read:invoices'] }, 'test');
  await service.ctx.apis.createRole({ name: 'reader', permissions: [{ api: NOTES, permission: 'read:notes' }] }, 'test');
  await service.ctx.apis.createRole({ name: 'accountant', permissions: [{ api: BILLING, permission: 'read:invoices' }] }, 'test');
  const rp = await relyingParty(service);
  return { service, rp };
}

/** A user with these roles: signed in once so the user exists, then given the roles. */
export async function userWithRoles(service: TestService, email: string, roles: string[]) {
  const user = await service.ctx.enabledUsers.findOrCreate(email, Date.now());
  for (const role of roles) await service.ctx.apis.assignRole(user?.id ?? '', role, 'test');
  return user?.id ?? '';
}

/** A machine client (client_credentials) granted `grants` (API identifier → permissions), with its keys for private_key_jwt if given. */
export async function machineClient(
  service: TestService,
  grants: Record<string, string[]>,
  keys: { jwks?: { keys: object[] }; jwksUri?: string } = {},
) {
  const made = await service.ctx.clients.create({ name: 'Nightly job', origins: [], machine: true, ...keys });
  await service.ctx.apis.grantClient(
    made.clientId,
    Object.entries(grants).flatMap(([api, permissions]) => permissions.map((permission) => ({ api, permission }))),
    'test',
  );
  return { clientId: made.clientId, secretKey: made.secretKey ?? '' };
}

/** POST /oauth/token with grant_type=client_credentials and these fields (a list value: the field repeated). */
export async function clientCredentials(
  service: TestService,
  fields: Record<string, string | string[]>,
  headers: Record<string, string> = {},
) {
  const body = new URLSearchParams({ grant_type: 'client_credentials' });
  for (const [name, value] of Object.entries(fields)) for (const one of [value].flat()) body.append(name, one);
  const response = await fetch(service.tokenUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body,
  });
  return { status: response.status, body: (await response.json()) as Record<string, string> };
}
