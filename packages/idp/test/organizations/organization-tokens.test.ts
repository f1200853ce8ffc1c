/**
 * Organization-scoped tokens (organizations/, token/): an app asks for an organization at
 * /authorize (`organization`), and its member's ID token and access token name it, with their
 * organization roles and the permissions those grant on the API; a refresh may switch to another
 * organization of the user's. Runs on SQLite and, with SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { NOTES } from '../support/api-helpers.js';
import type { TestService } from '../support/helpers.js';
import { uniqueEmail } from '../support/helpers.js';
import { credentials, type RelyingParty, refresh, signIn } from '../support/oidc-token-helpers.js';
import { claimsOf, memberOf, startWithOrganizations } from './organization-helpers.js';

describe('organization-scoped tokens', () => {
  let service: TestService;
  let rp: RelyingParty;
  before(async () => {
    ({ service, rp } = await startWithOrganizations());
  });
  after(() => service.close());

  it("the member's ID token names the organization and their roles; the access token carries what those roles grant on the API", async () => {
    const email = uniqueEmail('member');
    const { orgId } = await memberOf(service, email, 'Acme', ['editor']);
    const { tokens } = await signIn(service, rp, email, {
      scope: 'openid email read:notes write:notes',
      extra: { organization: orgId, resource: NOTES },
    });
    const id = claimsOf(tokens.id_token as string);
    assert.deepEqual([id.org_id, id.org_name, id.org_roles], [orgId, 'Acme', ['editor']]);
    const access = claimsOf(tokens.access_token as string);
    assert.deepEqual([access.aud, access.org_id, access.org_roles, access.scope], [NOTES, orgId, ['editor'], 'read:notes write:notes']);
  });

  it('a sign-in that asks for no organization names none', async () => {
    const email = uniqueEmail('plain');
    await memberOf(service, email, 'Acme', ['editor']);
    const { tokens } = await signIn(service, rp, email, { scope: 'openid email read:notes', extra: { resource: NOTES } });
    assert.equal(claimsOf(tokens.id_token as string).org_id, undefined);
    // Organization roles hold inside their organization only: no permission without it.
    assert.equal(claimsOf(tokens.access_token as string).scope, '');
  });

  it('a refresh switches to another organization of the user’s, with that membership’s roles', async () => {
    const email = uniqueEmail('switch');
    const { userId, orgId: acme } = await memberOf(service, email, 'Acme', ['viewer']);
    const globex = await service.ctx.organizations.create({ name: 'Globex' }, 'test');
    await service.ctx.organizations.addMember(globex.id, userId, ['editor'], 'test');
    const { tokens } = await signIn(service, rp, email, {
      scope: 'openid email offline_access read:notes write:notes',
      extra: { organization: acme, resource: NOTES },
    });
    assert.equal(claimsOf(tokens.access_token as string).scope, 'read:notes');
    const switched = await refresh(service, { refresh_token: tokens.refresh_token as string, organization: globex.id, ...credentials(rp) });
    assert.equal(switched.status, 200, JSON.stringify(switched.body));
    const access = claimsOf(switched.body.access_token);
    assert.deepEqual([access.org_id, access.org_roles, access.scope], [globex.id, ['editor'], 'read:notes write:notes']);
    // Without the parameter, the sign-in's organization again.
    const back = await refresh(service, { refresh_token: switched.body.refresh_token, ...credentials(rp) });
    assert.equal(claimsOf(back.body.access_token).org_id, acme);
  });
});
